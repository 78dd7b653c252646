/**
 * Deliveries to a real receiver on loopback (allowed by the operator's settings, through the
 * outbound guard): Standard Webhooks signatures verified by the `standardwebhooks` package as a
 * receiver would, also during a rotation; a receiver that fails, times out and recovers; 410 and
 * three days of failures disable the endpoint and mail the admins; the retry endpoint replays.
 */
import { afterAll, expect, test } from "bun:test";
import { testSql } from "../support/sql";
import { type Received, WEBHOOKS, receiver, until, webhookApp } from "./support";

const r = receiver();
const t = webhookApp();
t.ctx.webhookSender.start();
afterAll(async () => {
  await t.close();
  r.stop();
});

async function org(name: string, events: string[] = ["*"]) {
  const admin = await t.signup(name);
  const token = admin.access_token;
  const made = await t.json("POST", WEBHOOKS, { token, body: { url: r.url, events } });
  expect(made.status).toBe(201);
  r.trust(made.body.secret);
  const account = async (n: string) => (await t.json("POST", "/api/v1/crm/accounts", { token, body: { name: n } })).body as { id: string };
  const deliveries = async () => (await t.json("GET", `${WEBHOOKS}/${made.body.id}/deliveries`, { token })).body.items as Array<Record<string, any>>;
  return { admin, token, id: made.body.id as string, secret: made.body.secret as string, account, deliveries };
}
const of = (tenantId: string) => r.received.filter((x) => x.event.organization_id === tenantId);

test("each event is POSTed once, signed (Webhook.verify passes), its body the event as GET /events shows it", async () => {
  const o = await org("signed", ["account.created"]);
  const acc = await o.account("Acme");
  await t.json("PATCH", `/api/v1/crm/accounts/${acc.id}`, { token: o.token, body: { name: "Acme Inc" } });
  expect(await until(() => of(o.admin.tenant.id).length >= 1)).toBe(true);
  await Bun.sleep(100);
  const got = of(o.admin.tenant.id);
  // account.updated is not subscribed.
  expect(got.map((x) => x.event.type)).toEqual(["account.created"]);
  expect(got[0]!.verifiedWith).toEqual([o.secret]);
  const listed = (await t.json("GET", "/api/v1/events", { token: o.token })).body.items.find((e: { type: string }) => e.type === "account.created");
  expect(got[0]!.event).toEqual(listed);
  expect(got[0]!.signature).toMatch(/^v1,[A-Za-z0-9+/=]+$/);
  expect(Math.abs(Number(got[0]!.timestamp) - Date.now() / 1000)).toBeLessThan(10);
  expect(await until(async () => (await o.deliveries())[0]?.status === "delivered")).toBe(true);
  expect((await o.deliveries())[0]).toMatchObject({ id: got[0]!.id, event_type: "account.created", attempts: 1, last_response_status: 204, next_attempt_at: null, last_error: null });
});

test("after a rotation both secrets sign for a day: a receiver with either verifies; then only the new one", async () => {
  const o = await org("rotate");
  const rotated = (await t.json("POST", `${WEBHOOKS}/${o.id}/rotate-secret`, { token: o.token })).body.secret as string;
  r.trust(rotated);
  await o.account("One");
  expect(await until(() => of(o.admin.tenant.id).length >= 1)).toBe(true);
  const first = of(o.admin.tenant.id)[0]!;
  expect(first.signature.split(" ")).toHaveLength(2);
  expect(first.verifiedWith.sort()).toEqual([o.secret, rotated].sort());
  // A day later the previous secret no longer signs.
  await testSql(t.ctx).run("UPDATE webhook_endpoints SET previous_secret_until = ?1 WHERE tenant_id = ?2", Date.now() - 1, o.admin.tenant.id);
  await o.account("Two");
  expect(await until(() => of(o.admin.tenant.id).length >= 2)).toBe(true);
  const second = of(o.admin.tenant.id)[1]!;
  expect(second.signature.split(" ")).toHaveLength(1);
  expect(second.verifiedWith).toEqual([rotated]);
});

