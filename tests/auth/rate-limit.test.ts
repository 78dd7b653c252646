import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type TestApp, testApp } from "../helpers";
import { clock as makeClock, clockedApp, login } from "./support";

// A sign-in without a tenant costs three argon2 verifies (auth/password-check.ts): these tests run dozens.
setDefaultTimeout(60_000);
const apps: TestApp[] = [];
const dirs: string[] = [];
afterAll(() => {
  for (const a of apps) a.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function fresh() {
  const { t, clock } = clockedApp();
  apps.push(t);
  const org = await t.signup("acme");
  return { t, clock, org };
}

const WRONG = "definitely wrong password";
const ACME = { "x-tenant": "acme" };

async function fail(t: TestApp, email: string, n: number) {
  for (let i = 0; i < n; i++) {
    const r = await login(t, email, WRONG);
    expect({ attempt: i + 1, status: r.status, code: r.body.code }).toEqual({ attempt: i + 1, status: 401, code: "invalid_credentials" });
  }
}

function expectLimited(r: { status: number; headers: Headers; body: unknown }, maxSeconds: number) {
  expect(r.status).toBe(429);
  expect(r.body).toEqual({ detail: expect.any(String), code: "rate_limited" });
  const after = r.headers.get("retry-after");
  expect(after).toMatch(/^\d+$/);
  expect(Number(after)).toBeGreaterThanOrEqual(1);
  expect(Number(after)).toBeLessThanOrEqual(maxSeconds);
}

describe("per account", () => {
  test("10 failures, then 429 with Retry-After even for the right password; open again after 15 min", async () => {
    const { t, clock, org } = await fresh();
    await fail(t, org.email, 10);
    const right = await login(t, org.email, org.password);
    expectLimited(right, 15 * 60);
    expect(right.res.headers.getSetCookie()).toEqual([]);
    expectLimited(await login(t, org.email, WRONG), 15 * 60);
    // The case of the address does not make another account.
    expectLimited(await login(t, org.email.toUpperCase(), org.password), 15 * 60);
    expectLimited(await login(t, org.email, org.password, { "x-tenant": "acme" }), 15 * 60);

    clock.advance(14 * 60_000);
    const stillLocked = await login(t, org.email, org.password);
    expectLimited(stillLocked, 60);
    clock.advance(60_000 + 1000);
    expect((await login(t, org.email, org.password)).status).toBe(200);
  });

  test("a success resets the failure counter", async () => {
    const { t, org } = await fresh();
    await fail(t, org.email, 9);
    expect((await login(t, org.email, org.password)).status).toBe(200);
    // A full fresh allowance of 10 failures.
    await fail(t, org.email, 10);
    expectLimited(await login(t, org.email, org.password), 15 * 60);
  });

  test("the limit is per account: another user is not locked out", async () => {
    const { t, org } = await fresh();
    const other = await t.signup("other");
    await fail(t, org.email, 10);
    expect((await login(t, other.email, other.password)).status).toBe(200);
  });

  test("unknown emails are limited too, with the same answers", async () => {
    const { t } = await fresh();
    await fail(t, "ghost@acme.test", 10);
    expectLimited(await login(t, "ghost@acme.test", WRONG), 15 * 60);
  });

  test("a concurrent burst cannot try more than 10 passwords", async () => {
    const { t, org } = await fresh();
    const rs = await Promise.all(Array.from({ length: 16 }, () => login(t, org.email, WRONG)));
    const statuses = rs.map((r) => r.status);
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(10);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(6);
    expect(statuses.every((s) => s === 401 || s === 429)).toBe(true);
    expectLimited(await login(t, org.email, org.password), 15 * 60);
  });
});

describe("per IP", () => {
  test("60 attempts per minute, then 429; the next minute opens again", async () => {
    const { t, clock, org } = await fresh();
    // Spread over many accounts so that no account limit interferes; naming the tenant keeps each to one hash.
    for (let i = 0; i < 60; i++) {
      const r = await login(t, `nobody${i}@acme.test`, WRONG, ACME);
      expect({ i, status: r.status }).toEqual({ i, status: 401 });
    }
    const blocked = await login(t, org.email, org.password);
    expectLimited(blocked, 60);
    expectLimited(await login(t, "someone-else@acme.test", WRONG), 60);
    clock.advance(60_000);
    expect((await login(t, org.email, org.password)).status).toBe(200);
  });

  test("successful sign-ins count as attempts too", async () => {
    const { t, org } = await fresh();
    // In batches: more than 10 sign-ins of one account in flight at once hit the account limit.
    for (let batch = 0; batch < 10; batch++) {
      const rs = await Promise.all(Array.from({ length: 6 }, () => login(t, org.email, org.password, ACME)));
      expect(rs.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    }
    expectLimited(await login(t, org.email, org.password), 60);
  });
});

describe("persistence", () => {
  test("counters survive a restart on the same database file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "suite-rl-"));
    dirs.push(dir);
    const db = join(dir, "x.db");
    const c = makeClock();
    const first = testApp({ db, now: c.now });
    const org = await first.signup("acme");
    await fail(first, org.email, 10);
    expectLimited(await login(first, org.email, org.password), 15 * 60);
    first.close();

    const second = testApp({ db, now: c.now });
    apps.push(second);
    expectLimited(await login(second, org.email, org.password), 15 * 60);
    // And the window still ends when it should.
    c.advance(15 * 60_000 + 1000);
    const ok = await login(second, org.email, org.password);
    expect(ok.status).toBe(200);
  });

  test("the IP counter survives a restart too", async () => {
    const dir = mkdtempSync(join(tmpdir(), "suite-rl-"));
    dirs.push(dir);
    const db = join(dir, "x.db");
    const c = makeClock();
    const first = testApp({ db, now: c.now, limits: { loginPerIp: { name: "login-ip", max: 3, windowMs: 60_000 } } });
    for (let i = 0; i < 3; i++) expect((await login(first, `n${i}@x.test`, WRONG)).status).toBe(401);
    first.close();
    const second = testApp({ db, now: c.now, limits: { loginPerIp: { name: "login-ip", max: 3, windowMs: 60_000 } } });
    apps.push(second);
    expectLimited(await login(second, "n9@x.test", WRONG), 60);
  });
});
