/**
 * A temp_token is single use (issue 13, 2c; docs/interface.md#two-factor-authentication): the verify that succeeds spends it, and
 * logout-all, 2FA disable and a password change end the outstanding ones.
 */
import { afterAll, describe, expect, test } from "bun:test";
import type { TestApp } from "../../helpers";
import { claimsOf, login } from "../support";
import { appCode } from "./rfc6238";
import { DISABLE, NEXT_MINUTE, STEP_MS, challenge, enable, enabledOrg as enabledOrgIn, verify } from "./support";
import { testSql } from "../../support/sql";

const apps: TestApp[] = [];
afterAll(() => apps.forEach((a) => a.close()));
const enabledOrg = () => enabledOrgIn(apps);

const sessionCount = async (t: TestApp) => (await testSql(t.ctx).get<{ n: number }>("SELECT count(*) AS n FROM sessions"))!.n;
const invalidTemp = { status: 401, code: "invalid_temp_token" };
const outcome = (r: { status: number; body: { code?: string } }) => ({ status: r.status, code: r.body.code });

describe("spent by the verify that succeeds", () => {
  test("a second verify of the same temp_token, with another valid code, makes no second session", async () => {
    const { t, clock, org, secret, backupCodes } = await enabledOrg();
    const temp = await challenge(t, org.email, org.password);
    const before = await sessionCount(t);
    expect((await verify(t, temp, appCode(secret, clock.now()))).status).toBe(200);
    expect(await sessionCount(t)).toBe(before + 1);
    // A backup code, and the next step's code: both valid, neither opens anything with a spent token.
    expect(outcome(await verify(t, temp, backupCodes[0]!))).toEqual(invalidTemp);
    clock.advance(STEP_MS);
    expect(outcome(await verify(t, temp, appCode(secret, clock.now())))).toEqual(invalidTemp);
    expect(await sessionCount(t)).toBe(before + 1);
    // The backup code was not spent on the refusal.
    expect((await verify(t, await challenge(t, org.email, org.password), backupCodes[0]!)).status).toBe(200);
  });

  test("a wrong code does not spend it", async () => {
    const { t, clock, org, secret } = await enabledOrg();
    const temp = await challenge(t, org.email, org.password);
    expect((await verify(t, temp, appCode(secret, clock.now(), 5))).body.code).toBe("invalid_2fa_code");
    expect((await verify(t, temp, appCode(secret, clock.now()))).status).toBe(200);
  });

  test("two verifies of one temp_token at once, each with a valid code: exactly one session", async () => {
    const { t, clock, org, secret, backupCodes } = await enabledOrg();
    for (let round = 0; round < 3; round++) {
      const temp = await challenge(t, org.email, org.password);
      const before = await sessionCount(t);
      const rs = await Promise.all([verify(t, temp, appCode(secret, clock.now())), verify(t, temp, backupCodes[round]!)]);
      expect(rs.map((r) => r.status).sort()).toEqual([200, 401]);
      expect(outcome(rs.find((r) => r.status === 401)!)).toEqual(invalidTemp);
      expect(await sessionCount(t)).toBe(before + 1);
      clock.advance(NEXT_MINUTE);
    }
  });
});

describe("ended by", () => {
  test("logout-all: outstanding temp_tokens fail", async () => {
    const { t, clock, org, secret } = await enabledOrg();
    const temp = await challenge(t, org.email, org.password);
    expect((await t.json("POST", "/api/v1/auth/logout-all", { token: org.access_token })).status).toBe(200);
    expect(outcome(await verify(t, temp, appCode(secret, clock.now())))).toEqual(invalidTemp);
    // A sign-in after it works as ever.
    expect((await verify(t, await challenge(t, org.email, org.password), appCode(secret, clock.now()))).status).toBe(200);
  });

  test("2FA disable: outstanding temp_tokens fail, and stay dead when 2FA is turned on again", async () => {
    const { t, clock, org, secret } = await enabledOrg();
    const temp = await challenge(t, org.email, org.password);
    const off = await t.json("POST", DISABLE, { token: org.access_token, body: { password: org.password, code: appCode(secret, clock.now()) } });
    expect(off.status).toBe(200);
    expect(outcome(await verify(t, temp, appCode(secret, clock.now())))).toEqual(invalidTemp);
    clock.advance(STEP_MS);
    const again = await enable(t, org.access_token);
    clock.advance(STEP_MS);
    expect(outcome(await verify(t, temp, appCode(again.secret, clock.now())))).toEqual(invalidTemp);
  });

  test("a password change (the general mechanism: every outstanding challenge of the user ends)", async () => {
    const { t, clock, org, secret } = await enabledOrg();
    const member = await t.signup("other");
    await enable(t, member.access_token);
    const mine = await challenge(t, org.email, org.password);
    const theirs = await login(t, member.email, member.password);
    // What a password change calls (no endpoint for it exists yet).
    expect(await t.ctx.auth.endChallenges(org.tenant.id, org.user.id)).toBe(1);
    expect(outcome(await verify(t, mine, appCode(secret, clock.now())))).toEqual(invalidTemp);
    // Another user's challenge is untouched.
    const row = await testSql(t.ctx).get("SELECT user_id FROM sign_in_challenges WHERE id = ?1", claimsOf(theirs.body.temp_token).sid as string);
    expect(row).toEqual({ user_id: member.user.id });
  });

  test("expiry: the row outlives nothing (housekeeping drops it a day after)", async () => {
    const { t, clock, org } = await enabledOrg();
    await challenge(t, org.email, org.password);
    expect((await testSql(t.ctx).get<{ n: number }>("SELECT count(*) AS n FROM sign_in_challenges"))!.n).toBe(1);
    clock.advance(86_400_000 + 301_000);
    await t.ctx.housekeep();
    expect((await testSql(t.ctx).get<{ n: number }>("SELECT count(*) AS n FROM sign_in_challenges"))!.n).toBe(0);
  });
});
