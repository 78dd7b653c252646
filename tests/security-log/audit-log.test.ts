import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { CSV_BATCH } from "../../src/security-log/service";
import { addMember, clockedApp, login } from "../auth/support";
import { testSql } from "../support/sql";

const { t, clock } = clockedApp();
const URL_ = "/api/v1/audit-log";
// The rows written by hand are a day before the clock, as history is: a download ends at "now".
const START = Date.UTC(2029, 11, 31);
let admin: Awaited<ReturnType<typeof t.signup>>;
let other: Awaited<ReturnType<typeof t.signup>>;
let memberToken: string;
let memberId: string;

const get = (query = "", o: { token?: string; headers?: Record<string, string> } = {}) =>
  t.json("GET", `${URL_}${query ? `?${query}` : ""}`, { token: o.token ?? admin.access_token, headers: o.headers });
const write = (tenantId: string | null, userId: string | null, action: string, at: number, detail?: Record<string, unknown>) =>
  t.ctx.repos.security.audit({ tenantId, userId, action, ip: "203.0.113.9", userAgent: "Test agent", detail }, at);
/** The tenant's rows as the database holds them, newest first: what every answer is compared with. */
const expected = async (where = "TRUE", ...args: Array<string | number>) =>
  (await testSql(t.ctx).all<{ id: number }>(`SELECT id FROM audit_log WHERE tenant_id = ?1 AND (${where}) ORDER BY created_at DESC, id DESC`, admin.tenant.id, ...args)).map(
    (r) => r.id,
  );

beforeAll(async () => {
  admin = await t.signup("auditorg", { full_name: "Audit Admin" });
  other = await t.signup("auditother");
  const m = await addMember(t, admin.tenant.id, "member@auditorg.test", "member password 1");
  memberId = m.id;
  clock.advance(1000);
  memberToken = (await login(t, m.email, m.password, { "x-tenant": "auditorg" })).body.access_token;
  // Rows at known times: one a minute for an hour, alternating actions and users.
  for (let i = 0; i < 60; i++) await write(admin.tenant.id, i % 2 ? memberId : admin.user.id, i % 3 ? "test.alpha" : "test.beta", START + 60_000 * (i + 10), { n: i });
  await write(other.tenant.id, other.user.id, "test.alpha", START + 600_000, { secret_word: "otherword" });
  await write(null, null, "auth.login_failed", START + 600_000);
});
afterAll(() => t.close());

