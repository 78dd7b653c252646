import { Webhook } from "standardwebhooks";
import { type TestApp, type TestAppOptions, testApp } from "../helpers";

export const WEBHOOKS = "/api/v1/webhooks";

/** Test apps may send to a receiver on loopback over http: the operator's two settings, nothing else. */
export const RECEIVER_ENV = { SUITE_OUTBOUND_ALLOW: "127.0.0.1", SUITE_WEBHOOK_HTTP: "true" };

/** A test app whose webhook sender runs with short times (the receiver is on this machine). */
export function webhookApp(opts: TestAppOptions = {}): TestApp {
  return testApp({
    ...opts,
    env: { ...RECEIVER_ENV, ...opts.env },
    webhooks: { timeoutMs: 500, backoffMs: 50, maxBackoffMs: 200, pollMs: 20, ...opts.webhooks },
  });
}

export interface Received {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  event: { id: string; type: string; organization_id: string; actor: unknown; data: Record<string, unknown> };
  /** Which of the receiver's secrets verified it (by Webhook.verify, as a receiver would). */
  verifiedWith: string[];
}

export type Answer = "ok" | "fail" | "slow" | "gone";

/**
 * A webhook receiver on loopback: it verifies each delivery with the `standardwebhooks` package
 * against every secret it knows, records it, and answers as `answer` says (2xx, 500, too late, 410).
 */
export function receiver() {
  const received: Received[] = [];
  const secrets: string[] = [];
  let answer: Answer = "ok";
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const body = await req.text();
      const headers = Object.fromEntries(req.headers.entries());
      const verifiedWith = secrets.filter((s) => {
        try {
          new Webhook(s).verify(body, headers);
          return true;
        } catch {
          return false;
        }
      });
      received.push({
        id: headers["webhook-id"] ?? "",
        timestamp: headers["webhook-timestamp"] ?? "",
        signature: headers["webhook-signature"] ?? "",
        body,
        event: JSON.parse(body),
        verifiedWith,
      });
      if (answer === "slow") await Bun.sleep(1500);
      if (answer === "fail") return new Response("no", { status: 500 });
      if (answer === "gone") return new Response("gone", { status: 410 });
      return new Response(null, { status: 204 });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}/hook`,
    received,
    trust: (secret: string) => void secrets.push(secret),
    forget: (secret: string) => void secrets.splice(secrets.indexOf(secret), 1),
    answer: (a: Answer) => void (answer = a),
    stop: () => server.stop(true),
  };
}

/** Waits (up to `ms`) until `ready()` holds. */
export async function until(ready: () => boolean | Promise<boolean>, ms = 5000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!(await ready())) {
    if (Date.now() > deadline) return false;
    await Bun.sleep(10);
  }
  return true;
}
