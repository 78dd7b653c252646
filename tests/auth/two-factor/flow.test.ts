import { afterAll, describe, expect, test } from "bun:test";
import { type TestApp, setCookies } from "../../helpers";
import { ME, SESSIONS, allAudit, claimsOf, login } from "../support";
import { appCode } from "./rfc6238";
import { CONFIRM, DISABLE, SETUP, STATUS, STEP_MS, challenge, enable, orgWithClock, verify } from "./support";

const apps: TestApp[] = [];
afterAll(() => {
  for (const a of apps) a.close();
});

describe("setup → confirm → login challenge → verify", () => {
  test("the full flow", async () => {
    const { t, clock, org } = await orgWithClock(apps);
    const token = org.access_token;
    expect((await t.json("GET", STATUS, { token })).body).toEqual({ enabled: false, pending: false, backup_codes_remaining: 0 });

    const setup = await t.json("POST", SETUP, { token });
    expect(setup.status).toBe(200);
    expect(Object.keys(setup.body).sort()).toEqual(["backup_codes", "otpauth_url", "secret"]);
    const { secret, otpauth_url, backup_codes } = setup.body;
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(backup_codes).toHaveLength(10);
    expect(new Set(backup_codes).size).toBe(10);
    for (const c of backup_codes) expect(c).toMatch(/^[0-9a-z]{4}-[0-9a-z]{4}$/);
    const url = new URL(otpauth_url);
    expect(url.protocol).toBe("otpauth:");
    expect(otpauth_url).toStartWith(`otpauth://totp/`);
    expect(decodeURIComponent(otpauth_url.slice("otpauth://totp/".length, otpauth_url.indexOf("?")))).toBe(`Workspace Suite (acme):${org.email}`);
    expect(otpauth_url).toContain(`:${org.email}?`);
    expect(Object.fromEntries(url.searchParams)).toEqual({ secret, issuer: "Workspace Suite (acme)", algorithm: "SHA1", digits: "6", period: "30" });

    // Pending: login still answers tokens, not the challenge.
    expect((await t.json("GET", STATUS, { token })).body).toEqual({ enabled: false, pending: true, backup_codes_remaining: 0 });
    expect((await login(t, org.email, org.password)).body.access_token).toBeString();

    const confirm = await t.json("POST", CONFIRM, { token, body: { code: appCode(secret, clock.now()) } });
    expect(confirm).toMatchObject({ status: 200, body: { enabled: true } });
    expect((await t.json("GET", STATUS, { token })).body).toEqual({ enabled: true, pending: false, backup_codes_remaining: 10 });

    const first = await login(t, org.email, org.password);
    expect(first.status).toBe(200);
    expect(Object.keys(first.body).sort()).toEqual(["requires_2fa", "temp_token"]);
    expect(first.body.requires_2fa).toBe(true);
    expect(first.res.headers.getSetCookie()).toEqual([]);
    const temp = claimsOf(first.body.temp_token);
    expect(temp).toMatchObject({ typ: "2fa", sub: org.user.id, tid: org.tenant.id });
    expect((temp.exp as number) - (temp.iat as number)).toBe(300);

    clock.advance(STEP_MS);
    const done = await verify(t, first.body.temp_token, appCode(secret, clock.now()));
    expect(done.status).toBe(200);
    expect(Object.keys(done.body).sort()).toEqual(["access_token", "refresh_token", "token_type"]);
    expect(done.body.token_type).toBe("bearer");
    const cookies = setCookies(done.res);
    expect(cookies.svc_session?.value).toBe(done.body.access_token);
    expect(cookies.svc_refresh?.value).toBe(done.body.refresh_token);
    expect(cookies.svc_session?.attrs.httponly).toBe(true);
    expect(cookies.svc_refresh?.attrs.path).toBe("/api/v1/auth");

    const me = await t.json("GET", ME, { token: done.body.access_token });
    expect(me.status).toBe(200);
    expect(me.body.user.id).toBe(org.user.id);
    const sessions = await t.json("GET", SESSIONS, { token: done.body.access_token });
    expect(sessions.body.filter((s: { current: boolean }) => s.current)).toHaveLength(1);

    const actions = (await allAudit(t)).map((a) => a.action);
    for (const a of ["2fa.setup", "2fa.enabled", "2fa.challenge"]) expect(actions).toContain(a);
    const signIn = (await allAudit(t)).filter((a) => a.action === "login.success").at(-1)!;
    expect(JSON.parse(signIn.detail as string).method).toBe("2fa");
  });

  test("a second setup before confirm replaces the pending secret; setup while enabled is 409", async () => {
    const { t, clock, org } = await orgWithClock(apps);
    const token = org.access_token;
    const one = (await t.json("POST", SETUP, { token })).body;
    const two = (await t.json("POST", SETUP, { token, body: {} })).body;
    expect(two.secret).not.toBe(one.secret);
    // The first secret's code no longer confirms.
    const stale = await t.json("POST", CONFIRM, { token, body: { code: appCode(one.secret, clock.now()) } });
    expect(stale).toMatchObject({ status: 401, body: { code: "invalid_2fa_code" } });
    expect((await t.json("POST", CONFIRM, { token, body: { code: appCode(two.secret, clock.now()) } })).status).toBe(200);

    const again = await t.json("POST", SETUP, { token });
    expect(again).toMatchObject({ status: 409, body: { code: "two_factor_already_enabled", detail: expect.any(String) } });
    // The enabled secret is untouched: its code still signs in.
    clock.advance(STEP_MS);
    const temp = await challenge(t, org.email, org.password);
    expect((await verify(t, temp, appCode(two.secret, clock.now()))).status).toBe(200);
  });

  test("confirm: wrong code 401, nothing pending 409, already enabled 409", async () => {
    const { t, clock, org } = await orgWithClock(apps);
    const token = org.access_token;
    expect(await t.json("POST", CONFIRM, { token, body: { code: "123456" } })).toMatchObject({ status: 409, body: { code: "two_factor_not_pending" } });
    const { secret } = (await t.json("POST", SETUP, { token })).body;
    const wrong = String((Number(appCode(secret, clock.now())) + 1) % 1_000_000).padStart(6, "0");
    const r = await t.json("POST", CONFIRM, { token, body: { code: wrong } });
    expect(r).toMatchObject({ status: 401, body: { code: "invalid_2fa_code", detail: expect.any(String) } });
    expect((await t.json("GET", STATUS, { token })).body.enabled).toBe(false);
    expect((await t.json("POST", CONFIRM, { token, body: { code: appCode(secret, clock.now()) } })).status).toBe(200);
    clock.advance(STEP_MS);
    expect(await t.json("POST", CONFIRM, { token, body: { code: appCode(secret, clock.now()) } })).toMatchObject({
      status: 409,
      body: { code: "two_factor_already_enabled" },
    });
  });

  test("every 2FA route but verify needs a signed-in user", async () => {
    const { t } = await orgWithClock(apps);
    for (const [method, path] of [["POST", SETUP], ["POST", CONFIRM], ["POST", DISABLE], ["GET", STATUS], ["POST", "/api/v1/auth/2fa/backup-codes"]]) {
      const r = await t.json(method!, path!, { body: method === "POST" ? { code: "123456", password: "x" } : undefined });
      expect({ path, status: r.status, code: r.body.code }).toEqual({ path, status: 401, code: "not_authenticated" });
    }
  });
});
