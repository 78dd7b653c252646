import { openMailOfFile } from "../support/outbox";
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { appCode } from "../auth/two-factor/rfc6238";
import { type Answer, type CallOptions, type Server, startServer } from "../server";

/**
 * Races, run for real: two `suite serve` processes share one database file
 * (as during a rolling restart), and each race sends half its requests to each. Each race must
 * end exactly as docs/interface.md says, and no SQLITE_BUSY (or any 5xx) may reach a caller: the two
 * processes' write transactions really do contend for the file's lock here, which one
 * process's single connection never shows.
 */

const dir = mkdtempSync(join(tmpdir(), "suite-races-"));
const db = join(dir, "suite.db");
let servers: Server[] = [];
const answers: Answer[] = [];
const outcomes: string[] = [];

/** The i-th request of a race goes to server i mod 2. */
async function call(i: number, method: string, path: string, o: CallOptions = {}): Promise<Answer> {
  const a = await servers[i % 2]!.call(method, path, o);
  answers.push(a);
  return a;
}
const race = <T>(n: number, fn: (i: number) => Promise<T>) => Promise.all(Array.from({ length: n }, (_, i) => fn(i)));
const count = (list: Answer[], status: number, code?: string) => list.filter((a) => a.status === status && (!code || a.body?.code === code)).length;
function query<T>(sql: string, ...params: string[]): T[] {
  const d = new Database(db, { readonly: true });
  try {
    return d.query(sql).all(...params) as T[];
  } finally {
    d.close();
  }
}

async function signup(subdomain: string, email = `admin@${subdomain}.test`) {
  const r = await call(0, "POST", "/api/v1/auth/signup", { body: { email, password: "two servers password 1", tenant_name: subdomain, subdomain } });
  expect(r.status).toBe(201);
  return r.body as { access_token: string; refresh_token: string; tenant: { id: string }; user: { id: string } };
}

beforeAll(async () => {
  // The first server creates the database; the second opens it as it is.
  servers = [await startServer(db)];
  servers.push(await startServer(db));
});

afterAll(async () => {
  const stopped = await Promise.all(servers.map((s) => s.stop()));
  rmSync(dir, { recursive: true, force: true });
  for (const s of stopped) {
    expect(s.code).toBe(0);
    expect(s.stderr).toBe("");
    expect(s.stdout).not.toMatch(/SQLITE_BUSY|database is locked|unhandled error/i);
  }
});

