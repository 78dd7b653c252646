/**
 * Sign-in that names no tenant (issue 13, 2a): neither the answer nor the work done may tell a
 * caller without the password whether, or where, an address has accounts.
 */
import { afterAll, beforeEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { ANY_TENANT_ACCOUNTS } from "../../src/auth/password-check";
import type { TestApp } from "../helpers";
import { allAudit, claimsOf, clockedApp, login } from "./support";

const WRONG = "definitely wrong password";
const OTHER = "another good password";
// Each tenant-less sign-in costs three argon2 verifies: these tests run dozens on a shared machine.
setDefaultTimeout(60_000);
const apps: TestApp[] = [];
afterAll(() => apps.forEach((a) => a.close()));

let t: TestApp;
let clock: ReturnType<typeof clockedApp>["clock"];
beforeEach(() => {
  ({ t, clock } = clockedApp());
  apps.push(t);
});

/** A new organization whose admin is `email` with `password`. */
async function account(subdomain: string, email: string, password: string) {
  clock.advance(1000);
  const r = await t.json("POST", "/api/v1/auth/signup", { body: { email, password, tenant_name: `Org ${subdomain}`, subdomain } });
  expect(r.status).toBe(201);
  return { tenantId: r.body.tenant.id as string, userId: r.body.user.id as string };
}

/** Counts the argon2 verifies the hasher runs (real accounts and stand-ins alike). */
function countVerifies(app: TestApp) {
  const h = app.ctx.hasher;
  const counts = { real: 0, standIn: 0 };
  const verify = h.verify;
  const nobody = h.verifyNobody;
  h.verify = (p, hash) => (counts.real++, verify(p, hash));
  h.verifyNobody = (p) => (counts.standIn++, nobody(p));
  return { counts, total: () => counts.real + counts.standIn, reset: () => ((counts.real = 0), (counts.standIn = 0)) };
}

describe("the answer", () => {
  test("a wrong password is 401 invalid_credentials whether the address has 0, 1, 2 or 3 accounts; byte-identical bodies", async () => {
    const bodies: string[] = [];
    const emails = ["none@x.test", "one@x.test", "two@x.test", "three@x.test"];
    for (const [n, email] of emails.entries()) {
      for (let i = 0; i < n; i++) await account(`s${n}${i}`, email, "correct horse battery");
      const r = await t.request("POST", "/api/v1/auth/login", { body: { email, password: WRONG } });
      expect({ n, status: r.status }).toEqual({ n, status: 401 });
      expect(r.headers.get("www-authenticate")).toBe("Bearer");
      bodies.push(await r.text());
    }
    expect(new Set(bodies).size).toBe(1);
    expect(JSON.parse(bodies[0]!).code).toBe("invalid_credentials");
  });

  test("tenant_required only when the password matches two of the accounts; one match signs into that one", async () => {
    const a = await account("first", "pat@x.test", "correct horse battery");
    const b = await account("second", "pat@x.test", OTHER);
    const one = await login(t, "pat@x.test", OTHER);
    expect(one.status).toBe(200);
    expect(claimsOf(one.body.access_token)).toMatchObject({ tid: b.tenantId, sub: b.userId });
    const other = await login(t, "pat@x.test", "correct horse battery");
    expect(claimsOf(other.body.access_token)).toMatchObject({ tid: a.tenantId, sub: a.userId });
    await account("third", "pat@x.test", OTHER);
    const two = await login(t, "pat@x.test", OTHER);
    expect(two.status).toBe(400);
    expect(two.body.code).toBe("tenant_required");
    expect(two.res.headers.getSetCookie()).toEqual([]);
  });

  test("a throwaway workspace's owner learns nothing of the address's other accounts", async () => {
    // The attacker signs up with the victim's address and a password of their own.
    const victim = "victim@x.test";
    const throwaway = await account("throwaway", victim, "attacker password 1");
    const before = await login(t, victim, "attacker password 1");
    await account("real", victim, "my own password 1");
    const after = await login(t, victim, "attacker password 1");
    // The same answer, with or without the victim's own account: a session in the throwaway.
    expect([before.status, after.status]).toEqual([200, 200]);
    expect(claimsOf(after.body.access_token).tid).toBe(throwaway.tenantId);
  });
});

describe("the work done", () => {
  test(`every sign-in without a tenant runs exactly ${ANY_TENANT_ACCOUNTS} argon2 verifies, whatever the address has`, async () => {
    const hashes = countVerifies(t);
    const seen: Array<{ accounts: number; verifies: number; real: number }> = [];
    for (let n = 0; n <= ANY_TENANT_ACCOUNTS + 1; n++) {
      const email = `n${n}@x.test`;
      for (let i = 0; i < n; i++) await account(`c${n}${i}`, email, "correct horse battery");
      hashes.reset();
      expect((await login(t, email, WRONG)).status).toBe(401);
      seen.push({ accounts: n, verifies: hashes.total(), real: hashes.counts.real });
    }
    expect(seen).toEqual([
      { accounts: 0, verifies: 3, real: 0 },
      { accounts: 1, verifies: 3, real: 1 },
      { accounts: 2, verifies: 3, real: 2 },
      { accounts: 3, verifies: 3, real: 3 },
      // More accounts than that: the oldest three are tried, and the cost stays the same.
      { accounts: 4, verifies: 3, real: 3 },
    ]);
  });

  test("a right password costs the same count as a wrong one", async () => {
    const hashes = countVerifies(t);
    await account("only", "solo@x.test", "correct horse battery");
    expect((await login(t, "solo@x.test", "correct horse battery")).status).toBe(200);
    expect(hashes.total()).toBe(ANY_TENANT_ACCOUNTS);
  });
});

describe("limits", () => {
  test("attempts without a tenant count toward every account's lock, and the address's own", async () => {
    await account("lima", "lim@x.test", "correct horse battery");
    await account("limb", "lim@x.test", OTHER);
    for (let i = 0; i < 10; i++) expect((await login(t, "lim@x.test", WRONG)).status).toBe(401);
    // Both accounts are locked when named, even for the right password...
    expect((await login(t, "lim@x.test", "correct horse battery", { "x-tenant": "lima" })).status).toBe(429);
    expect((await login(t, "lim@x.test", OTHER, { "x-tenant": "limb" })).status).toBe(429);
    // ...and so is the address without a tenant.
    const r = await login(t, "lim@x.test", OTHER);
    expect(r.status).toBe(429);
    expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
    // Each organization's audit log shows the lock on its own member.
    const locked = (await allAudit(t)).filter((a) => a.action === "login.locked");
    expect(new Set(locked.map((a) => a.tenant_id)).size).toBe(2);
    clock.advance(15 * 60_000 + 1000);
    expect((await login(t, "lim@x.test", OTHER)).status).toBe(200);
  });

  test("an address's own lock (no tenant) says nothing about its accounts: unknown addresses lock the same way", async () => {
    await account("known", "known@x.test", "correct horse battery");
    for (const email of ["known@x.test", "unknown@x.test"]) {
      for (let i = 0; i < 10; i++) expect((await login(t, email, WRONG)).status).toBe(401);
      expect((await login(t, email, WRONG)).status).toBe(429);
    }
  });

  test("an account locked by attempts naming its organization does not make the tenant-less answer a 429", async () => {
    // Locking "guess:<address>" works whether or not the address has an account there; were the
    // tenant-less answer then 429 only for a real account, it would say where the address lives.
    await account("guess", "where@x.test", "correct horse battery");
    await account("elsewhere", "nowhere@x.test", "correct horse battery");
    for (const email of ["where@x.test", "nowhere@x.test"]) {
      for (let i = 0; i < 10; i++) await login(t, email, WRONG, { "x-tenant": "guess" });
      expect((await login(t, email, WRONG, { "x-tenant": "guess" })).status).toBe(429);
    }
    const a = await login(t, "where@x.test", WRONG);
    const b = await login(t, "nowhere@x.test", WRONG);
    expect([a.status, a.body.code]).toEqual([401, "invalid_credentials"]);
    expect([b.status, b.body.code]).toEqual([401, "invalid_credentials"]);
    // The locked account is not tried, even with its right password: no oracle of the password either.
    expect((await login(t, "where@x.test", "correct horse battery")).status).toBe(401);
    const audit = (await allAudit(t)).filter((r) => r.action === "login.locked" && JSON.parse(String(r.detail)).tenant_named === false);
    expect(audit.length).toBeGreaterThanOrEqual(1);
  });
});