describe("the audit log page", () => {
  test("admins get a page like the deal list, newest first, with who, what, when, where and detail", async () => {
    const r = await get("size=5");
    expect(r.status).toBe(200);
    const ids = await expected();
    expect({ total: r.body.total, page: r.body.page, size: r.body.size, pages: r.body.pages }).toEqual({ total: ids.length, page: 1, size: 5, pages: Math.ceil(ids.length / 5) });
    expect(r.body.items.map((i: any) => i.id)).toEqual(ids.slice(0, 5));
    const second = await get("size=5&page=2");
    expect(second.body.items.map((i: any) => i.id)).toEqual(ids.slice(5, 10));
    const row = r.body.items.find((i: any) => i.action === "test.alpha" || i.action === "test.beta");
    expect(Object.keys(row).sort()).toEqual(["action", "created_at", "detail", "id", "ip", "user_agent", "user_email", "user_id", "user_name"]);
    const signup = (await get("action=tenant.signup")).body.items[0];
    expect(signup).toMatchObject({ user_id: admin.user.id, user_email: admin.email, user_name: "Audit Admin", action: "tenant.signup" });
    expect(signup.detail).toMatchObject({ subdomain: "auditorg" });
    expect(new Date(signup.created_at).toISOString()).toBe(signup.created_at);
  });

  test("never another tenant's rows, nor tenant-less ones", async () => {
    const all = await get("size=100");
    expect(JSON.stringify(all.body)).not.toContain("otherword");
    expect(all.body.items.every((i: any) => i.action !== "auth.login_failed")).toBe(true);
    expect((await get(`user_id=${other.user.id}`)).body).toMatchObject({ items: [], total: 0, pages: 0 });
    const theirs = await get("", { token: other.access_token });
    expect(theirs.body.items.map((i: any) => i.user_id).every((u: string | null) => u === other.user.id || u === null)).toBe(true);
  });

  test("filters: user_id, action (repeatable, any of), since and until (inclusive), together", async () => {
    const check = async (query: string, where: string, ...args: Array<string | number>) => {
      const r = await get(`size=100&${query}`);
      expect(r.status).toBe(200);
      expect(r.body.items.map((i: any) => i.id)).toEqual(await expected(where, ...args));
      expect(r.body.total).toBe((await expected(where, ...args)).length);
    };
    await check(`user_id=${memberId}`, "user_id = ?2", memberId);
    await check("action=test.beta", "action = 'test.beta'");
    await check("action=test.beta&action=tenant.signup", "action IN ('test.beta', 'tenant.signup')");
    const since = new Date(START + 60_000 * 20).toISOString();
    const until = new Date(START + 60_000 * 30).toISOString();
    await check(`since=${since}`, "created_at >= ?2", START + 60_000 * 20);
    await check(`until=${until}`, "created_at <= ?2", START + 60_000 * 30);
    await check(`since=${since}&until=${until}&action=test.alpha&user_id=${memberId}`, "created_at BETWEEN ?2 AND ?3 AND action = 'test.alpha' AND user_id = ?4", START + 1_200_000, START + 1_800_000, memberId);
    // An offset is honoured; a time without one is UTC; a date alone is its midnight.
    await check(`since=${encodeURIComponent("2029-12-31T01:20:00+01:00")}`, "created_at >= ?2", START + 60_000 * 20);
    await check("since=2029-12-31T00:20:00", "created_at >= ?2", START + 60_000 * 20);
    await check("until=2029-12-31", "created_at <= ?2", START);
  });

  test("bad parameters are 422s in the contract's shape, one item each", async () => {
    const r = await get("page=0&size=101&since=yesterday&until=2030-02-30T00:00:00Z");
    expect(r.status).toBe(422);
    expect(r.body.detail.map((d: any) => [d.loc, d.type])).toEqual([
      [["query", "page"], "greater_than_equal"],
      [["query", "size"], "less_than_equal"],
      [["query", "since"], "datetime_parsing"],
      [["query", "until"], "datetime_parsing"],
    ]);
    const reversed = await get("since=2030-01-02T00:00:00Z&until=2029-12-31T00:00:00Z");
    expect(reversed.status).toBe(422);
    expect(reversed.body.detail.map((d: any) => [d.loc, d.type])).toEqual([[["query", "until"], "value_error"]]);
    expect((await get("format=xml")).body.detail[0].loc).toEqual(["query", "format"]);
  });

  test("members get 403 forbidden, whatever they ask; no credentials is 401", async () => {
    for (const q of ["", "page=0", "format=csv"]) {
      const r = await get(q, { token: memberToken });
      expect({ status: r.status, code: r.body.code }).toEqual({ status: 403, code: "forbidden" });
    }
    expect((await t.json("GET", URL_)).status).toBe(401);
  });

  test("stage changes and other writes leave rows the log shows", async () => {
    const stages = (await t.json("GET", "/api/v1/crm/pipeline-stages", { token: admin.access_token })).body;
    await t.json("PATCH", `/api/v1/crm/pipeline-stages/${stages[0].id}`, { token: admin.access_token, body: { name: "Fresh" }, headers: { "user-agent": "Stage agent" } });
    const row = (await get("action=crm.stage_updated")).body.items[0];
    expect(row).toMatchObject({ user_id: admin.user.id, user_agent: "Stage agent", detail: { key: "new", changed: { name: { from: "New", to: "Fresh" } } } });
  });
});

