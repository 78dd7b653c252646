import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { addMember, clock, login } from "../auth/support";
import { CRM, crmOrg } from "../crm/support";
import { type TestApp, testApp } from "../helpers";
import { testSql } from "../support/sql";

/** Issue 28 item 6: creates sent with an Idempotency-Key happen once; a retry gets the first answer. */
const c = clock();
let t: TestApp;
let a: Awaited<ReturnType<typeof crmOrg>>;
let b: Awaited<ReturnType<typeof crmOrg>>;
let accountId: string;

beforeAll(async () => {
  t = testApp({ now: c.now });
  a = await crmOrg(t, "idem-a");
  b = await crmOrg(t, "idem-b");
  accountId = (await a.account("Acme")).id;
});
afterAll(() => t.close());

const send = (token: string, path: string, key: string | null, body: unknown) =>
  t.json("POST", path.startsWith("/api") ? path : `${CRM}${path}`, { token, body, headers: key === null ? {} : { "idempotency-key": key } });
const count = async (table: string, tenantId: string) =>
  Number((await testSql(t.ctx).get<{ n: number }>(`SELECT count(*) AS n FROM ${table} WHERE tenant_id = ?1`, tenantId))!.n);
const keyRow = (tenantId: string, key: string) =>
  testSql(t.ctx).get<{ state: string; resource_id: string | null; status: number | null }>(
    "SELECT state, resource_id, status FROM idempotency_keys WHERE tenant_id = ?1 AND key = ?2",
    tenantId,
    key,
  );

describe("a retry with the same key and body", () => {
  const creates: Array<[string, string, string, () => unknown]> = [
    ["a deal", "/deals", "deals", () => ({ title: "Big one", account_id: accountId, value: 1250.5 })],
    ["an account", "/accounts", "accounts", () => ({ name: "Globex", domain: "globex.test" })],
    ["a contact", "/contacts", "contacts", () => ({ first_name: "Ada", last_name: "Lovelace", account_id: accountId })],
    ["a pipeline stage", "/pipeline-stages", "pipeline_stages", () => ({ key: "demo", name: "Demo", probability: 40 })],
    ["an invitation", "/api/v1/users/invite", "invitations", () => ({ email: "new.person@idem-a.test" })],
  ];
  test.each(creates)("%s: one record, the same status and body, and the retry writes nothing", async (_, path, table, body) => {
    const key = `retry-${table}`;
    const before = await count(table, a.tenant.id);
    const first = await send(a.token, path, key, body());
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const mails = await count("mail_outbox", a.tenant.id).catch(() => null);
    for (let i = 0; i < 2; i++) {
      const again = await send(a.token, path, key, body());
      expect(again.status).toBe(201);
      expect(again.body).toEqual(first.body);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
    }
    expect(await count(table, a.tenant.id)).toBe(before + 1);
    expect(await keyRow(a.tenant.id, key)).toEqual({ state: "done", resource_id: first.body.id, status: 201 });
    if (table === "invitations") expect(await count("mail_outbox", a.tenant.id).catch(() => null)).toBe(mails);
  });

  test("a value sent as a number or as its text is the same body", async () => {
    const first = await send(a.token, "/deals", "same-meaning", { account_id: accountId, title: "T", value: 10 });
    const again = await send(a.token, "/deals", "same-meaning", { value: "10", title: "T", account_id: accountId });
    expect(again.status).toBe(201);
    expect(again.body.id).toBe(first.body.id);
  });

  test("without a key every request creates, as before", async () => {
    const before = await count("accounts", a.tenant.id);
    await send(a.token, "/accounts", null, { name: "Twice" });
    await send(a.token, "/accounts", null, { name: "Twice" });
    expect(await count("accounts", a.tenant.id)).toBe(before + 2);
  });
});

describe("the same key for something else", () => {
  test("another body is 409 idempotency_key_reused and creates nothing", async () => {
    await send(a.token, "/deals", "one-key", { title: "First", account_id: accountId });
    const before = await count("deals", a.tenant.id);
    const other = await send(a.token, "/deals", "one-key", { title: "Second", account_id: accountId });
    expect(other.status).toBe(409);
    expect(other.body.code).toBe("idempotency_key_reused");
    expect(other.body.detail).toMatch(/new key/);
    expect(await count("deals", a.tenant.id)).toBe(before);
  });

  test("another path with the same body is reused too", async () => {
    await send(a.token, "/accounts", "path-key", { name: "Same" });
    const other = await send(a.token, "/pipeline-stages", "path-key", { name: "Same" });
    expect([409, 422]).toContain(other.status);
    const valid = await send(a.token, "/contacts", "path-key", { first_name: "Same" });
    expect(valid.status).toBe(409);
    expect(valid.body.code).toBe("idempotency_key_reused");
  });

  test("a refused create keeps no key: the corrected retry with the same key creates", async () => {
    const refused = await send(a.token, "/deals", "fix-me", { title: "X", account_id: "no-such-account" });
    expect(refused.status).toBe(404);
    expect(await keyRow(a.tenant.id, "fix-me")).toBeNull();
    const fixed = await send(a.token, "/deals", "fix-me", { title: "X", account_id: accountId });
    expect(fixed.status).toBe(201);
  });

  test("a duplicate stage key (409 inside the store's transaction) keeps no key and no stage", async () => {
    const before = await count("pipeline_stages", a.tenant.id);
    const dup = await send(a.token, "/pipeline-stages", "dup-stage", { key: "new", name: "Again" });
    expect(dup.status).toBe(409);
    expect(dup.body.code).toBe("stage_exists");
    expect(await keyRow(a.tenant.id, "dup-stage")).toBeNull();
    expect(await count("pipeline_stages", a.tenant.id)).toBe(before);
  });
});

