/**
 * Step-up before changing the second factor (issue 13, 2b; docs/interface.md#sessions): setup, confirm and
 * backup-code regeneration need the session's last first-factor proof within SUITE_REAUTH_WINDOW;
 * POST /auth/reauthenticate renews it.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { type TestApp, testApp } from "../../helpers";
import { accept, invited } from "../../team/support";
import { askLink, newestToken, verifyToken } from "../magic-link/support";
import { REFRESH, allAudit, clock as makeClock, login, sessionIdOf, sessionOf } from "../support";
import { appCode } from "./rfc6238";
import { BACKUP_CODES, CONFIRM, DISABLE, NEXT_MINUTE, SETUP, STATUS, challenge, enable, orgWithClock, verify } from "./support";

const REAUTH = "/api/v1/auth/reauthenticate";
const WINDOW_MS = 600_000;
const apps: TestApp[] = [];
afterAll(() => apps.forEach((a) => a.close()));

const reauth = (t: TestApp, token: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  t.json("POST", REAUTH, { token, body, headers });
const needsReauth = (r: { status: number; body: { code?: string } }) => expect({ status: r.status, code: r.body.code }).toEqual({ status: 403, code: "reauthentication_required" });

describe("the window", () => {
  test("a fresh sign-in may set up 2FA; past SUITE_REAUTH_WINDOW setup, confirm and backup codes are 403 reauthentication_required", async () => {
    const { t, clock, org } = await orgWithClock(apps);
    const token = org.access_token;
    // Signup is a password proof: setup at once works.
    const setup = await t.json("POST", SETUP, { token });
    expect(setup.status).toBe(200);
    clock.advance(WINDOW_MS + 1000);
    const { access_token, refresh_token } = (await t.json("POST", REFRESH, { body: { refresh_token: org.refresh_token } })).body;
    org.refresh_token = refresh_token;
    // A refreshed token is no proof: the session keeps its proof time.
    for (const tok of [token, access_token]) {
      needsReauth(await t.json("POST", SETUP, { token: tok }));
      needsReauth(await t.json("POST", CONFIRM, { token: tok, body: { code: appCode(setup.body.secret, clock.now()) } }));
    }
    // Nothing changed: still pending, with the first setup's secret.
    expect((await t.json("GET", STATUS, { token })).body).toEqual({ enabled: false, pending: true, backup_codes_remaining: 0 });
    expect((await reauth(t, token, { password: org.password })).status).toBe(200);
    expect((await t.json("POST", CONFIRM, { token: access_token, body: { code: appCode(setup.body.secret, clock.now()) } })).status).toBe(200);

    clock.advance(WINDOW_MS + 1000);
    // (The first access token has expired by now: a refreshed one, of the same session.)
    const later = (await t.json("POST", REFRESH, { body: { refresh_token: org.refresh_token } })).body.access_token as string;
    needsReauth(await t.json("POST", BACKUP_CODES, { token: later }));
    // Disable carries the password itself: no recent proof needed.
    clock.advance(NEXT_MINUTE);
    const off = await t.json("POST", DISABLE, { token: later, body: { password: org.password, code: appCode(setup.body.secret, clock.now()) } });
    expect(off.status).toBe(200);
  });

  test("exactly SUITE_REAUTH_WINDOW after the proof still counts; a millisecond later does not", async () => {
    const { t, clock, org } = await orgWithClock(apps);
    clock.advance(WINDOW_MS);
    expect((await t.json("POST", SETUP, { token: org.access_token })).status).toBe(200);
    clock.advance(1);
    needsReauth(await t.json("POST", SETUP, { token: org.access_token }));
  });

  test("SUITE_REAUTH_WINDOW sets it", async () => {
    const c = makeClock();
    const t = testApp({ now: c.now, env: { SUITE_REAUTH_WINDOW: "60" } });
    apps.push(t);
    expect(t.config.reauthWindow).toBe(60);
    const org = await t.signup("acme");
    c.advance(61_000);
    needsReauth(await t.json("POST", SETUP, { token: org.access_token }));
    expect(testApp().config.reauthWindow).toBe(600);
  });

  test("the proof belongs to one session: reauthenticating in one leaves the others stale", async () => {
    const { t, clock, org } = await orgWithClock(apps);
    const other = await login(t, org.email, org.password);
    clock.advance(WINDOW_MS + 1000);
    expect((await reauth(t, org.access_token, { password: org.password })).status).toBe(200);
    expect((await t.json("POST", SETUP, { token: org.access_token })).status).toBe(200);
    needsReauth(await t.json("POST", SETUP, { token: other.body.access_token }));
  });
});

describe("every first factor is a proof", () => {
  test("password login, magic link and invitation accept start a session with a fresh proof", async () => {
    const { t, clock, org } = await orgWithClock(apps);
    clock.advance(WINDOW_MS + 1000);
    const byPassword = await login(t, org.email, org.password);
    await askLink(t, org.email);
    const byLink = await verifyToken(t, await newestToken(t));
    const { token } = await invited(t, { ...org }, "joiner@example.com");
    const joined = await accept(t, { token, password: "new member password" });
    for (const r of [byPassword, byLink, joined]) {
      expect(r.status === 200 || r.status === 201).toBe(true);
      expect((await sessionOf(t, r.body.access_token))!.proven_at).toBe(clock.now());
      expect((await t.json("POST", SETUP, { token: r.body.access_token })).status).toBe(200);
    }
  });

  test("a 2FA sign-in's proof is the time its first factor was proven (the challenge), not the verify", async () => {
    const { t, clock, org } = await orgWithClock(apps);
    const { secret } = await enable(t, org.access_token);
    clock.advance(NEXT_MINUTE);
    const provenAt = clock.now();
    const temp = await challenge(t, org.email, org.password);
    clock.advance(200_000);
    const r = await verify(t, temp, appCode(secret, clock.now()));
    expect(r.status).toBe(200);
    expect((await sessionOf(t, r.body.access_token))!.proven_at).toBe(provenAt);
    clock.advance(WINDOW_MS - 200_000 + 1);
    needsReauth(await t.json("POST", BACKUP_CODES, { token: r.body.access_token }));
  });
});

describe("POST /auth/reauthenticate", () => {
  test("the password renews the proof: 200 {detail, reauthenticated_at}, audited", async () => {
    const { t, clock, org } = await orgWithClock(apps);
    clock.advance(WINDOW_MS + 1000);
    const r = await reauth(t, org.access_token, { password: org.password }, { "user-agent": "agent-r" });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ detail: expect.any(String), reauthenticated_at: new Date(clock.now()).toISOString() });
    expect((await sessionOf(t, org.access_token))!.proven_at).toBe(clock.now());
    const row = (await allAudit(t)).find((a) => a.action === "reauth.success")!;
    expect(row).toMatchObject({ tenant_id: org.tenant.id, user_id: org.user.id, user_agent: "agent-r" });
    expect(JSON.parse(String(row.detail))).toEqual({ session_id: (await sessionIdOf(t, org.access_token)), second_factor: false });
  });

  test("a wrong password: 401 invalid_credentials, audited, no renewal; it counts toward the sign-in lock", async () => {
    const { t, clock, org } = await orgWithClock(apps);
    clock.advance(WINDOW_MS + 1000);
    const before = (await sessionOf(t, org.access_token))!.proven_at;
    for (let i = 0; i < 10; i++) {
      const r = await reauth(t, org.access_token, { password: "wrong password here" });
      expect({ i, status: r.status, code: r.body.code, www: r.headers.get("www-authenticate") }).toEqual({ i, status: 401, code: "invalid_credentials", www: "Bearer" });
    }
    expect((await sessionOf(t, org.access_token))!.proven_at).toBe(before);
    expect((await allAudit(t)).filter((a) => a.action === "reauth.failure")).toHaveLength(10);
    // The account is now locked for sign-in, and for reauthenticate, even with the right password.
    expect((await login(t, org.email, org.password, { "x-tenant": "acme" })).status).toBe(429);
    const locked = await reauth(t, org.access_token, { password: org.password });
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get("retry-after"))).toBeGreaterThan(0);
    clock.advance(15 * 60_000 + 1000);
    const later = (await t.json("POST", REFRESH, { body: { refresh_token: org.refresh_token } })).body.access_token as string;
    expect((await reauth(t, later, { password: org.password })).status).toBe(200);
  });

  test("counted per IP with sign-ins", async () => {
    const c = makeClock();
    const t = testApp({ now: c.now, limits: { loginPerIp: { name: "login-ip", max: 3, windowMs: 60_000 } } });
    apps.push(t);
    const org = await t.signup("acme");
    for (let i = 0; i < 2; i++) expect((await login(t, `n${i}@acme.test`, "wrong password", { "x-tenant": "acme" })).status).toBe(401);
    expect((await reauth(t, org.access_token, { password: org.password })).status).toBe(200);
    expect((await reauth(t, org.access_token, { password: org.password })).status).toBe(429);
  });

  test("with 2FA on: a code is needed too (TOTP or backup code); a missing or wrong one is 401 invalid_2fa_code", async () => {
    const { t, clock, org } = await orgWithClock(apps);
    const { secret, backupCodes } = await enable(t, org.access_token);
    clock.advance(WINDOW_MS + 1000);
    const token = org.access_token;
    const missing = await reauth(t, token, { password: org.password });
    expect({ status: missing.status, code: missing.body.code }).toEqual({ status: 401, code: "invalid_2fa_code" });
    const wrongCode = appCode(secret, clock.now(), 5);
    const wrong = await reauth(t, token, { password: org.password, code: wrongCode });
    expect({ status: wrong.status, code: wrong.body.code }).toEqual({ status: 401, code: "invalid_2fa_code" });
    // A wrong password is refused before the code is looked at.
    const badPassword = await reauth(t, token, { password: "wrong password here", code: appCode(secret, clock.now()) });
    expect(badPassword.body.code).toBe("invalid_credentials");
    needsReauth(await t.json("POST", BACKUP_CODES, { token }));

    const ok = await reauth(t, token, { password: org.password, code: appCode(secret, clock.now()) });
    expect(ok.status).toBe(200);
    expect((await t.json("POST", BACKUP_CODES, { token })).status).toBe(200);
    // The same code again is a replay.
    expect((await reauth(t, token, { password: org.password, code: appCode(secret, clock.now()) })).body.code).toBe("invalid_2fa_code");
    // A backup code of the new set works, once (the old set was replaced).
    const fresh = (await t.json("POST", BACKUP_CODES, { token })).body.backup_codes as string[];
    expect(backupCodes).not.toContain(fresh[0]);
    expect((await reauth(t, token, { password: org.password, code: fresh[0] })).status).toBe(200);
    const reasons = (await allAudit(t)).filter((a) => a.action === "reauth.failure").map((a) => JSON.parse(String(a.detail)).reason);
    expect(reasons).toEqual(["code_missing", "wrong_code", "wrong_password", "wrong_code"]);
    expect((await allAudit(t)).filter((a) => a.action === "2fa.failure" && JSON.parse(String(a.detail)).during === "reauthenticate")).toHaveLength(2);
  });

  test("needs credentials; a revoked session cannot renew its proof", async () => {
    const { t, org } = await orgWithClock(apps);
    const none = await t.json("POST", REAUTH, { body: { password: org.password } });
    expect(none.status).toBe(401);
    const other = await login(t, org.email, org.password);
    await t.json("POST", "/api/v1/auth/logout", { token: other.body.access_token });
    expect((await reauth(t, other.body.access_token, { password: org.password })).body.code).toBe("session_revoked");
  });

  test("422 for a missing password or a code of the wrong shape; nothing is echoed", async () => {
    const { t, org } = await orgWithClock(apps);
    const missing = await reauth(t, org.access_token, {});
    expect(missing.status).toBe(422);
    expect(missing.body.detail[0].loc).toEqual(["body", "password"]);
    const shape = await reauth(t, org.access_token, { password: org.password, code: "12" });
    expect(shape.status).toBe(422);
    expect(JSON.stringify(shape.body)).not.toContain(org.password);
  });
});

describe("the OpenAPI document", () => {
  test("describes POST /auth/reauthenticate: its body, its answer, auth and 429; the step-up routes mention the 403", async () => {
    const { t } = await orgWithClock(apps);
    const doc = (await t.json("GET", "/api/v1/openapi.json")).body;
    const op = doc.paths["/api/v1/auth/reauthenticate"].post;
    expect(op.security.length).toBeGreaterThan(0);
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(["200", "401", "403", "422", "429"]));
    // Inline or a $ref to components (the document's shape may move schemas there).
    const deref = (x: { $ref?: string }) => (x.$ref ? doc.components.schemas[x.$ref.split("/").pop()!] : x);
    const body = deref(op.requestBody.content["application/json"].schema);
    // The password (with a code under 2FA) or a passkey's answer: neither is required by the schema,
    // the route answers 422 at password when both are missing (tests/auth/passkeys).
    expect(body.required).toBeUndefined();
    expect(Object.keys(body.properties).sort()).toEqual(["code", "passkey", "password"]);
    const answer = JSON.stringify(op.responses["200"]);
    expect(answer).toContain("Reauthenticated");
    expect(Object.keys(doc.components.schemas.Reauthenticated.properties).sort()).toEqual(["detail", "reauthenticated_at"]);
    for (const path of ["/api/v1/auth/2fa/setup", "/api/v1/auth/2fa/confirm", "/api/v1/auth/2fa/backup-codes"]) {
      expect(doc.paths[path].post.description).toContain("reauthentication_required");
    }
  });
});
