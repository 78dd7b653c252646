/** Passkeys end to end through the API, with a software authenticator (tests/support/soft-authenticator.ts). */
import { afterAll, describe, expect, test } from "bun:test";
import { NO_PASSWORD } from "../../../src/auth/sign-in-providers/no-password";
import type { TestApp } from "../../helpers";
import { SoftAuthenticator } from "../../support/soft-authenticator";
import { testSql } from "../../support/sql";
import { ME, SESSIONS, allAudit, clockedApp, login } from "../support";

const P = "/api/v1/auth/passkeys";
const REAUTH = "/api/v1/auth/reauthenticate";
const apps: TestApp[] = [];
afterAll(async () => {
  for (const a of apps) await a.close();
});

type Org = Awaited<ReturnType<TestApp["signup"]>>;

async function world(sub = "acme") {
  const { t, clock } = clockedApp();
  apps.push(t);
  const org = await t.signup(sub);
  const key = new SoftAuthenticator(`http://${sub}.localhost:8000`);
  return { t, clock, org, key };
}

/** Registers a passkey for the signed-in `token` on `sub`'s host; answers the verify's response. */
async function register(t: TestApp, key: SoftAuthenticator, sub: string, token: string, twist = {}, name?: string) {
  const o = await t.json("POST", `${P}/register/options`, { token, tenant: sub });
  expect(o.status).toBe(200);
  return t.json("POST", `${P}/register/verify`, { token, tenant: sub, body: { response: key.create(o.body, twist), ...(name ? { name } : {}) } });
}

async function options(t: TestApp, sub: string | null) {
  const r = await t.json("POST", `${P}/login/options`, sub ? { tenant: sub } : {});
  expect(r.status).toBe(200);
  return r.body as { challenge: string; rpId: string };
}

async function signIn(t: TestApp, key: SoftAuthenticator, sub: string, twist = {}) {
  const o = await options(t, sub);
  return t.json("POST", `${P}/login/verify`, { tenant: sub, body: { response: key.get(o, twist) } });
}

const failures = async (t: TestApp) =>
  (await allAudit(t)).filter((a) => a.action === "login.failure").map((a) => JSON.parse(a.detail as string) as { method?: string; reason: string });