test("a receiver that fails, then times out, then recovers gets the event with the same webhook-id; the log shows each answer", async () => {
  const o = await org("recover");
  r.answer("fail");
  try {
    await o.account("Flaky");
    expect(await until(async () => ((await o.deliveries())[0]?.attempts ?? 0) >= 2)).toBe(true);
    expect((await o.deliveries())[0]).toMatchObject({ status: "pending", last_response_status: 500, last_error: null });
    expect((await o.deliveries())[0]!.next_attempt_at).not.toBeNull();
    r.answer("slow");
    // An attempt leased before the switch may be the one that meets the slow answer (attempts are
    // counted when leased): wait for a timeout recorded on an attempt after those counted here.
    const before = (await o.deliveries())[0]!.attempts as number;
    expect(
      await until(async () => {
        const d = (await o.deliveries())[0];
        return d?.last_error === "timeout" && (d.attempts as number) > before;
      }, 12_000),
    ).toBe(true);
    expect((await o.deliveries())[0]).toMatchObject({ status: "pending", last_response_status: null });
    expect((await o.deliveries())[0]!.attempts).toBeGreaterThan(before);
  } finally {
    r.answer("ok");
  }
  expect(await until(async () => (await o.deliveries())[0]?.status === "delivered", 8000)).toBe(true);
  const ids = new Set(of(o.admin.tenant.id).map((x: Received) => x.id));
  expect(ids.size).toBe(1);
  expect(of(o.admin.tenant.id).length).toBeGreaterThanOrEqual(3);
});

test("410 disables the endpoint at once and mails the admins; the retry endpoint replays a delivered event", async () => {
  const o = await org("gone");
  await t.json("POST", `${WEBHOOKS}/${o.id}/test`, { token: o.token });
  expect(await until(async () => (await o.deliveries())[0]?.status === "delivered")).toBe(true);
  const test = of(o.admin.tenant.id)[0]!;
  expect(test.event).toMatchObject({ type: "webhook.test", organization_id: o.admin.tenant.id, data: { webhook_id: o.id } });
  expect(test.verifiedWith).toEqual([o.secret]);
  // Replay: the same message again, same webhook-id.
  const retried = await t.json("POST", `${WEBHOOKS}/${o.id}/deliveries/${test.id}/retry`, { token: o.token });
  expect(retried.status).toBe(202);
  expect(await until(() => of(o.admin.tenant.id).length >= 2)).toBe(true);
  expect(of(o.admin.tenant.id)[1]!.id).toBe(test.id);
  expect((await t.json("POST", `${WEBHOOKS}/${o.id}/deliveries/nope/retry`, { token: o.token })).status).toBe(404);
  r.answer("gone");
  try {
    await o.account("Bye");
    expect(await until(async () => (await t.json("GET", `${WEBHOOKS}/${o.id}`, { token: o.token })).body.enabled === false)).toBe(true);
  } finally {
    r.answer("ok");
  }
  expect((await t.json("GET", `${WEBHOOKS}/${o.id}`, { token: o.token })).body.disabled_reason).toBe("gone");
  const gone = (await o.deliveries()).find((d) => d.event_type === "account.created")!;
  expect(gone).toMatchObject({ status: "failed", last_response_status: 410, attempts: 1 });
  expect(await until(async () => (await t.ctx.repos.mail.list(100)).some((m) => m.kind === "webhook_disabled" && m.recipient === o.admin.email))).toBe(true);
  // Disabled: no new deliveries; enabled again by the admin, its reason goes.
  await o.account("Unheard");
  expect((await o.deliveries()).filter((d) => d.event_type === "account.created")).toHaveLength(1);
  const enabled = await t.json("PATCH", `${WEBHOOKS}/${o.id}`, { token: o.token, body: { enabled: true } });
  expect(enabled.body).toMatchObject({ enabled: true, disabled_reason: null });
});

test("three days without a 2xx (shortened here) end the delivery and disable the endpoint, with a mail", async () => {
  const short = webhookApp({ webhooks: { retryWindowMs: 400 } });
  short.ctx.webhookSender.start();
  try {
    const admin = await short.signup("failing");
    const made = await short.json("POST", WEBHOOKS, { token: admin.access_token, body: { url: r.url, events: ["*"] } });
    r.answer("fail");
    await short.json("POST", "/api/v1/crm/accounts", { token: admin.access_token, body: { name: "Never" } });
    const endpoint = () => short.ctx.repos.webhooks.byId(admin.tenant.id, made.body.id);
    expect(await until(async () => (await endpoint())?.enabled === 0, 8000)).toBe(true);
    expect((await endpoint())?.disabled_reason).toBe("failing");
    const [d] = await short.ctx.repos.webhooks.deliveries(admin.tenant.id, made.body.id, 10, 0);
    expect(d).toMatchObject({ status: "failed", last_status: 500 });
    expect(Number(d!.attempts)).toBeGreaterThan(1);
    const mails = (await short.ctx.repos.mail.list(100)).filter((m) => m.kind === "webhook_disabled");
    expect(mails.map((m) => m.recipient)).toEqual([admin.email]);
    expect(mails[0]!.text_body).toContain("three days");
  } finally {
    r.answer("ok");
    await short.close();
  }
});
