import { Webhook } from "standardwebhooks";

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
  /** How long an "ok" answer takes (a slowish receiver keeps deliveries in flight). */
  let delayMs = 0;
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
      else if (delayMs > 0) await Bun.sleep(delayMs);
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
    delay: (ms: number) => void (delayMs = ms),
    port: server.port,
    stop: () => server.stop(true),
  };
}
