import { afterAll, describe, expect, test } from "bun:test";
import type { TestApp } from "../../helpers";
import { allAudit } from "../support";
import { appCode } from "./rfc6238";
import { CONFIRM, DISABLE, NEXT_MINUTE, SETUP, STEP_MS, challenge, enable, enabledOrg as enabledOrgIn, orgWithClock, verify } from "./support";
import { testSql } from "../../support/sql";

const apps: TestApp[] = [];
afterAll(() => {
  for (const a of apps) a.close();
});

const enabledOrg = () => enabledOrgIn(apps);

/** A code that is not the app's for any step in the window. */
function wrongCode(secret: string, now: number): string {
  const near = new Set([-1, 0, 1].map((s) => appCode(secret, now, s)));
  for (let n = 0; ; n++) {
    const c = String(n).padStart(6, "0");
    if (!near.has(c)) return c;
  }
}

function expect429(r: { status: number; headers: Headers; body: { code?: string } }, maxSeconds: number) {
  expect(r.status).toBe(429);
  expect(r.body.code).toBe("rate_limited");
  const after = Number(r.headers.get("retry-after"));
  expect(after).toBeGreaterThanOrEqual(1);
  expect(after).toBeLessThanOrEqual(maxSeconds);
}

describe("5 attempts per minute per user", () => {
  test("50 wrong codes sent at once: at most 5 are checked, the rest are 429 with Retry-After", async () => {
    const { t, clock, org, secret } = await enabledOrg();
    const temp = await challenge(t, org.email, org.password);
    const bad = wrongCode(secret, clock.now());
    const answers = await Promise.all(Array.from({ length: 50 }, () => verify(t, temp, bad)));
    const checked = answers.filter((a) => a.body.code === "invalid_2fa_code");
    const limited = answers.filter((a) => a.status === 429);
    expect(checked.length).toBeLessThanOrEqual(5);
    expect(checked.length + limited.length).toBe(50);
    for (const r of limited) expect429(r, 60);
    // Only the checked ones reached the code: that many failures were counted and audited.
    expect((await allAudit(t)).filter((a) => a.action === "2fa.failure")).toHaveLength(checked.length);
    expect(await testSql(t.ctx).get("SELECT failures FROM user_totp")).toEqual({ failures: checked.length });

    // The right code waits for the window too, then works.
    expect429(await verify(t, temp, appCode(secret, clock.now())), 60);
    clock.advance(NEXT_MINUTE);
    expect((await verify(t, await challenge(t, org.email, org.password), appCode(secret, clock.now()))).status).toBe(200);
  });

  test("the limit is per user: another user's verify is not held up", async () => {
    const { t, clock, org, secret } = await enabledOrg();
    const other = await t.signup("other");
    const otherFactor = await enable(t, other.access_token);
    const temp = await challenge(t, org.email, org.password);
    for (let i = 0; i < 5; i++) expect((await verify(t, temp, wrongCode(secret, clock.now()))).status).toBe(401);
    expect429(await verify(t, temp, appCode(secret, clock.now())), 60);
    clock.advance(30_000);
    const theirs = await verify(t, await challenge(t, other.email, other.password), appCode(otherFactor.secret, clock.now()));
    expect(theirs.status).toBe(200);
  });

  test("confirm, then 5 verifies in the same minute: all are checked (confirm has a counter of its own)", async () => {
    const { t, clock, org } = await orgWithClock(apps);
    const token = org.access_token;
    const { secret } = (await t.json("POST", SETUP, { token })).body;
    expect((await t.json("POST", CONFIRM, { token, body: { code: appCode(secret, clock.now()) } })).status).toBe(200);
    clock.advance(STEP_MS);
    const temp = await challenge(t, org.email, org.password);
    for (let i = 0; i < 4; i++) expect((await verify(t, temp, wrongCode(secret, clock.now()))).body.code).toBe("invalid_2fa_code");
    expect((await verify(t, temp, appCode(secret, clock.now()))).status).toBe(200);
    // The sixth in that minute is verify's own limit.
    expect429(await verify(t, await challenge(t, org.email, org.password), appCode(secret, clock.now(), 1)), 60);
  });

  test("a valid disable is not refused because verify's five are spent, and disable has five of its own", async () => {
    const { t, clock, org, secret } = await enabledOrg();
    const temp = await challenge(t, org.email, org.password);
    for (let i = 0; i < 5; i++) expect((await verify(t, temp, wrongCode(secret, clock.now()))).status).toBe(401);
    expect429(await verify(t, temp, appCode(secret, clock.now())), 60);
    const disable = (code: string) => t.json("POST", DISABLE, { token: org.access_token, body: { password: org.password, code } });
    for (let i = 0; i < 4; i++) expect((await disable(wrongCode(secret, clock.now()))).body.code).toBe("invalid_2fa_code");
    expect((await disable(appCode(secret, clock.now()))).status).toBe(200);
  });

  test("disable's own limit: the sixth attempt in a minute is 429, then it opens again", async () => {
    const { t, clock, org, secret } = await enabledOrg();
    const disable = (code: string) => t.json("POST", DISABLE, { token: org.access_token, body: { password: org.password, code } });
    for (let i = 0; i < 5; i++) expect((await disable(wrongCode(secret, clock.now()))).status).toBe(401);
    expect429(await disable(appCode(secret, clock.now())), 60);
    // Verify is untouched by it.
    expect((await verify(t, await challenge(t, org.email, org.password), appCode(secret, clock.now()))).status).toBe(200);
    clock.advance(NEXT_MINUTE);
    expect((await disable(appCode(secret, clock.now()))).status).toBe(200);
  });

  test("confirm's own limit: five wrong codes, then 429 even for the right one, until the next minute", async () => {
    const { t, clock, org } = await orgWithClock(apps);
    const token = org.access_token;
    const { secret } = (await t.json("POST", SETUP, { token })).body;
    for (let i = 0; i < 5; i++) {
      expect((await t.json("POST", CONFIRM, { token, body: { code: wrongCode(secret, clock.now()) } })).status).toBe(401);
    }
    expect429(await t.json("POST", CONFIRM, { token, body: { code: appCode(secret, clock.now()) } }), 60);
    clock.advance(NEXT_MINUTE);
    // Past the reauthentication window too? No: 61 s is well inside it.
    expect((await t.json("POST", CONFIRM, { token, body: { code: appCode(secret, clock.now()) } })).status).toBe(200);
  });
});

