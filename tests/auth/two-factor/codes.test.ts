import { afterAll, describe, expect, test } from "bun:test";
import type { TestApp } from "../../helpers";
import { ME, SESSIONS, allAudit, login } from "../support";
import { appCode } from "./rfc6238";
import { BACKUP_CODES, DISABLE, NEXT_MINUTE, SETUP, STATUS, STEP_MS, challenge, enable, enabledOrg as enabledOrgIn, orgWithClock, verify } from "./support";
import { testSql } from "../../support/sql";

const apps: TestApp[] = [];
afterAll(() => {
  for (const a of apps) a.close();
});

const enabledOrg = () => enabledOrgIn(apps);

describe("time steps", () => {
  test("one step either side is accepted, two are refused", async () => {
    const { t, clock, org, secret } = await enabledOrg();
    const temp = await challenge(t, org.email, org.password);
    for (const steps of [-2, 2]) {
      const r = await verify(t, temp, appCode(secret, clock.now(), steps));
      expect({ steps, status: r.status, code: r.body.code }).toEqual({ steps, status: 401, code: "invalid_2fa_code" });
    }
    expect((await verify(t, temp, appCode(secret, clock.now(), -1))).status).toBe(200);
    clock.advance(3 * STEP_MS);
    expect((await verify(t, await challenge(t, org.email, org.password), appCode(secret, clock.now(), 1))).status).toBe(200);
  });

  test("a code, or one of an earlier step, is never accepted twice (RFC 6238 §5.2)", async () => {
    const { t, clock, org, secret } = await enabledOrg();
    const now = appCode(secret, clock.now());
    expect((await verify(t, await challenge(t, org.email, org.password), now)).status).toBe(200);
    const temp = await challenge(t, org.email, org.password);
    expect(await verify(t, temp, now)).toMatchObject({ status: 401, body: { code: "invalid_2fa_code" } });
    // The previous step is still inside the window, but before the last accepted one.
    expect(await verify(t, temp, appCode(secret, clock.now(), -1))).toMatchObject({ status: 401, body: { code: "invalid_2fa_code" } });
    const failure = (await allAudit(t)).filter((a) => a.action === "2fa.failure").map((a) => JSON.parse(a.detail as string));
    expect(failure[0]).toEqual({ during: "verify", reason: "replayed_code" });
    // The next step's code works.
    expect((await verify(t, temp, appCode(secret, clock.now(), 1))).status).toBe(200);
  });

  test("two verifies of one code at once: exactly one passes", async () => {
    const { t, clock, org, secret } = await enabledOrg();
    const temps = [await challenge(t, org.email, org.password), await challenge(t, org.email, org.password)];
    const code = appCode(secret, clock.now());
    const answers = await Promise.all(temps.map((temp) => verify(t, temp, code)));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 401]);
  });
});

describe("backup codes", () => {
  test("each works once, with or without the dash, in any case; status counts them", async () => {
    const { t, clock, org, backupCodes } = await enabledOrg();
    const [a, b] = backupCodes as [string, string];
    expect((await verify(t, await challenge(t, org.email, org.password), a.toUpperCase())).status).toBe(200);
    const temp = await challenge(t, org.email, org.password);
    expect(await verify(t, temp, a)).toMatchObject({ status: 401, body: { code: "invalid_2fa_code" } });
    expect((await verify(t, temp, b.replace("-", ""))).status).toBe(200);
    clock.advance(NEXT_MINUTE);
    expect(await verify(t, await challenge(t, org.email, org.password), b)).toMatchObject({ status: 401, body: { code: "invalid_2fa_code" } });
    expect((await t.json("GET", STATUS, { token: org.access_token })).body).toEqual({ enabled: true, pending: false, backup_codes_remaining: 8 });
    const used = (await allAudit(t)).filter((r) => r.action === "2fa.backup_code_used");
    expect(used).toHaveLength(2);
    for (const row of used) for (const c of backupCodes) expect(String(row.detail)).not.toContain(c.slice(0, 4));
  });

  test("one user's backup code does not work for another", async () => {
    const { t, org, backupCodes } = await enabledOrg();
    const other = await t.signup("other");
    await enable(t, other.access_token);
    const temp = await challenge(t, other.email, other.password);
    expect(await verify(t, temp, backupCodes[0]!)).toMatchObject({ status: 401, body: { code: "invalid_2fa_code" } });
    expect((await verify(t, await challenge(t, org.email, org.password), backupCodes[0]!)).status).toBe(200);
  });

  test("regenerating answers ten new codes; the old ones stop working", async () => {
    const { t, org, backupCodes } = await enabledOrg();
    const r = await t.json("POST", BACKUP_CODES, { token: org.access_token });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual(["backup_codes"]);
    expect(r.body.backup_codes).toHaveLength(10);
    for (const c of r.body.backup_codes) expect(backupCodes).not.toContain(c);
    const temp = await challenge(t, org.email, org.password);
    expect(await verify(t, temp, backupCodes[3]!)).toMatchObject({ status: 401, body: { code: "invalid_2fa_code" } });
    expect((await verify(t, temp, r.body.backup_codes[3])).status).toBe(200);
    expect((await allAudit(t)).map((a) => a.action)).toContain("2fa.backup_codes_regenerated");
  });

  test("regenerating without 2FA on is 409", async () => {
    const { t, org } = await orgWithClock(apps);
    expect(await t.json("POST", BACKUP_CODES, { token: org.access_token })).toMatchObject({ status: 409, body: { code: "two_factor_not_enabled" } });
    await t.json("POST", SETUP, { token: org.access_token });
    expect(await t.json("POST", BACKUP_CODES, { token: org.access_token })).toMatchObject({ status: 409, body: { code: "two_factor_not_enabled" } });
  });
});