/** A small CSV reader for the test: RFC 4180 fields, quotes doubled. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (cell += '"'), i++;
      else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") row.push(cell), (cell = "");
    else if (c === "\r" && text[i + 1] === "\n") row.push(cell), rows.push(row), (row = []), (cell = ""), i++;
    else cell += c;
  }
  return rows;
}

describe("the CSV download", () => {
  test("Accept: text/csv streams every matching row, newest first, with a header row, as an attachment", async () => {
    // More rows than one batch, so the keyset reads several.
    for (let i = 0; i < CSV_BATCH + 20; i++) await write(admin.tenant.id, admin.user.id, "test.bulk", START + 3_600_000 * 3 + Math.floor(i / 3), { i });
    const res = await t.request("GET", `${URL_}?action=test.bulk&action=test.beta&size=1`, { token: admin.access_token, headers: { accept: "text/csv" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(res.headers.get("content-disposition")).toMatch(/^attachment; filename="audit-log-\d{4}-\d{2}-\d{2}\.csv"$/);
    const bytes = new Uint8Array(await res.arrayBuffer());
    // UTF-8's byte order mark first, so that Excel reads the file as UTF-8.
    expect([...bytes.slice(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const rows = parseCsv(new TextDecoder().decode(bytes));
    expect(rows[0]).toEqual(["id", "created_at", "user_id", "user_email", "user_name", "action", "ip", "user_agent", "detail"]);
    const ids = await expected("action IN ('test.bulk', 'test.beta')");
    expect(ids.length).toBeGreaterThan(CSV_BATCH);
    expect(rows.slice(1).map((r) => Number(r[0]))).toEqual(ids);
    const first = rows[1]!;
    expect(first).toEqual([String(ids[0]), expect.stringMatching(/^2029-12-31T03:00:00/), admin.user.id, admin.email, "Audit Admin", "test.bulk", "203.0.113.9", "Test agent", expect.any(String)]);
    expect(JSON.parse(first[8]!)).toEqual({ i: CSV_BATCH + 19 });
  });

  test("format=csv does the same for a plain link; filters and 422s apply as to the page", async () => {
    const res = await t.request("GET", `${URL_}?format=csv&user_id=${memberId}&since=2029-12-31T00:20:00Z`, { token: admin.access_token });
    const rows = parseCsv(await res.text());
    expect(rows.slice(1).map((r) => Number(r[0]))).toEqual(await expected("user_id = ?2 AND created_at >= ?3", memberId, START + 1_200_000));
    const bad = await t.json("GET", `${URL_}?format=csv&since=nope`, { token: admin.access_token });
    expect(bad.status).toBe(422);
  });

  test("cells that would start a formula get an apostrophe; quotes, commas and line breaks are quoted", async () => {
    await write(admin.tenant.id, admin.user.id, "=HYPERLINK(\"http://evil.test\",\"x\")", START + 3_600_000 * 5, { note: "a,b\nc" });
    await write(admin.tenant.id, admin.user.id, "+1", START + 3_600_000 * 5 + 1);
    await write(admin.tenant.id, admin.user.id, "@SUM(A1)", START + 3_600_000 * 5 + 2);
    await write(admin.tenant.id, admin.user.id, "-2", START + 3_600_000 * 5 + 3);
    const res = await t.request("GET", `${URL_}?since=2029-12-31T05:00:00Z&until=2029-12-31T06:00:00Z`, { token: admin.access_token, headers: { accept: "text/csv" } });
    const text = await res.text();
    const rows = parseCsv(text);
    expect(rows.slice(1).map((r) => r[5])).toEqual(["'-2", "'@SUM(A1)", "'+1", "'=HYPERLINK(\"http://evil.test\",\"x\")"]);
    expect(text).toContain('"\'=HYPERLINK(""http://evil.test"",""x"")"');
    expect(JSON.parse(rows.at(-1)![8]!)).toEqual({ note: "a,b\nc" });
  });
});