describe("register", () => {
  test("creation options: discoverable, user verification required, attestation none, the organization's host as RP on localhost", async () => {
    const { t, org } = await world();
    const o = await t.json("POST", `${P}/register/options`, { token: org.access_token, tenant: "acme" });
    expect(o.status).toBe(200);
    expect(o.body).toMatchObject({
      rp: { id: "acme.localhost" },
      user: { name: org.email },
      attestation: "none",
      authenticatorSelection: { residentKey: "required", requireResidentKey: true, userVerification: "required" },
    });
    // The user handle names the account, and nothing else (no address).
    expect(Buffer.from(o.body.user.id, "base64url").toString()).toBe(`${org.tenant.id}.${org.user.id}`);
  });

  test("201 with the passkey; several per user; listed, renamed; the second excludes the first", async () => {
    const { t, clock, org, key } = await world();
    const r = await register(t, key, "acme", org.access_token, {}, "Laptop");
    clock.advance(1000);
    expect(r.status).toBe(201);
    expect(r.body).toEqual({ id: expect.any(String), name: "Laptop", created_at: expect.any(String), last_used_at: null, backed_up: false, transports: ["internal"] });
    const o = await t.json("POST", `${P}/register/options`, { token: org.access_token, tenant: "acme" });
    expect(o.body.excludeCredentials).toEqual([{ id: key.credentials[0]!.id.toString("base64url"), type: "public-key", transports: ["internal"] }]);
    expect((await register(t, key, "acme", org.access_token)).status).toBe(201);
    const list = await t.json("GET", P, { token: org.access_token, tenant: "acme" });
    expect(list.body.map((k: { name: string }) => k.name)).toEqual(["Laptop", expect.stringMatching(/^Passkey added \d{4}-\d\d-\d\d$/)]);
    const renamed = await t.json("PATCH", `${P}/${r.body.id}`, { token: org.access_token, tenant: "acme", body: { name: "Work laptop" } });
    expect(renamed).toMatchObject({ status: 200, body: { id: r.body.id, name: "Work laptop" } });
    expect((await allAudit(t)).filter((a) => String(a.action).startsWith("passkey.")).map((a) => a.action)).toEqual(["passkey.registered", "passkey.registered", "passkey.renamed"]);
  });

  test("refused: without user verification, from another origin, for another RP, a replayed challenge; none stored", async () => {
    const { t, org, key } = await world();
    for (const twist of [{ uv: false }, { origin: "http://evil.localhost:8000" }, { rpId: "evil.localhost" }]) {
      const r = await register(t, key, "acme", org.access_token, twist);
      expect({ twist, status: r.status, code: r.body.code }).toEqual({ twist, status: 400, code: "passkey_registration_failed" });
    }
    const o = await t.json("POST", `${P}/register/options`, { token: org.access_token, tenant: "acme" });
    const first = await t.json("POST", `${P}/register/verify`, { token: org.access_token, tenant: "acme", body: { response: key.create(o.body) } });
    expect(first.status).toBe(201);
    const again = await t.json("POST", `${P}/register/verify`, { token: org.access_token, tenant: "acme", body: { response: key.create(o.body) } });
    expect(again).toMatchObject({ status: 400, body: { code: "passkey_registration_failed" } });
    expect((await t.json("GET", P, { token: org.access_token, tenant: "acme" })).body.length).toBe(1);
    const reasons = (await allAudit(t)).filter((a) => a.action === "passkey.register_failure").map((a) => JSON.parse(a.detail as string).reason as string);
    expect(reasons.length).toBe(4);
    expect(reasons[3]).toBe("unknown_or_spent_challenge");
  });

  test("needs a recent sign-in; a passkey is step-up proof, the password still is", async () => {
    const { t, clock, org, key } = await world();
    expect((await register(t, key, "acme", org.access_token)).status).toBe(201);
    clock.advance(11 * 60_000);
    const stale = await t.json("POST", `${P}/register/options`, { token: org.access_token, tenant: "acme" });
    expect(stale).toMatchObject({ status: 403, body: { code: "reauthentication_required" } });
    const o = await options(t, "acme");
    const re = await t.json("POST", REAUTH, { token: org.access_token, tenant: "acme", body: { passkey: key.get(o) } });
    expect(re).toMatchObject({ status: 200, body: { detail: "Reauthenticated." } });
    expect((await t.json("POST", `${P}/register/options`, { token: org.access_token, tenant: "acme" })).status).toBe(200);
    // The same answer again: its challenge is spent.
    const replay = await t.json("POST", REAUTH, { token: org.access_token, tenant: "acme", body: { passkey: key.get(o, { counter: 99 }) } });
    expect(replay).toMatchObject({ status: 401, body: { code: "invalid_passkey" } });
    expect(replay.res.headers.get("www-authenticate")).toBe("Bearer");
    // Neither proof is 422 at password, as before passkeys; both at once at passkey.
    expect((await t.json("POST", REAUTH, { token: org.access_token, tenant: "acme", body: {} })).body.detail[0]).toMatchObject({ loc: ["body", "password"], type: "missing" });
    const both = await t.json("POST", REAUTH, { token: org.access_token, tenant: "acme", body: { password: org.password, passkey: key.get(await options(t, "acme")) } });
    expect(both.body.detail[0].loc).toEqual(["body", "passkey"]);
    expect((await t.json("POST", REAUTH, { token: org.access_token, tenant: "acme", body: { password: org.password } })).status).toBe(200);
  });
});

