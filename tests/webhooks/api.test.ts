/**
 * /api/v1/webhooks: admins only, a recent sign-in to create or change, URL and event types
 * checked (422 in FastAPI's shape), the secret shown on create and rotate only, never listed.
 */
import { afterAll, expect, test } from "bun:test";
import { addMember, clock, login } from "../auth/support";
import { testApp } from "../helpers";
import { RECEIVER_ENV, WEBHOOKS } from "./support";

const c = clock(Date.now());
const t = testApp({ env: { ...RECEIVER_ENV, SUITE_REAUTH_WINDOW: "60" }, now: c.now });
afterAll(() => t.close());

const body = (more: Record<string, unknown> = {}) => ({ url: "http://127.0.0.1:9/hook", events: ["deal.created", "deal.deleted"], ...more });

test("an admin adds, reads, changes and deletes a webhook; the secret is shown once", async () => {
  const admin = await t.signup("hooks");
  const token = admin.access_token;
  const made = await t.json("POST", WEBHOOKS, { token, body: body({ description: "  CRM sync " }) });
  expect(made.status).toBe(201);
  expect(made.body).toMatchObject({ url: "http://127.0.0.1:9/hook", events: ["deal.created", "deal.deleted"], description: "CRM sync", enabled: true, disabled_reason: null });
  expect(made.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
  const id = made.body.id as string;
  const list = await t.json("GET", WEBHOOKS, { token });
  expect(list.status).toBe(200);
  expect(list.body.items.map((w: { id: string }) => w.id)).toEqual([id]);
  expect(JSON.stringify(list.body)).not.toContain("secret\"");
  expect(JSON.stringify(list.body)).not.toContain(made.body.secret);
  const one = await t.json("GET", `${WEBHOOKS}/${id}`, { token });
  expect(one.body.secret).toBeUndefined();
  // The secret is kept sealed, not as given.
  const stored = JSON.stringify(await t.ctx.repos.webhooks.byId(admin.tenant.id, id));
  expect(stored).not.toContain(made.body.secret.slice(6));
  const changed = await t.json("PATCH", `${WEBHOOKS}/${id}`, { token, body: { events: ["*", "deal.created"], enabled: false, description: null } });
  expect(changed.status).toBe(200);
  expect(changed.body).toMatchObject({ events: ["*"], enabled: false, description: null });
  const rotated = await t.json("POST", `${WEBHOOKS}/${id}/rotate-secret`, { token });
  expect(rotated.status).toBe(200);
  expect(rotated.body.secret).toMatch(/^whsec_/);
  expect(rotated.body.secret).not.toBe(made.body.secret);
  expect(Date.parse(rotated.body.previous_secret_expires_at) - c.now()).toBe(24 * 3_600_000);
  // A disabled webhook sends no test.
  const test409 = await t.json("POST", `${WEBHOOKS}/${id}/test`, { token });
  expect({ status: test409.status, code: test409.body.code }).toEqual({ status: 409, code: "webhook_disabled" });
  expect((await t.json("DELETE", `${WEBHOOKS}/${id}`, { token })).status).toBe(204);
  expect((await t.json("GET", `${WEBHOOKS}/${id}`, { token })).status).toBe(404);
  // The log holds no secret (the whole run's ledger checks too).
  expect(JSON.stringify(t.logs)).not.toContain(rotated.body.secret);
});

test("the address and the event types are checked: 422 naming each field", async () => {
  const admin = await t.signup("checks");
  const token = admin.access_token;
  const bad = await t.json("POST", WEBHOOKS, { token, body: { url: "ftp://example.com/x", events: ["deal.created", "deal.exploded"] } });
  expect(bad.status).toBe(422);
  expect(bad.body.detail.map((d: { loc: unknown[] }) => d.loc)).toEqual([["body", "url"], ["body", "events", 1]]);
  expect(bad.body.detail[0].msg).toContain("https://");
  // Private, link-local and (unless allowed) loopback hosts are refused, like an identity provider's.
  for (const url of ["https://10.1.2.3/hook", "https://169.254.169.254/latest", "https://[::1]/hook"]) {
    const r = await t.json("POST", WEBHOOKS, { token, body: body({ url }) });
    expect({ url, status: r.status, loc: r.body.detail?.[0]?.loc }).toEqual({ url, status: 422, loc: ["body", "url"] });
    expect(r.body.detail[0].msg).toContain("SUITE_OUTBOUND_ALLOW");
  }
  for (const events of [[], ["*"].concat(Array(50).fill("deal.created"))]) {
    expect((await t.json("POST", WEBHOOKS, { token, body: body({ events }) })).status).toBe(422);
  }
  expect((await t.json("POST", WEBHOOKS, { token, body: body({ url: "https://user:pw@example.com/" }) })).status).toBe(422);
  expect((await t.json("PATCH", `${WEBHOOKS}/nope`, { token, body: { enabled: true } })).status).toBe(404);
  expect(await t.ctx.repos.webhooks.count(admin.tenant.id)).toBe(0);
});

test("http is refused unless the operator allows it", async () => {
  const strict = testApp({ env: { SUITE_OUTBOUND_ALLOW: "127.0.0.1" } });
  try {
    const admin = await strict.signup("strict");
    const r = await strict.json("POST", WEBHOOKS, { token: admin.access_token, body: body() });
    expect(r.status).toBe(422);
    expect(r.body.detail[0].msg).toContain("must start with https://");
  } finally {
    await strict.close();
  }
});

test("members get 403; creating and changing need a recent sign-in, reading and testing do not", async () => {
  const admin = await t.signup("stepup");
  const token = admin.access_token;
  const made = await t.json("POST", WEBHOOKS, { token, body: body() });
  const id = made.body.id as string;
  const m = await addMember(t, admin.tenant.id, "mia@stepup.test", "member password 1");
  const memberToken = (await login(t, m.email, m.password)).body.access_token;
  for (const [method, path, b] of [
    ["GET", WEBHOOKS], ["POST", WEBHOOKS, body()], ["GET", `${WEBHOOKS}/${id}`], ["PATCH", `${WEBHOOKS}/${id}`, { enabled: false }],
    ["DELETE", `${WEBHOOKS}/${id}`], ["POST", `${WEBHOOKS}/${id}/rotate-secret`], ["POST", `${WEBHOOKS}/${id}/test`],
    ["GET", `${WEBHOOKS}/${id}/deliveries`], ["POST", `${WEBHOOKS}/${id}/deliveries/x/retry`],
  ] as Array<[string, string, unknown?]>) {
    const r = await t.json(method, path, { token: memberToken, body: b });
    expect({ method, path, status: r.status, code: r.body?.code }).toEqual({ method, path, status: 403, code: "forbidden" });
  }
  c.advance(61_000);
  const stale = (await t.json("POST", "/api/v1/auth/refresh", { body: { refresh_token: admin.refresh_token } })).body.access_token as string;
  for (const [method, path, b] of [
    ["POST", WEBHOOKS, body()], ["PATCH", `${WEBHOOKS}/${id}`, { enabled: false }], ["DELETE", `${WEBHOOKS}/${id}`], ["POST", `${WEBHOOKS}/${id}/rotate-secret`],
  ] as Array<[string, string, unknown?]>) {
    const r = await t.json(method, path, { token: stale, body: b });
    expect({ method, status: r.status, code: r.body?.code }).toEqual({ method, status: 403, code: "reauthentication_required" });
  }
  expect((await t.json("GET", `${WEBHOOKS}/${id}`, { token: stale })).body.enabled).toBe(true);
  expect((await t.json("POST", `${WEBHOOKS}/${id}/test`, { token: stale })).status).toBe(202);
  const log = await t.json("GET", `${WEBHOOKS}/${id}/deliveries`, { token: stale });
  expect(log.body).toMatchObject({ total: 1, items: [{ event_type: "webhook.test", status: "pending", attempts: 0, event_id: null }] });
  // Another organization's admin sees none of it.
  const other = await t.signup("stepother");
  expect((await t.json("GET", `${WEBHOOKS}/${id}`, { token: other.access_token })).status).toBe(404);
  expect((await t.json("GET", WEBHOOKS, { token: other.access_token })).body.items).toEqual([]);
});

test("at most 20 webhooks an organization: 409 webhook_limit_reached", async () => {
  const admin = await t.signup("limit");
  for (let i = 0; i < 20; i++) expect((await t.json("POST", WEBHOOKS, { token: admin.access_token, body: body() })).status).toBe(201);
  const r = await t.json("POST", WEBHOOKS, { token: admin.access_token, body: body() });
  expect({ status: r.status, code: r.body.code }).toEqual({ status: 409, code: "webhook_limit_reached" });
});