describe("disable", () => {
  test("needs the password and a valid code", async () => {
    const { t, clock, org, secret } = await enabledOrg();
    const token = org.access_token;
    const code = () => appCode(secret, clock.now());
    const wrongPassword = await t.json("POST", DISABLE, { token, body: { password: "not the password", code: code() } });
    expect(wrongPassword).toMatchObject({ status: 401, body: { code: "invalid_credentials" } });
    const wrongCode = await t.json("POST", DISABLE, { token, body: { password: org.password, code: "000000" === code() ? "111111" : "000000" } });
    expect(wrongCode).toMatchObject({ status: 401, body: { code: "invalid_2fa_code" } });
    expect((await t.json("GET", STATUS, { token })).body.enabled).toBe(true);

    const ok = await t.json("POST", DISABLE, { token, body: { password: org.password, code: code() } });
    expect(ok).toMatchObject({ status: 200, body: { enabled: false } });
    expect((await t.json("GET", STATUS, { token })).body).toEqual({ enabled: false, pending: false, backup_codes_remaining: 0 });
    // Login answers tokens again.
    expect((await login(t, org.email, org.password)).body.access_token).toBeString();
    expect((await allAudit(t)).map((a) => a.action)).toContain("2fa.disabled");
    expect(await t.json("POST", DISABLE, { token, body: { password: org.password, code: code() } })).toMatchObject({
      status: 409,
      body: { code: "two_factor_not_enabled" },
    });
    // Rows are gone: no backup code of the old factor is left.
    expect(await testSql(t.ctx).get("SELECT count(*) AS n FROM backup_codes")).toEqual({ n: 0 });
  });

  test("a backup code works as the code", async () => {
    const { t, org, backupCodes } = await enabledOrg();
    const r = await t.json("POST", DISABLE, { token: org.access_token, body: { password: org.password, code: backupCodes[9] } });
    expect(r).toMatchObject({ status: 200, body: { enabled: false } });
  });

  test("a temp_token issued before disable no longer verifies", async () => {
    const { t, clock, org, secret } = await enabledOrg();
    const temp = await challenge(t, org.email, org.password);
    expect((await t.json("POST", DISABLE, { token: org.access_token, body: { password: org.password, code: appCode(secret, clock.now()) } })).status).toBe(200);
    clock.advance(STEP_MS);
    expect(await verify(t, temp, appCode(secret, clock.now()))).toMatchObject({ status: 401, body: { code: "invalid_temp_token" } });
  });
});

describe("revoke_other_sessions", () => {
  async function liveSessions(t: TestApp, token: string) {
    const r = await t.json("GET", SESSIONS, { token });
    return r.body.length as number;
  }

  test("setup, regenerate and disable end the other sessions when asked, and only then", async () => {
    const { t, clock, org } = await orgWithClock(apps);
    const token = org.access_token;
    await login(t, org.email, org.password);
    expect(await liveSessions(t, token)).toBe(2);
    await t.json("POST", SETUP, { token, body: { revoke_other_sessions: false } });
    expect(await liveSessions(t, token)).toBe(2);
    const setup = await t.json("POST", SETUP, { token, body: { revoke_other_sessions: true } });
    expect(setup.status).toBe(200);
    expect(await liveSessions(t, token)).toBe(1);
    expect((await t.json("POST", "/api/v1/auth/2fa/confirm", { token, body: { code: appCode(setup.body.secret, clock.now()) } })).status).toBe(200);

    const other = async () => {
      clock.advance(NEXT_MINUTE);
      const temp = await challenge(t, org.email, org.password);
      const r = await verify(t, temp, appCode(setup.body.secret, clock.now()));
      expect(r.status).toBe(200);
      return r.body.access_token as string;
    };
    const second = await other();
    expect((await t.json("POST", BACKUP_CODES, { token, body: { revoke_other_sessions: true } })).status).toBe(200);
    expect((await t.json("GET", ME, { token: second })).body.code).toBe("session_revoked");
    expect((await t.json("GET", ME, { token })).status).toBe(200);

    const third = await other();
    clock.advance(STEP_MS);
    const off = await t.json("POST", DISABLE, {
      token,
      body: { password: org.password, code: appCode(setup.body.secret, clock.now()), revoke_other_sessions: true },
    });
    expect(off.status).toBe(200);
    expect((await t.json("GET", ME, { token: third })).body.code).toBe("session_revoked");
    expect(await liveSessions(t, token)).toBe(1);
  });
});