describe("sign in", () => {
  test("a token pair and cookies, method passkey, no 2FA step; last_used_at and the counter move", async () => {
    const { t, org, key } = await world();
    const reg = await register(t, key, "acme", org.access_token);
    const r = await signIn(t, key, "acme");
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(["access_token", "refresh_token", "token_type"]);
    expect(r.res.headers.getSetCookie().map((c) => c.split("=")[0]).sort()).toEqual(["svc_refresh", "svc_session"]);
    expect((await t.json("GET", ME, { token: r.body.access_token })).body.user.id).toBe(org.user.id);
    const sessions = await t.json("GET", SESSIONS, { token: r.body.access_token });
    expect(sessions.body.find((s: { current: boolean }) => s.current).method).toBe("passkey");
    const rows = await testSql(t.ctx).all<{ counter: number; last_used_at: number | null }>("SELECT counter, last_used_at FROM passkeys WHERE id = ?1", reg.body.id);
    expect(Number(rows[0]!.counter)).toBe(1);
    expect(rows[0]!.last_used_at).not.toBeNull();
    const success = (await allAudit(t)).filter((a) => a.action === "login.success").map((a) => JSON.parse(a.detail as string).method);
    expect(success).toContain("passkey");
  });

  test("with 2FA on, a passkey still signs in at once (user verification is the second factor)", async () => {
    const { t, org, key } = await world();
    await register(t, key, "acme", org.access_token);
    await testSql(t.ctx).run("INSERT INTO user_totp (user_id, tenant_id, secret_enc, enabled_at, created_at, updated_at) VALUES (?1, ?2, 'x', 1, 1, 1)", org.user.id, org.tenant.id);
    expect((await login(t, org.email, org.password, { "x-tenant": "acme" })).body.requires_2fa).toBe(true);
    expect((await signIn(t, key, "acme")).status).toBe(200);
  });

  test("a counter that does not move forward is a cloned authenticator: refused and audited", async () => {
    const { t, org, key } = await world();
    await register(t, key, "acme", org.access_token);
    expect((await signIn(t, key, "acme", { counter: 5 })).status).toBe(200);
    expect((await signIn(t, key, "acme", { counter: 5 })).status).toBe(401);
    expect((await signIn(t, key, "acme", { counter: 3 })).status).toBe(401);
    expect((await signIn(t, key, "acme", { counter: 6 })).status).toBe(200);
    const actions = (await allAudit(t)).map((a) => a.action);
    expect(actions.filter((a) => a === "passkey.clone_suspected").length).toBe(2);
    expect((await failures(t)).map((f) => f.reason)).toEqual(["counter_did_not_advance", "counter_did_not_advance"]);
  });

  test("refused: wrong origin, wrong RP, no user verification, a replayed challenge, another challenge; each 401 invalid_passkey, audited", async () => {
    const { t, org, key } = await world();
    await register(t, key, "acme", org.access_token);
    for (const twist of [{ origin: "http://evil.localhost:8000" }, { rpId: "evil.localhost" }, { uv: false }, { challenge: "bm90LWEtY2hhbGxlbmdl" }]) {
      const r = await signIn(t, key, "acme", twist);
      expect({ twist, status: r.status, code: r.body.code, www: r.res.headers.get("www-authenticate") }).toEqual({ twist, status: 401, code: "invalid_passkey", www: "Bearer" });
    }
    const o = await options(t, "acme");
    const answer = key.get(o);
    expect((await t.json("POST", `${P}/login/verify`, { tenant: "acme", body: { response: answer } })).status).toBe(200);
    const replay = await t.json("POST", `${P}/login/verify`, { tenant: "acme", body: { response: answer } });
    expect(replay).toMatchObject({ status: 401, body: { code: "invalid_passkey" } });
    const reasons = (await failures(t)).map((f) => f.reason);
    expect(reasons.slice(0, 3).every((r) => r.startsWith("verification_failed"))).toBe(true);
    expect(reasons.slice(3)).toEqual(["unknown_or_spent_challenge", "unknown_or_spent_challenge"]);
    expect((await failures(t)).every((f) => f.method === "passkey")).toBe(true);
  });

  test("a challenge is good for 5 minutes", async () => {
    const { t, clock, org, key } = await world();
    await register(t, key, "acme", org.access_token);
    const o = await options(t, "acme");
    clock.advance(5 * 60_000 + 1);
    expect((await t.json("POST", `${P}/login/verify`, { tenant: "acme", body: { response: key.get(o) } })).status).toBe(401);
  });

  test("another organization's passkey does not sign in here, nor step up there", async () => {
    const { t, org, key } = await world("acme");
    await register(t, key, "acme", org.access_token);
    const other = await t.signup("globex");
    // Globex's challenge answered by Acme's credential, on Globex's host (as a phishing page of Globex's would).
    const o = await options(t, "globex");
    const r = await t.json("POST", `${P}/login/verify`, { tenant: "globex", body: { response: key.get(o, { cred: key.credentials[0], rpId: "globex.localhost", origin: "http://globex.localhost:8000" }) } });
    expect(r).toMatchObject({ status: 401, body: { code: "invalid_passkey" } });
    // An Acme challenge, verified on Globex's host: the host names another organization.
    const acme = await options(t, "acme");
    const answer = key.get(acme);
    const cross = await t.json("POST", `${P}/login/verify`, { tenant: "globex", body: { response: answer } });
    expect(cross).toMatchObject({ status: 401, body: { code: "invalid_passkey" } });
    // Not spent there: on its own host it still signs in.
    expect((await t.json("POST", `${P}/login/verify`, { tenant: "acme", body: { response: answer } })).status).toBe(200);
    // Globex's admin presenting Acme's passkey as step-up proof.
    const step = await t.json("POST", REAUTH, { token: other.access_token, tenant: "globex", body: { passkey: key.get(await options(t, "globex"), { rpId: "globex.localhost", origin: "http://globex.localhost:8000" }) } });
    expect(step).toMatchObject({ status: 401, body: { code: "invalid_passkey" } });
    expect((await failures(t)).map((f) => f.reason)).toEqual(["another_organization", "unknown_or_spent_challenge"]);
  });

  test("a removed passkey no longer signs in; the last way in cannot be removed", async () => {
    const { t, org, key } = await world();
    const a = await register(t, key, "acme", org.access_token);
    const b = await register(t, key, "acme", org.access_token);
    expect((await t.json("DELETE", `${P}/${a.body.id}`, { token: org.access_token, tenant: "acme" })).status).toBe(204);
    expect((await signIn(t, key, "acme", { cred: key.credentials[0] })).status).toBe(401);
    expect((await signIn(t, key, "acme", { cred: key.credentials[1] })).status).toBe(200);
    expect((await t.json("DELETE", `${P}/${a.body.id}`, { token: org.access_token, tenant: "acme" })).status).toBe(404);
    // Without a password (an account made through an identity provider), the last passkey stays.
    await testSql(t.ctx).run("UPDATE users SET password_hash = ?1 WHERE id = ?2", NO_PASSWORD, org.user.id);
    const last = await t.json("DELETE", `${P}/${b.body.id}`, { token: org.access_token, tenant: "acme" });
    expect(last).toMatchObject({ status: 409, body: { code: "last_sign_in_method" } });
    expect((await t.json("GET", P, { token: org.access_token, tenant: "acme" })).body.length).toBe(1);
  });

  test("another user's passkey cannot be renamed or removed", async () => {
    const { t, org, key } = await world();
    const a = await register(t, key, "acme", org.access_token);
    const other = await t.signup("globex");
    expect((await t.json("PATCH", `${P}/${a.body.id}`, { token: other.access_token, tenant: "globex", body: { name: "mine" } })).status).toBe(404);
    expect((await t.json("DELETE", `${P}/${a.body.id}`, { token: other.access_token, tenant: "globex" })).status).toBe(404);
  });

  test("on the base domain localhost there is no relying party: 400 passkeys_unavailable", async () => {
    const { t } = await world();
    expect(await t.json("POST", `${P}/login/options`)).toMatchObject({ status: 400, body: { code: "passkeys_unavailable" } });
  });
});