describe("races between two server processes on one database", () => {
  test("signups racing for one subdomain: exactly one 201, the rest 409 subdomain_taken", async () => {
    const rs = await race(10, (i) =>
      call(i, "POST", "/api/v1/auth/signup", { body: { email: `founder${i}@race.test`, password: "two servers password 1", tenant_name: "Race", subdomain: "race" } }),
    );
    expect(count(rs, 201)).toBe(1);
    expect(count(rs, 409, "subdomain_taken")).toBe(9);
    outcomes.push("10 signups for one subdomain: 1 created, 9 subdomain_taken");
    expect(query("SELECT id FROM tenants WHERE subdomain = 'race'")).toHaveLength(1);
    const tenant = query<{ id: string }>("SELECT id FROM tenants WHERE subdomain = 'race'")[0]!.id;
    expect(query("SELECT id FROM users WHERE tenant_id = ?1", tenant)).toHaveLength(1);
  });

  test("two tabs refreshing with the same token (here ten, on both servers): all 200, one session, one rotation", async () => {
    const org = await signup("tabs");
    const rs = await race(10, (i) => call(i, "POST", "/api/v1/auth/refresh", { body: { refresh_token: org.refresh_token }, tenant: "tabs" }));
    expect(rs.map((r) => r.status)).toEqual(Array(10).fill(200));
    const sids = new Set(rs.map((r) => JSON.parse(atob(r.body.access_token.split(".")[1])).sid));
    expect(sids.size).toBe(1);
    expect(new Set(rs.map((r) => r.body.refresh_token)).size).toBe(1);
    outcomes.push("10 tabs refreshing one token: 10 × 200, one session");
    const sessions = query<{ refresh_gen: number; revoked_at: number | null }>("SELECT refresh_gen, revoked_at FROM sessions WHERE user_id = ?1", org.user.id);
    expect(sessions).toEqual([{ refresh_gen: 1, revoked_at: null }]);
    // Every tab's new access token works on either server.
    for (const [i, r] of rs.entries()) expect((await call(i + 1, "GET", "/api/v1/auth/me", { token: r.body.access_token, tenant: "tabs" })).status).toBe(200);
  });

  test("two accepts of one invitation: one 201, the other 400 invitation_invalid, one user", async () => {
    const org = await signup("invites");
    expect((await call(1, "POST", "/api/v1/users/invite", { token: org.access_token, tenant: "invites", body: { email: "new@invites.test" } })).status).toBe(201);
    const link = openMailOfFile(db, query<{ id: string; link: string }>("SELECT id, link FROM mail_outbox WHERE recipient = 'new@invites.test'")[0]!).link;
    const token = decodeURIComponent(new URL(link).hash.replace(/^#token=/, ""));
    const rs = await race(2, (i) => call(i, "POST", "/api/v1/auth/invitations/accept", { body: { token, password: `member password ${i}`, full_name: `Tab ${i}` } }));
    expect(count(rs, 201)).toBe(1);
    expect(count(rs, 400, "invitation_invalid")).toBe(1);
    outcomes.push("2 accepts of one invitation: 1 user");
    expect(query("SELECT id FROM users WHERE tenant_id = ?1 AND email = 'new@invites.test'", org.tenant.id)).toHaveLength(1);
    expect(query("SELECT id FROM invitations WHERE tenant_id = ?1 AND accepted_at IS NOT NULL", org.tenant.id)).toHaveLength(1);
  });

  test("50 wrong 2FA codes at once: at most 5 checked, the rest 429 with Retry-After", async () => {
    const org = await signup("twofa");
    const setup = await call(0, "POST", "/api/v1/auth/2fa/setup", { token: org.access_token, tenant: "twofa" });
    const secret = setup.body.secret as string;
    expect((await call(1, "POST", "/api/v1/auth/2fa/confirm", { token: org.access_token, tenant: "twofa", body: { code: appCode(secret, Date.now()) } })).status).toBe(200);
    const login = await call(0, "POST", "/api/v1/auth/login", { body: { email: "admin@twofa.test", password: "two servers password 1" }, tenant: "twofa" });
    expect(login.body.requires_2fa).toBe(true);
    // Far from every code the window accepts.
    const wrong = String((Number(appCode(secret, Date.now())) + 500_000) % 1_000_000).padStart(6, "0");
    const rs = await race(50, (i) => call(i, "POST", "/api/v1/auth/2fa/verify", { body: { temp_token: login.body.temp_token, code: wrong }, tenant: "twofa" }));
    const checked = count(rs, 401, "invalid_2fa_code");
    const limited = rs.filter((r) => r.status === 429 && r.body.code === "rate_limited" && Number(r.headers.get("retry-after")) >= 1);
    expect(checked).toBeGreaterThanOrEqual(1);
    expect(checked).toBeLessThanOrEqual(5);
    expect(checked + limited.length).toBe(50);
    outcomes.push(`50 wrong 2FA codes: ${checked} checked, ${limited.length} × 429`);
    expect(query<{ failures: number }>("SELECT failures FROM user_totp WHERE user_id = ?1", org.user.id)).toEqual([{ failures: checked }]);
  });

  test("concurrent deal updates: every one 200, no field lost, counts and search agree with the rows", async () => {
    const org = await signup("deals");
    const crm = (i: number, method: string, path: string, body?: unknown) => call(i, method, `/api/v1/crm${path}`, { token: org.access_token, tenant: "deals", body });
    const account = (await crm(0, "POST", "/accounts", { name: "Contended Ltd" })).body;
    const deal = (await crm(1, "POST", "/deals", { title: "original title", account_id: account.id, value: "1.00" })).body;

    // Half the writers change the title, half the value, all at once and on both servers.
    const rs = await race(40, (i) =>
      crm(i, "PATCH", `/deals/${deal.id}`, i % 4 < 2 ? { title: `title from writer ${i}` } : { value: `${1000 + i}.00` }),
    );
    expect(rs.map((r) => r.status)).toEqual(Array(40).fill(200));
    const final = (await crm(0, "GET", `/deals/${deal.id}`)).body;
    expect(final.title).toMatch(/^title from writer \d+$/);
    expect(final.value).toMatch(/^10\d\d\.00$/);
    outcomes.push("40 concurrent PATCHes of one deal: 40 × 200, no field lost");

    // Creates and deletes racing: the kept count is the rows' count, and search finds the rest.
    const created = await race(20, (i) => crm(i, "POST", "/deals", { title: `racer ${i} zebrafish`, account_id: account.id }));
    expect(created.map((r) => r.status)).toEqual(Array(20).fill(201));
    const deleted = await race(10, (i) => crm(i, "DELETE", `/deals/${created[i * 2]!.body.id}`));
    expect(deleted.map((r) => r.status)).toEqual(Array(10).fill(204));
    const rows = query("SELECT id FROM deals WHERE tenant_id = ?1", org.tenant.id).length;
    expect(rows).toBe(11);
    expect((await crm(1, "GET", "/deals")).body.total).toBe(rows);
    const found = (await crm(0, "GET", "/deals?search=zebrafish&size=100")).body;
    expect(found.total).toBe(10);
    expect(found.items.map((d: { title: string }) => d.title).sort()).toEqual(
      created.filter((_, i) => i % 2 === 1).map((r) => r.body.title).sort(),
    );
  });

  test("no answer of any race was a 5xx or mentioned the database's lock", () => {
    expect(answers.length).toBeGreaterThan(150);
    expect(answers.filter((a) => a.status >= 500)).toEqual([]);
    expect(answers.filter((a) => /SQLITE|database is locked/i.test(a.text))).toEqual([]);
    process.stdout.write(`races: ${answers.length} requests over 2 server processes on one file, 0 × 5xx, 0 SQLITE_BUSY; ${outcomes.join("; ")}\n`);
  });
});
