import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { AuditRow } from "../../src/security/repo";
import { LOGIN, REFRESH, SESSIONS, allAudit, claimsOf, clockedApp, sessionIdOf } from "./support";

// Behind a trusted proxy, so the audit's ip column has something to show.
const { t, clock } = clockedApp({ env: { SUITE_TRUST_PROXY: "true" } });
afterAll(() => t.close());

const IP = "203.0.113.7";
const UA = "AuditTest/1.0 (+https://example.test)";
const from = { "x-forwarded-for": `10.0.0.1, ${IP}`, "user-agent": UA };
const PASSWORD = "a secret password 123";
const WRONG = "wrong secret guess 456";

/** Every secret the scenario below handles: none may appear in the audit table. */
const secrets: string[] = [PASSWORD, WRONG];
const keep = (body: { access_token?: string; refresh_token?: string }) => {
  for (const tok of [body.access_token, body.refresh_token]) if (tok) secrets.push(tok, tok.split(".")[2]!);
  return body;
};

let tenantId: string;
let userId: string;
let rows: AuditRow[];
const sids: Record<string, string> = {};

beforeAll(async () => {
  const signup = await t.json("POST", "/api/v1/auth/signup", {
    body: { email: "owner@audit.test", password: PASSWORD, tenant_name: "Audit Org", subdomain: "audit" },
    headers: from,
  });
  expect(signup.status).toBe(201);
  keep(signup.body);
  tenantId = signup.body.tenant.id;
  userId = signup.body.user.id;
  const tick = () => clock.advance(1000);

  const signIn = async () => {
    tick();
    const r = await t.json("POST", LOGIN, { body: { email: "owner@audit.test", password: PASSWORD }, headers: from });
    expect(r.status).toBe(200);
    return keep(r.body) as { access_token: string; refresh_token: string };
  };
  const a = await signIn();
  const b = await signIn();
  const c = await signIn();
  sids.b = await sessionIdOf(t, b.access_token);

  tick();
  // Naming the organization: a tenant-less failure's row carries no IP or user agent (issue 29.1,
  // tests/auth/sign-in-providers/cross-org-verification.test.ts).
  expect((await t.json("POST", LOGIN, { body: { email: "owner@audit.test", password: WRONG }, headers: { ...from, "x-tenant": "audit" } })).status).toBe(401);
  tick();
  const ghost = await t.json("POST", LOGIN, { body: { email: "ghost@audit.test", password: WRONG }, headers: { ...from, "x-tenant": "audit" } });
  expect(ghost.status).toBe(401);

  tick();
  expect((await t.json("POST", `${SESSIONS}/revoke`, { token: a.access_token, body: { session_id: sids.b }, headers: from })).status).toBe(200);

  tick();
  const rotated = keep((await t.json("POST", REFRESH, { body: { refresh_token: c.refresh_token }, headers: from })).body);
  expect(rotated.refresh_token).toBeString();
  clock.advance(11_000);
  expect((await t.json("POST", REFRESH, { body: { refresh_token: c.refresh_token }, headers: from })).status).toBe(401);

  tick();
  expect((await t.json("POST", `${SESSIONS}/revoke-others`, { token: a.access_token, headers: from })).status).toBe(200);
  const d = await signIn();
  tick();
  expect((await t.json("POST", "/api/v1/auth/logout-all", { token: d.access_token, headers: from })).status).toBe(200);

  rows = await t.ctx.repos.security.auditForTenant(tenantId, 1000);
});

const ofAction = (action: string) => rows.filter((r) => r.action === action);

describe("audit_log", () => {
  test("records every sign-in, failure and session change of the scenario, in order", () => {
    const actions = [...rows].reverse().map((r) => r.action);
    expect(actions).toEqual([
      "tenant.signup",
      "email.verification_sent",
      "login.success",
      "login.success",
      "login.success",
      "login.failure",
      "login.failure",
      "session.revoke",
      "session.refresh_reuse",
      "session.revoke_others",
      "login.success",
      "session.logout_all",
    ]);
  });

  test("each row says who, which tenant, when, from which IP and user agent", () => {
    for (const r of rows) {
      expect(r.tenant_id).toBe(tenantId);
      expect(r.ip).toBe(IP);
      expect(r.user_agent).toBe(UA);
      expect(r.created_at).toBeGreaterThan(0);
      expect(r.created_at).toBeLessThanOrEqual(clock.now());
    }
    for (const r of rows.filter((x) => !(x.action === "login.failure" && x.user_id === null))) expect(r.user_id).toBe(userId);
  });

  test("signup and sign-in rows", () => {
    expect(ofAction("tenant.signup")).toHaveLength(1);
    expect(JSON.parse(ofAction("tenant.signup")[0]!.detail!)).toMatchObject({ subdomain: "audit" });
    expect(ofAction("login.success").every((r) => JSON.parse(r.detail!).method === "password")).toBe(true);
  });

  test("failures distinguish a wrong password from an unknown email, internally only", () => {
    const failures = ofAction("login.failure");
    const wrong = failures.find((r) => r.user_id === userId)!;
    const unknown = failures.find((r) => r.user_id === null)!;
    expect(JSON.parse(wrong.detail!)).toMatchObject({ email: "owner@audit.test", reason: "wrong_password" });
    expect(JSON.parse(unknown.detail!)).toMatchObject({ email: "ghost@audit.test", reason: "unknown_email" });
  });

  test("session rows name the session or count", () => {
    expect(JSON.parse(ofAction("session.revoke")[0]!.detail!)).toEqual({ session_id: sids.b });
    expect(ofAction("session.refresh_reuse")).toHaveLength(1);
    expect(JSON.parse(ofAction("session.revoke_others")[0]!.detail!).count).toBe(1);
    expect(JSON.parse(ofAction("session.logout_all")[0]!.detail!).count).toBe(2);
  });

  test("a lock-out is audited", async () => {
    const { t: t2 } = clockedApp();
    try {
      const org = await t2.signup("locks");
      for (let i = 0; i < 10; i++) await t2.json("POST", LOGIN, { body: { email: org.email, password: WRONG } });
      expect((await t2.json("POST", LOGIN, { body: { email: org.email, password: org.password } })).status).toBe(429);
      const locked = (await t2.ctx.repos.security.auditForTenant(org.tenant.id)).filter((r) => r.action === "login.locked");
      expect(locked).toHaveLength(1);
      expect(locked[0]!.user_id).toBe(org.user.id);
    } finally {
      t2.close();
    }
  });

  test("no password, token, token signature or password hash anywhere in the audit table", async () => {
    const dump = JSON.stringify((await allAudit(t)));
    expect(secrets.length).toBeGreaterThan(10);
    for (const s of secrets) expect(dump.includes(s)).toBe(false);
    expect(dump).not.toContain("eyJ");
    expect(dump).not.toContain("$argon2");
    // Nor in the tenant-less rows, nor in the logs.
    const logs = JSON.stringify(t.logs);
    for (const s of secrets) expect(logs.includes(s)).toBe(false);
  });

  test("another tenant's reader sees none of these rows", async () => {
    const other = await t.signup("elsewhere");
    const theirs = await t.ctx.repos.security.auditForTenant(other.tenant.id);
    expect(theirs.map((r) => r.action).sort()).toEqual(["email.verification_sent", "tenant.signup"]);
  });
});