describe("on a real base domain", () => {
  test("the RP is the base domain; on the base domain the user handle names the account", async () => {
    const { t: app } = clockedApp({ env: { SUITE_BASE_DOMAIN: "suite.test", SUITE_PUBLIC_URL: "https://suite.test" } });
    apps.push(app);
    const org = await app.signup("acme");
    const key = new SoftAuthenticator("https://acme.suite.test");
    const o = await app.json("POST", `${P}/register/options`, { token: org.access_token, headers: { host: "acme.suite.test" } });
    expect(o.body.rp.id).toBe("suite.test");
    expect((await app.json("POST", `${P}/register/verify`, { token: org.access_token, headers: { host: "acme.suite.test" }, body: { response: key.create(o.body) } })).status).toBe(201);
    const base = await app.json("POST", `${P}/login/options`, { headers: { host: "suite.test" } });
    expect(base.body.rpId).toBe("suite.test");
    const onBase = new SoftAuthenticator("https://suite.test");
    onBase.credentials.push(...key.credentials);
    const r = await app.json("POST", `${P}/login/verify`, { headers: { host: "suite.test" }, body: { response: onBase.get(base.body) } });
    expect(r.status).toBe(200);
    expect((await app.json("GET", ME, { token: r.body.access_token })).body.user.id).toBe(org.user.id);
    // Without a user handle the base domain cannot tell whose it is.
    const again = await app.json("POST", `${P}/login/options`, { headers: { host: "suite.test" } });
    expect((await app.json("POST", `${P}/login/verify`, { headers: { host: "suite.test" }, body: { response: onBase.get(again.body, { noUserHandle: true }) } })).status).toBe(401);
    // A failure there, whose user handle names the organization, reaches its log without the caller's IP.
    const third = await app.json("POST", `${P}/login/options`, { headers: { host: "suite.test" } });
    expect((await app.json("POST", `${P}/login/verify`, { headers: { host: "suite.test" }, body: { response: onBase.get(third.body, { uv: false }) } })).status).toBe(401);
    const row = (await allAudit(app)).filter((a) => a.action === "login.failure").at(-1)!;
    expect({ tenant: row.tenant_id, ip: row.ip, detail: JSON.parse(row.detail as string).tenant_named }).toEqual({ tenant: org.tenant.id, ip: null, detail: false });
  });
});