describe("20 consecutive failures lock the second factor for 15 minutes", () => {
  /** Sends `n` wrong codes, five per minute, each minute on a fresh temp_token. */
  async function failMany(o: Awaited<ReturnType<typeof enabledOrg>>, n: number) {
    let temp = "";
    for (let i = 0; i < n; i++) {
      if (i % 5 === 0) {
        if (i > 0) o.clock.advance(NEXT_MINUTE);
        temp = await challenge(o.t, o.org.email, o.org.password);
      }
      const r = await verify(o.t, temp, wrongCode(o.secret, o.clock.now()));
      expect({ attempt: i + 1, code: r.body.code }).toEqual({ attempt: i + 1, code: "invalid_2fa_code" });
    }
    o.clock.advance(NEXT_MINUTE);
  }

  test("across temp tokens; then 429 even for the right code, for verify and disable; open again after 15 min", async () => {
    const o = await enabledOrg();
    const { t, clock, org, secret } = o;
    await failMany(o, 20);
    const locks = (await allAudit(t)).filter((a) => a.action === "2fa.locked");
    expect(locks).toHaveLength(1);
    expect(locks[0]!.user_id).toBe(org.user.id);

    const temp = await challenge(t, org.email, org.password);
    const locked = await verify(t, temp, appCode(secret, clock.now()));
    expect429(locked, 15 * 60);
    expect(Number(locked.headers.get("retry-after"))).toBeGreaterThan(10 * 60);
    expect429(await t.json("POST", DISABLE, { token: org.access_token, body: { password: org.password, code: appCode(secret, clock.now()) } }), 15 * 60);

    clock.advance(10 * 60_000);
    expect429(await verify(t, await challenge(t, org.email, org.password), appCode(secret, clock.now())), 5 * 60);
    clock.advance(5 * 60_000);
    const open = await verify(t, await challenge(t, org.email, org.password), appCode(secret, clock.now()));
    expect(open.status).toBe(200);
    expect(await testSql(t.ctx).get("SELECT failures, locked_until FROM user_totp")).toEqual({ failures: 0, locked_until: null });
  });

  test("wrong codes sent to disable count toward the lock with verify's", async () => {
    const o = await enabledOrg();
    const { t, clock, org, secret } = o;
    await failMany(o, 15);
    for (let i = 0; i < 5; i++) {
      const r = await t.json("POST", DISABLE, { token: org.access_token, body: { password: org.password, code: wrongCode(secret, clock.now()) } });
      expect(r.body.code).toBe("invalid_2fa_code");
    }
    expect((await allAudit(t)).filter((a) => a.action === "2fa.locked")).toHaveLength(1);
    clock.advance(NEXT_MINUTE);
    expect429(await verify(t, await challenge(t, org.email, org.password), appCode(secret, clock.now())), 15 * 60);
  });

  test("a success resets the count", async () => {
    const o = await enabledOrg();
    await failMany(o, 19);
    expect((await verify(o.t, await challenge(o.t, o.org.email, o.org.password), o.backupCodes[0]!)).status).toBe(200);
    o.clock.advance(NEXT_MINUTE);
    await failMany(o, 19);
    // 38 failures in all, never 20 in a row: not locked.
    expect((await allAudit(o.t)).filter((a) => a.action === "2fa.locked")).toHaveLength(0);
    expect((await verify(o.t, await challenge(o.t, o.org.email, o.org.password), appCode(o.secret, o.clock.now()))).status).toBe(200);
  });
});