describe("keys belong to an organization and a user", () => {
  test("another user's same key is independent", async () => {
    const m = await addMember(t, a.tenant.id, "member@idem-a.test", "member password 1");
    const token = (await login(t, m.email, m.password)).body.access_token as string;
    const body = { title: "Shared key", account_id: accountId };
    const mine = await send(a.token, "/deals", "shared", body);
    const theirs = await send(token, "/deals", "shared", body);
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get("idempotent-replayed")).toBeNull();
    expect(theirs.body.id).not.toBe(mine.body.id);
    // And each one's retry answers their own.
    expect((await send(token, "/deals", "shared", body)).body.id).toBe(theirs.body.id);
    expect((await send(a.token, "/deals", "shared", body)).body.id).toBe(mine.body.id);
  });

  test("another organization cannot replay: the same key and body there is its own create", async () => {
    const mine = await send(a.token, "/accounts", "org-key", { name: "Initech" });
    const theirs = await send(b.token, "/accounts", "org-key", { name: "Initech" });
    expect(theirs.status).toBe(201);
    expect(theirs.body.id).not.toBe(mine.body.id);
    expect(theirs.body.tenant_id).toBe(b.tenant.id);
    expect(theirs.headers.get("idempotent-replayed")).toBeNull();
  });
});

describe("bad keys", () => {
  test.each([
    ["256 characters", "k".repeat(256), "string_too_long"],
    ["empty", "", "string_too_short"],
    ["a tab", "a\tb", "value_error"],
    ["a control character", "a\u0001b", "value_error"],
    ["an escape", "a\u001bb", "value_error"],
    ["DEL", "a\u007fb", "value_error"],
    ["a C1 control", "a\u0085b", "value_error"],
  ])("%s: 422 naming the header, and nothing created", async (_, key, type) => {
    const before = await count("accounts", a.tenant.id);
    const r = await send(a.token, "/accounts", key, { name: "Bad key" });
    expect(r.status).toBe(422);
    expect(r.body.detail[0]).toMatchObject({ loc: ["header", "idempotency-key"], type });
    expect(await count("accounts", a.tenant.id)).toBe(before);
  });

  test("255 characters of any printable kind are a key", async () => {
    const key = `é~ ${"x".repeat(252)}`;
    expect((await send(a.token, "/accounts", key, { name: "Long key" })).status).toBe(201);
    expect((await send(a.token, "/accounts", key, { name: "Long key" })).headers.get("idempotent-replayed")).toBe("true");
  });
});

describe("a key in use, lost answers, expiry", () => {
  test("a retry while the first still runs is 409 idempotency_key_in_progress; after the lease a retry takes the key over", async () => {
    const body = { name: "Slow" };
    const first = await send(a.token, "/accounts", "busy", body);
    // As if the first request were still working: its key 'running' under another claim.
    await testSql(t.ctx).run("UPDATE idempotency_keys SET state = 'running', claim = 'other', status = NULL, answer = NULL, resource_id = NULL WHERE key = 'busy'");
    await testSql(t.ctx).run("DELETE FROM accounts WHERE tenant_id = ?1 AND id = ?2", a.tenant.id, first.body.id);
    const busy = await send(a.token, "/accounts", "busy", body);
    expect(busy.status).toBe(409);
    expect(busy.body.code).toBe("idempotency_key_in_progress");
    expect(busy.headers.get("retry-after")).toBe("1");
    c.advance(61_000);
    const taken = await send(a.token, "/accounts", "busy", body);
    expect(taken.status).toBe(201);
    expect((await send(a.token, "/accounts", "busy", body)).body).toEqual(taken.body);
  });

  test("a record committed whose answer was never saved: the retry answers the record and creates nothing", async () => {
    const body = { title: "Committed", account_id: accountId };
    const first = await send(a.token, "/deals", "lost-answer", body);
    await testSql(t.ctx).run("UPDATE idempotency_keys SET state = 'created', status = NULL, answer = NULL WHERE key = 'lost-answer'");
    const before = await count("deals", a.tenant.id);
    const again = await send(a.token, "/deals", "lost-answer", body);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(await count("deals", a.tenant.id)).toBe(before);
    expect((await keyRow(a.tenant.id, "lost-answer"))?.state).toBe("done");
  });

  test("concurrent sends of one key make one record; the others are replays or in progress", async () => {
    const body = { title: "Double click", account_id: accountId };
    const before = await count("deals", a.tenant.id);
    const answers = await Promise.all([0, 1, 2, 3].map(() => send(a.token, "/deals", "concurrent", body)));
    expect(await count("deals", a.tenant.id)).toBe(before + 1);
    const created = answers.filter((r) => r.status === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(new Set(created.map((r) => r.body.id)).size).toBe(1);
    for (const r of answers.filter((x) => x.status !== 201)) expect([r.status, r.body.code]).toEqual([409, "idempotency_key_in_progress"]);
  });

  test("after 24 hours a key is forgotten: the same key creates again, and the sweep deletes expired keys", async () => {
    const body = { name: "Yesterday" };
    const first = await send(a.token, "/accounts", "day-old", body);
    c.advance(24 * 3_600_000);
    // A day later the signup's access token has ended too: sign in again.
    a.token = (await login(t, a.email, a.password)).body.access_token;
    const later = await send(a.token, "/accounts", "day-old", body);
    expect(later.status).toBe(201);
    expect(later.body.id).not.toBe(first.body.id);
    const live = await count("idempotency_keys", a.tenant.id);
    c.advance(24 * 3_600_000 + 1);
    expect(await t.ctx.idempotency.purgeExpired()).toBeGreaterThanOrEqual(live);
    expect(await count("idempotency_keys", a.tenant.id)).toBe(0);
  });
});
