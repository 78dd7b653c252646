import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setCookies, testApp } from "../helpers";
import { testSql } from "../support/sql";

const MANY = { signupPerIp: { name: "signup-ip", max: 1000, windowMs: 3_600_000 } };
const t = testApp({ limits: MANY });
afterAll(() => t.close());

const PASSWORD = "correct horse battery";
const body = (subdomain: string, extra: Record<string, unknown> = {}) => ({
  email: `admin@${subdomain}.test`,
  password: PASSWORD,
  tenant_name: `Org ${subdomain}`,
  subdomain,
  ...extra,
});
const signup = (b: unknown) => t.json("POST", "/api/v1/auth/signup", { body: b });
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

const q = <T>(sql: string, ...params: string[]) => testSql(t.ctx).all<T>(sql, ...params);

describe("a successful signup", () => {
  test("answers 201 with exactly the tenant, the user and a token pair", async () => {
    const r = await signup(body("shape", { full_name: "Ada Admin" }));
    expect(r.status).toBe(201);
    expect(Object.keys(r.body).sort()).toEqual(["access_token", "refresh_token", "tenant", "token_type", "user"]);
    expect(Object.keys(r.body.tenant).sort()).toEqual(["created_at", "id", "modules", "name", "require_passkey_for_admins", "require_passkey_or_2fa", "subdomain"]);
    // A new organization asks for no passkey or second step until an admin turns the rules on.
    expect(r.body.tenant).toMatchObject({ require_passkey_or_2fa: false, require_passkey_for_admins: false });
    expect(Object.keys(r.body.user).sort()).toEqual(["created_at", "email", "email_verified", "email_verified_at", "email_verified_by", "full_name", "id", "profile_id", "role", "tenant_id"]);
    expect(r.body.token_type).toBe("bearer");
    expect(r.body.tenant).toMatchObject({ name: "Org shape", subdomain: "shape", modules: ["crm", "users"] });
    expect(r.body.tenant.created_at).toMatch(ISO);
    expect(r.body.user).toMatchObject({ tenant_id: r.body.tenant.id, email: "admin@shape.test", full_name: "Ada Admin", role: "admin" });
    expect(r.body.user.created_at).toMatch(ISO);
    expect(typeof r.body.access_token).toBe("string");
    expect(typeof r.body.refresh_token).toBe("string");
    expect(r.body.access_token).not.toBe(r.body.refresh_token);

    const text = JSON.stringify(r.body);
    expect(text).not.toContain("password");
    expect(text).not.toContain("$argon2");
    expect(text).not.toContain(PASSWORD);

    // The pair works: the new admin is signed in.
    const me = await t.json("GET", "/api/v1/auth/me", { token: r.body.access_token, tenant: "shape" });
    expect(me.status).toBe(200);
    expect(me.body.user.id).toBe(r.body.user.id);
  });

  test("sets both session cookies", async () => {
    const r = await signup(body("cookies"));
    expect(r.status).toBe(201);
    const c = setCookies(r.res);
    expect(c.svc_session?.value).toBe(r.body.access_token);
    expect(c.svc_session?.attrs).toMatchObject({ httponly: true, path: "/", samesite: "Lax", "max-age": "900" });
    expect(c.svc_refresh?.value).toBe(r.body.refresh_token);
    expect(c.svc_refresh?.attrs).toMatchObject({ httponly: true, path: "/api/v1/auth", samesite: "Strict" });
    const refreshAge = Number(c.svc_refresh?.attrs["max-age"]);
    expect(refreshAge).toBeGreaterThan(2_592_000 - 60);
    expect(refreshAge).toBeLessThanOrEqual(2_592_000);
  });

  test("creates the two profiles, the admin on Administrator, a signup session and an audit line", async () => {
    const r = await signup(body("profiles"));
    const tid = r.body.tenant.id as string;
    const profiles = await q<{ id: string; name: string; is_admin: number }>("SELECT id, name, is_admin FROM profiles WHERE tenant_id = ? ORDER BY name", tid);
    expect(profiles.map((p) => [p.name, p.is_admin])).toEqual([["Administrator", 1], ["Standard user", 0]]);
    expect(r.body.user.profile_id).toBe(profiles[0]!.id);
    const users = await q<{ id: string; role: string; profile_id: string; password_hash: string }>("SELECT * FROM users WHERE tenant_id = ?", tid);
    expect(users).toHaveLength(1);
    expect(users[0]).toMatchObject({ id: r.body.user.id, role: "admin", profile_id: profiles[0]!.id });
    expect(users[0]!.password_hash.startsWith("$argon2id$")).toBe(true);
    expect(await q("SELECT method FROM sessions WHERE tenant_id = ? AND user_id = ?", tid, r.body.user.id)).toEqual([{ method: "signup" }]);
    const audit = await q<{ action: string; detail: string }>("SELECT action, detail FROM audit_log WHERE tenant_id = ?", tid);
    expect(audit.map((a) => a.action)).toContain("tenant.signup");
    expect(JSON.stringify(audit)).not.toContain(PASSWORD);
  });

  test("seeds the pipeline new, qualified, proposal, negotiation, won, lost in that order", async () => {
    const r = await signup(body("stages"));
    const stages = await q<{ key: string; position: number; is_won: number; is_lost: number; color: string; probability: number }>(
      "SELECT * FROM pipeline_stages WHERE tenant_id = ? ORDER BY position",
      r.body.tenant.id,
    );
    expect(stages.map((s) => s.key)).toEqual(["new", "qualified", "proposal", "negotiation", "won", "lost"]);
    expect(stages.map((s) => s.position)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(stages.filter((s) => s.is_won === 1).map((s) => s.key)).toEqual(["won"]);
    expect(stages.filter((s) => s.is_lost === 1).map((s) => s.key)).toEqual(["lost"]);
    for (const s of stages) {
      expect(s.color).toMatch(/^#[0-9a-f]{6}$/);
      expect(s.probability).toBeGreaterThanOrEqual(0);
      expect(s.probability).toBeLessThanOrEqual(100);
    }
  });

  test("modules: the default, the given ones deduplicated, or none", async () => {
    const modules = async (tid: string) => (await q<{ module: string }>("SELECT module FROM tenant_modules WHERE tenant_id = ? ORDER BY module", tid)).map((m) => m.module);
    const def = await signup(body("mod-default"));
    expect(def.body.tenant.modules).toEqual(["crm", "users"]);
    expect(await modules(def.body.tenant.id)).toEqual(["crm", "users"]);

    const crm = await signup(body("mod-crm", { initial_modules: ["crm", "crm"] }));
    expect(crm.status).toBe(201);
    expect(crm.body.tenant.modules).toEqual(["crm"]);
    expect(await modules(crm.body.tenant.id)).toEqual(["crm"]);

    const both = await signup(body("mod-both", { initial_modules: ["users", "crm", "users"] }));
    expect([...both.body.tenant.modules].sort()).toEqual(["crm", "users"]);
    expect(await modules(both.body.tenant.id)).toEqual(["crm", "users"]);

    const none = await signup(body("mod-none", { initial_modules: [] }));
    expect(none.status).toBe(201);
    expect(none.body.tenant.modules).toEqual([]);
    expect(await modules(none.body.tenant.id)).toEqual([]);

    const unknown = await signup(body("mod-bad", { initial_modules: ["crm", "billing"] }));
    expect(unknown.status).toBe(422);
    expect(unknown.body.detail[0].loc).toEqual(["body", "initial_modules", 1]);
  });

  test("the email is stored trimmed and lower-cased; names are trimmed", async () => {
    const r = await signup(body("emails", { email: "  Mixed.Case@Example.COM ", tenant_name: "  Spaced Org  ", full_name: "   " }));
    expect(r.status).toBe(201);
    expect(r.body.user.email).toBe("mixed.case@example.com");
    expect(r.body.user.full_name).toBeNull();
    expect(r.body.tenant.name).toBe("Spaced Org");
    expect(await q("SELECT email FROM users WHERE tenant_id = ?", r.body.tenant.id)).toEqual([{ email: "mixed.case@example.com" }]);
    const login = await t.json("POST", "/api/v1/auth/login", { body: { email: "MIXED.case@example.com", password: PASSWORD }, headers: { "x-tenant": "emails" } });
    expect(login.status).toBe(200);
  });

  test("the same email may sign up two organizations", async () => {
    const a = await signup(body("same-one", { email: "founder@example.org" }));
    const b = await signup(body("same-two", { email: "Founder@Example.org" }));
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(a.body.user.id).not.toBe(b.body.user.id);
    expect(await q("SELECT tenant_id FROM users WHERE email = 'founder@example.org'")).toHaveLength(2);
  });
});

describe("subdomains", () => {
  const expect422 = async (subdomain: unknown, type?: string) => {
    const r = await signup({ ...body("placeholder"), subdomain });
    expect(r.status).toBe(422);
    const item = (r.body.detail as { loc: unknown[]; type: string }[]).find((i) => i.loc[1] === "subdomain");
    expect(item).toBeDefined();
    expect(item!.loc).toEqual(["body", "subdomain"]);
    if (type) expect(item!.type).toBe(type);
  };

  test("3 to 63 characters", async () => {
    await expect422("ab", "string_too_short");
    await expect422("a".repeat(64), "string_too_long");
    expect((await signup(body("abc"))).status).toBe(201);
    expect((await signup(body("b".repeat(63)))).status).toBe(201);
  });

  test("only a-z, 0-9 and '-', not at either end", async () => {
    for (const bad of ["-abc", "abc-", "a_bc", "ab.cd", "ab cd", "abç", "ab/cd", "ab*"]) await expect422(bad, "string_pattern_mismatch");
    await expect422(42, "string_type");
    expect((await signup(body("a-1-b"))).status).toBe(201);
    expect((await signup(body("123"))).status).toBe(201);
  });

  test("upper case is taken as lower case", async () => {
    const r = await signup(body("Upper-Case"));
    expect(r.status).toBe(201);
    expect(r.body.tenant.subdomain).toBe("upper-case");
    const again = await signup(body("upper-case"));
    expect(again.status).toBe(409);
  });

  test("reserved names are refused", async () => {
    for (const name of ["www", "api", "app", "admin", "mail", "static", "WWW"]) await expect422(name, "value_error");
    expect(await q("SELECT subdomain FROM tenants WHERE subdomain IN ('www','api','app','admin','mail','static')")).toEqual([]);
  });

  test("a taken subdomain is 409 subdomain_taken and changes nothing", async () => {
    const first = await signup(body("taken"));
    expect(first.status).toBe(201);
    const counts = () => q("SELECT (SELECT count(*) FROM tenants) AS t, (SELECT count(*) FROM users) AS u, (SELECT count(*) FROM profiles) AS p");
    const before = await counts();
    const r = await signup(body("taken", { email: "someone.else@example.com" }));
    expect(r.status).toBe(409);
    expect(r.body).toEqual({ detail: expect.any(String), code: "subdomain_taken" });
    expect(await counts()).toEqual(before);
  });

  test("two signups racing for one subdomain: one 201, one 409, one tenant and no leftovers", async () => {
    const [a, b] = await Promise.all([signup(body("race", { email: "one@race.test" })), signup(body("race", { email: "two@race.test" }))]);
    expect([a.status, b.status].sort()).toEqual([201, 409]);
    const loser = a.status === 409 ? a : b;
    expect(loser.body.code).toBe("subdomain_taken");
    const tenants = await q<{ id: string }>("SELECT id FROM tenants WHERE subdomain = 'race'");
    expect(tenants).toHaveLength(1);
    expect(await q("SELECT count(*) AS n FROM users WHERE email IN ('one@race.test', 'two@race.test')")).toEqual([{ n: 1 }]);
    expect(await q("SELECT count(*) AS n FROM profiles WHERE tenant_id = ?", tenants[0]!.id)).toEqual([{ n: 2 }]);
    expect(await q("SELECT count(*) AS n FROM pipeline_stages WHERE tenant_id = ?", tenants[0]!.id)).toEqual([{ n: 6 }]);
    expect(await q("SELECT count(*) AS n FROM tenant_modules WHERE tenant_id NOT IN (SELECT id FROM tenants)")).toEqual([{ n: 0 }]);
  });

  test("two servers on one database file racing for one subdomain: one 201, one 409", async () => {
    const dir = mkdtempSync(join(tmpdir(), "suite-signup-"));
    const file = join(dir, "suite.db");
    const one = testApp({ db: file, limits: MANY });
    const two = testApp({ db: file, limits: MANY });
    try {
      const results = await Promise.all(
        [one, two].map((app, i) => app.json("POST", "/api/v1/auth/signup", { body: body("shared", { email: `n${i}@shared.test` }) })),
      );
      expect(results.map((r) => r.status).sort()).toEqual([201, 409]);
      expect(await testSql(one.ctx).get("SELECT count(*) AS n FROM tenants WHERE subdomain = 'shared'")).toEqual({ n: 1 });
      expect(await testSql(two.ctx).get("SELECT count(*) AS n FROM users")).toEqual({ n: 1 });
    } finally {
      one.close();
      two.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the rest of the body", () => {
  test("password 8 to 128 characters, tenant_name 1 to 100, a valid email, all required", async () => {
    const field = async (extra: Record<string, unknown>, loc: string) => {
      const r = await signup(body("fields", extra));
      expect(r.status).toBe(422);
      expect(r.body.detail.map((i: { loc: unknown[] }) => i.loc)).toContainEqual(["body", loc]);
    };
    await field({ password: "7 chars" }, "password");
    await field({ password: "x".repeat(129) }, "password");
    await field({ tenant_name: "" }, "tenant_name");
    await field({ tenant_name: "n".repeat(101) }, "tenant_name");
    await field({ email: "not an email" }, "email");
    const missing = await signup({ password: PASSWORD });
    expect(missing.status).toBe(422);
    const locs = missing.body.detail.map((i: { loc: unknown[] }) => i.loc[1]);
    expect(locs).toEqual(expect.arrayContaining(["email", "tenant_name", "subdomain"]));
    expect(await q("SELECT id FROM tenants WHERE subdomain = 'fields'")).toEqual([]);
    expect((await signup(body("pw-128", { password: "x".repeat(128) }))).status).toBe(201);
  });

  test("the per-IP limit applies to signup", async () => {
    const limited = testApp({ limits: { signupPerIp: { name: "signup-ip", max: 2, windowMs: 3_600_000 } } });
    try {
      expect((await limited.json("POST", "/api/v1/auth/signup", { body: body("lim-one") })).status).toBe(201);
      expect((await limited.json("POST", "/api/v1/auth/signup", { body: body("lim-two") })).status).toBe(201);
      const third = await limited.json("POST", "/api/v1/auth/signup", { body: body("lim-three") });
      expect(third.status).toBe(429);
      expect(third.headers.get("retry-after")).toMatch(/^\d+$/);
      expect(third.body.code).toBe("rate_limited");
    } finally {
      limited.close();
    }
  });
});
