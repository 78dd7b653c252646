/**
 * The sign-in lock keyed on (account, source) with a higher account-wide threshold (issue 29.8),
 * and no false lock-outs when right passwords arrive together (issue 28.4).
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { TestApp } from "../helpers";
import { allAudit, clockedApp, login } from "./support";
import { askLink } from "./magic-link/support";

setDefaultTimeout(90_000);
const apps: TestApp[] = [];
afterAll(() => apps.forEach((a) => a.close()));

const WRONG = "definitely wrong password";
/** Requests as if from `ip` (the app trusts X-Forwarded-For, as behind a proxy). */
const from = (ip: string, extra: Record<string, string> = {}) => ({ "x-forwarded-for": ip, ...extra });

async function fresh() {
  const { t, clock } = clockedApp({ env: { SUITE_TRUST_PROXY: "true" } });
  apps.push(t);
  const org = await t.signup("acme");
  return { t, clock, org };
}

const lockedRows = async (t: TestApp) => (await allAudit(t)).filter((a) => a.action === "login.locked");

describe("right passwords that arrive together", () => {
  test("20 sign-ins naming the organization at once all succeed and write no login.locked", async () => {
    const { t, org } = await fresh();
    const rs = await Promise.all(Array.from({ length: 20 }, () => login(t, org.email, org.password, from("198.51.100.7", { "x-tenant": "acme" }))));
    expect(rs.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(await lockedRows(t)).toEqual([]);
  });

  test("20 tenant-less sign-ins at once all succeed and write no login.locked", async () => {
    const { t, org } = await fresh();
    const rs = await Promise.all(Array.from({ length: 20 }, () => login(t, org.email, org.password, from("198.51.100.7"))));
    expect(rs.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(await lockedRows(t)).toEqual([]);
  });

  test("after 9 wrong passwords, a burst of right ones still all succeeds (a right password is never counted)", async () => {
    const { t, org } = await fresh();
    for (let i = 0; i < 9; i++) expect((await login(t, org.email, WRONG, from("198.51.100.7", { "x-tenant": "acme" }))).status).toBe(401);
    const rs = await Promise.all(Array.from({ length: 12 }, () => login(t, org.email, org.password, from("198.51.100.7", { "x-tenant": "acme" }))));
    expect(rs.map((r) => r.status)).toEqual(Array(12).fill(200));
    expect(await lockedRows(t)).toEqual([]);
  });
});

describe("a stranger's failures", () => {
  test("lock the stranger's source, not the owner signing in from another address", async () => {
    const { t, org } = await fresh();
    for (let i = 0; i < 10; i++) expect((await login(t, org.email, WRONG, from("203.0.113.66"))).status).toBe(401);
    // The stranger is locked out, right password or not...
    expect((await login(t, org.email, org.password, from("203.0.113.66"))).status).toBe(429);
    expect((await login(t, org.email, WRONG, from("203.0.113.66", { "x-tenant": "acme" }))).status).toBe(429);
    // ...the owner is not, with or without naming the organization.
    expect((await login(t, org.email, org.password, from("198.51.100.7"))).status).toBe(200);
    expect((await login(t, org.email, org.password, from("198.51.100.7", { "x-tenant": "acme" }))).status).toBe(200);
  });

  test("a concurrent burst from one source still cannot try more than 10 passwords", async () => {
    const { t, org } = await fresh();
    const rs = await Promise.all(Array.from({ length: 16 }, () => login(t, org.email, WRONG, from("203.0.113.66", { "x-tenant": "acme" }))));
    const statuses = rs.map((r) => r.status);
    expect(statuses.filter((s) => s === 401).length).toBe(10);
    expect(statuses.filter((s) => s === 429).length).toBe(6);
  });

  test("spread over many sources, they meet the account-wide lock at 50, which locks the owner too until it passes", async () => {
    const { t, clock, org } = await fresh();
    for (let i = 0; i < 50; i++) {
      const r = await login(t, org.email, WRONG, from(`203.0.113.${i + 1}`, { "x-tenant": "acme" }));
      expect({ i, status: r.status }).toEqual({ i, status: 401 });
    }
    const owner = await login(t, org.email, org.password, from("198.51.100.7", { "x-tenant": "acme" }));
    expect(owner.status).toBe(429);
    expect(Number(owner.headers.get("retry-after"))).toBeGreaterThan(14 * 60);
    expect((await lockedRows(t)).length).toBe(1);
    clock.advance(15 * 60_000 + 1000);
    expect((await login(t, org.email, org.password, from("198.51.100.7", { "x-tenant": "acme" }))).status).toBe(200);
  });

  test("an admin's unlock lifts every source's lock", async () => {
    const { t, org } = await fresh();
    for (let i = 0; i < 10; i++) expect((await login(t, org.email, WRONG, from("198.51.100.7", { "x-tenant": "acme" }))).status).toBe(401);
    expect((await login(t, org.email, org.password, from("198.51.100.7", { "x-tenant": "acme" }))).status).toBe(429);
    const other = await t.json("POST", `/api/v1/users/${org.user.id}/unlock`, { token: org.access_token, headers: from("192.0.2.1") });
    expect(other.status).toBe(200);
    expect((await login(t, org.email, org.password, from("198.51.100.7", { "x-tenant": "acme" }))).status).toBe(200);
  });
});

describe("mails to the owner", () => {
  test("a stranger using up the magic-link allowance from one source does not stop the owner's link", async () => {
    const { t, org } = await fresh();
    for (let i = 0; i < 3; i++) expect((await askLink(t, org.email, { tenant: "acme", headers: from("203.0.113.66") })).status).toBe(202);
    expect((await askLink(t, org.email, { tenant: "acme", headers: from("203.0.113.66") })).status).toBe(429);
    expect((await askLink(t, org.email, { tenant: "acme", headers: from("198.51.100.7") })).status).toBe(202);
    const links = (await t.ctx.repos.mail.list()).filter((r) => r.kind === "magic_link");
    expect(links).toHaveLength(4);
  });

  test("a stranger using up the reset allowance from one source does not stop the owner's reset mail", async () => {
    const { t, org } = await fresh();
    const forgot = (ip: string) => t.json("POST", "/api/v1/auth/password/forgot", { body: { email: org.email }, tenant: "acme", headers: from(ip) });
    for (let i = 0; i < 3; i++) expect((await forgot("203.0.113.66")).status).toBe(202);
    expect((await forgot("203.0.113.66")).status).toBe(429);
    expect((await forgot("198.51.100.7")).status).toBe(202);
    await t.ctx.password.settled();
    const resets = (await t.ctx.repos.mail.list()).filter((r) => r.kind === "password_reset");
    expect(resets).toHaveLength(4);
  });
});
