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

export { type Answer, type Received, receiver } from "./receiver";

/** Waits (up to `ms`) until `ready()` holds. */
export async function until(ready: () => boolean | Promise<boolean>, ms = 5000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!(await ready())) {
    if (Date.now() > deadline) return false;
    await Bun.sleep(10);
  }
  return true;
}
