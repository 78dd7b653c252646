import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { receiver as startReceiver } from "../webhooks/receiver";
import { startServer } from "../server";

/**
 * Issue 31: a server killed with SIGKILL while webhook deliveries are in flight loses none. After
 * the restart every event reaches the receiver (some twice, with the same webhook-id: at least
 * once), each signed, and every delivery row ends delivered. SQLite: the server's own file, read directly.
 */
const dir = mkdtempSync(join(tmpdir(), "suite-webhook-crash-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const EVENTS = 60;
// A short timeout, so that the killed server's leases (twice the timeout and 5 s) run out soon.
const ENV = { SUITE_OUTBOUND_ALLOW: "127.0.0.1", SUITE_WEBHOOK_HTTP: "true", SUITE_WEBHOOK_TIMEOUT: "1" };

test("SIGKILL with deliveries in flight: after the restart every event is delivered, none lost", async () => {
  // A slowish receiver (100 ms an answer), so that deliveries are under way when the kill comes.
  const receiver = startReceiver();
  receiver.delay(100);
  const got = receiver.received;
  const db = join(dir, "suite.db");
  let server = await startServer(db, ENV);
  try {
    const org = await server.call("POST", "/api/v1/auth/signup", { body: { email: "admin@hooks.test", password: "kill nine password 1", tenant_name: "Hooks", subdomain: "hooks" } });
    expect(org.status).toBe(201);
    const as = { token: org.body.access_token as string, tenant: "hooks" };
    const made = await server.call("POST", "/api/v1/webhooks", { ...as, body: { url: receiver.url, events: ["account.created"] } });
    expect(made.status).toBe(201);
    receiver.trust(made.body.secret);
    for (let i = 0; i < EVENTS; i++) expect((await server.call("POST", "/api/v1/crm/accounts", { ...as, body: { name: `Account ${i}` } })).status).toBe(201);
    // Killed once some deliveries went through and others are still to come.
    for (let i = 0; i < 2_000 && got.length < 5; i++) await Bun.sleep(5);
    server.process.kill("SIGKILL");
    await server.process.exited;
    const before = new Set(got.map((g) => g.id)).size;
    expect(before).toBeGreaterThan(0);
    expect(before).toBeLessThan(EVENTS);

    server = await startServer(db, ENV);
    const deadline = Date.now() + 60_000;
    while (new Set(got.map((g) => g.id)).size < EVENTS && Date.now() < deadline) await Bun.sleep(50);
    expect(new Set(got.map((g) => g.id)).size).toBe(EVENTS);
    expect(got.every((g) => g.verifiedWith.length === 1 && g.event.type === "account.created")).toBe(true);
    // Each delivery row ends delivered (the last ones may still be writing their end).
    const pending = () => {
      const d = new Database(db, { readonly: true });
      try {
        return d.query("SELECT status, count(*) AS n FROM webhook_deliveries GROUP BY status").all() as Array<{ status: string; n: number }>;
      } finally {
        d.close();
      }
    };
    for (let i = 0; i < 200 && JSON.stringify(pending()) !== JSON.stringify([{ status: "delivered", n: EVENTS }]); i++) await Bun.sleep(50);
    expect(pending()).toEqual([{ status: "delivered", n: EVENTS }]);
    // Sent twice only what was in flight at the kill (at most the per-endpoint cap).
    expect(got.length - EVENTS).toBeLessThanOrEqual(4);
  } finally {
    await server.stop();
    receiver.stop();
  }
}, 120_000);
