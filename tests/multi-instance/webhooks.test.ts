import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { receiver as startReceiver } from "../webhooks/receiver";
import { openPostgres } from "../../src/stores/postgres/database";
import { type Group, ON_POSTGRES, SKIP_NOTE, eventually, signup, threeInstances } from "./support";

/**
 * Three instances share one database and each runs a webhook sender: every due delivery is leased
 * by one of them (FOR UPDATE SKIP LOCKED), so each event written through any instance reaches the
 * receiver exactly once, signed, while all three send at once. An instance killed with SIGKILL
 * mid-send loses nothing: its leases run out (twice SUITE_WEBHOOK_TIMEOUT and 5 s) and the others
 * send what it held; only what it had in flight (at most 4 to one endpoint) may arrive twice.
 */
describe.skipIf(!ON_POSTGRES)(`three instances deliver each webhook event once ${SKIP_NOTE}`, () => {
  let g: Group;
  let receiver: ReturnType<typeof startReceiver>;
  const got = () => receiver.received;

  beforeAll(async () => {
    receiver = startReceiver();
    g = await threeInstances("mhooks", { SUITE_OUTBOUND_ALLOW: "127.0.0.1", SUITE_WEBHOOK_HTTP: "true", SUITE_WEBHOOK_TIMEOUT: "2" });
  }, 120_000);
  afterAll(async () => {
    await g?.close();
    receiver?.stop();
  });

  test("90 events written through three instances: the receiver gets each once, and each row is delivered at the first attempt", async () => {
    const org = await signup(g.group, 0, "hooks-multi");
    const made = await g.group.call(1, "POST", "/api/v1/webhooks", { token: org.access_token, body: { url: receiver.url, events: ["account.created"] } });
    expect(made.status).toBe(201);
    receiver.trust(made.body.secret);
    const answers = await Promise.all(
      Array.from({ length: 90 }, (_, i) => g.group.next("POST", "/api/v1/crm/accounts", { token: org.access_token, body: { name: `Account ${i}` } })),
    );
    expect(answers.every((a) => a.status === 201)).toBe(true);
    expect(new Set(answers.map((a) => a.instance)).size).toBe(3);
    expect(await eventually(() => new Set(got().map((x) => x.id)).size === 90, 60_000)).toBe(true);
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
    expect(got().length).toBe(90);
    expect(got().every((x) => x.verifiedWith.length === 1)).toBe(true);
  }, 180_000);

  test("one instance killed with SIGKILL while all three are mid-send: every event arrives, at most the victim's in-flight ones twice", async () => {
    const org = await signup(g.group, 2, "hooks-kill");
    const made = await g.group.call(0, "POST", "/api/v1/webhooks", { token: org.access_token, body: { url: receiver.url, events: ["account.created"] } });
    expect(made.status).toBe(201);
    receiver.trust(made.body.secret);
    receiver.delay(300);
    const answers = await Promise.all(
      Array.from({ length: 45 }, (_, i) => g.group.next("POST", "/api/v1/crm/accounts", { token: org.access_token, body: { name: `Killed ${i}` } })),
    );
    expect(answers.every((a) => a.status === 201)).toBe(true);
    // A delivery's webhook-id ends with its endpoint's id.
    const ofOrg = () => got().filter((x) => x.id.endsWith(`_${made.body.id}`));
    expect(await eventually(() => ofOrg().length >= 6, 60_000, 10)).toBe(true);
    const victim = Math.floor(Math.random() * 3);
    await g.group.kill(victim, "SIGKILL");
    expect(await eventually(() => new Set(ofOrg().map((x) => x.id)).size === 45, 120_000)).toBe(true);
    const pg = openPostgres(g.db.url, { max: 1 });
    try {
      expect(
        await eventually(async () => {
          const rows = await pg.all<{ status: string; n: number }>`SELECT status, count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = ${made.body.id} GROUP BY 1`;
          return JSON.stringify(rows) === JSON.stringify([{ status: "delivered", n: 45 }]);
        }, 60_000),
      ).toBe(true);
    } finally {
      await pg.close();
    }
    const twice = ofOrg().length - 45;
    expect(ofOrg().every((x) => x.verifiedWith.length === 1)).toBe(true);
    expect(twice).toBeLessThanOrEqual(4);
    console.log(`webhooks after SIGKILL of instance ${victim}: 45 events, ${ofOrg().length} requests received (${twice} twice: in flight at the kill)`);
    receiver.delay(0);
  }, 300_000);
});
