import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import { openPostgres } from "../../src/stores/postgres/database";
import { type Group, ON_POSTGRES, SKIP_NOTE, eventually, signup, threeInstances } from "./support";

/**
 * Three instances share one database and each runs a webhook sender: every due delivery is leased
 * by one of them (FOR UPDATE SKIP LOCKED), so each event written through any instance reaches the
 * receiver exactly once, signed, while all three send at once.
 */
describe.skipIf(!ON_POSTGRES)(`three instances deliver each webhook event once ${SKIP_NOTE}`, () => {
  let g: Group;
  const got: Array<{ id: string; ok: boolean }> = [];
  let secret = "";
  let receiver: ReturnType<typeof Bun.serve>;
  const serve = () => Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const body = await req.text();
      let ok = false;
      try {
        new Webhook(secret).verify(body, Object.fromEntries(req.headers.entries()));
        ok = true;
      } catch {}
      got.push({ id: req.headers.get("webhook-id") ?? "", ok });
      await Bun.sleep(20);
      return new Response(null, { status: 204 });
    },
  });

  beforeAll(async () => {
    receiver = serve();
    g = await threeInstances("mhooks", { SUITE_OUTBOUND_ALLOW: "127.0.0.1", SUITE_WEBHOOK_HTTP: "true" });
  }, 120_000);
  afterAll(async () => {
    await g?.close();
    receiver?.stop(true);
  });

  test("90 events written through three instances: the receiver gets each once, and each row is delivered at the first attempt", async () => {
    const org = await signup(g.group, 0, "hooks-multi");
    const made = await g.group.call(1, "POST", "/api/v1/webhooks", { token: org.access_token, body: { url: `http://127.0.0.1:${receiver.port}/in`, events: ["account.created"] } });
    expect(made.status).toBe(201);
    secret = made.body.secret;
    const answers = await Promise.all(
      Array.from({ length: 90 }, (_, i) => g.group.next("POST", "/api/v1/crm/accounts", { token: org.access_token, body: { name: `Account ${i}` } })),
    );
    expect(answers.every((a) => a.status === 201)).toBe(true);
    expect(new Set(answers.map((a) => a.instance)).size).toBe(3);
    expect(await eventually(() => new Set(got.map((x) => x.id)).size === 90, 60_000)).toBe(true);
    const pg = openPostgres(g.db.url, { max: 1 });
    try {
      expect(
        await eventually(async () => {
          const rows = await pg.all<{ status: string; attempts: number; n: number }>`SELECT status, attempts, count(*)::int AS n FROM webhook_deliveries GROUP BY 1, 2`;
          return JSON.stringify(rows) === JSON.stringify([{ status: "delivered", attempts: 1, n: 90 }]);
        }, 30_000),
      ).toBe(true);
    } finally {
      await pg.close();
    }
    expect(got.length).toBe(90);
    expect(got.every((x) => x.ok)).toBe(true);
  }, 180_000);
});
