import { expect } from "bun:test";
import { claimsOf } from "../../auth/support";
import { browserHeaders } from "../../helpers";
import { type Attempt, API, PW, asB, req, notFound, mismatch, ownPage } from "./attempt-kit";
import { countOf, mailedToken, type World } from "./world";

/** Signup, sign-in and sessions: A's subdomain, accounts, tokens and session ids from B. */
export const AUTH_ATTEMPTS: Attempt[] = [
  {
    op: "POST /api/v1/auth/password/forgot",
    what: "A's admin address on B's host: the same 202, and no reset link for A's admin",
    send: (w) => req("POST", "/auth/password/forgot", { tenant: "bravo", body: { email: w.a.admin.email } }),
    expect: { status: 202 },
    check: async (_body, w) => {
      await w.t.ctx.password.settled();
      const mailed = (await w.t.ctx.repos.mail.list()).filter((m) => m.kind === "password_reset" && m.recipient === w.a.admin.email);
      expect(mailed).toEqual([]);
    },
  },
  {
    op: "POST /api/v1/auth/password/reset",
    what: "a token B made up, on B's host, naming A's tenant",
    send: (w) => req("POST", "/auth/password/reset", { tenant: "bravo", body: { token: `${w.a.tenantId}-reset`, password: PW, tenant_id: w.a.tenantId } }),
    expect: { status: 400, code: "reset_token_invalid" },
    tenantIdInBody: true,
  },
  {
    op: "POST /api/v1/auth/not-me",
    what: "A's magic-link token used as a \"this wasn't me\" token on B's host: ends none of A's sessions",
    send: (w) => req("POST", "/auth/not-me", { tenant: "bravo", body: { token: w.a.magicToken, tenant_id: w.a.tenantId } }),
    expect: { status: 400, code: "not_me_token_invalid" },
    tenantIdInBody: true,
  },
  {
    op: "POST /api/v1/auth/not-me",
    what: "a token B made up naming A's tenant",
    send: (w) => req("POST", "/auth/not-me", { tenant: "bravo", body: { token: `${w.a.tenantId}.${"A".repeat(43)}` } }),
    expect: { status: 400, code: "not_me_token_invalid" },
  },
  {
    op: "POST /api/v1/auth/email/verify",
    what: "A's magic-link token used as a verification token on B's host",
    send: (w) => req("POST", "/auth/email/verify", { tenant: "bravo", body: { token: w.a.magicToken, tenant_id: w.a.tenantId } }),
    expect: { status: 400, code: "verification_token_invalid" },
    tenantIdInBody: true,
  },
  // ---- signup and sign-in: A's subdomain, A's accounts, A's tenant id ----
  {
    op: "POST /api/v1/auth/signup",
    what: "signup naming A's tenant_id makes a new tenant",
    send: (w) => req("POST", "/auth/signup", { body: { email: "founder@charlie.test", password: PW, tenant_name: "Charlie", subdomain: "charlie", tenant_id: w.a.tenantId } }),
    expect: { status: 201 },
    check: (b, w) => {
      expect(b.tenant.id).not.toBe(w.a.tenantId);
      expect(b.user.tenant_id).toBe(b.tenant.id);
    },
    tenantIdInBody: true,
  },
  {
    op: "POST /api/v1/auth/signup",
    what: "signup for A's subdomain",
    send: () => req("POST", "/auth/signup", { body: { email: "thief@people.test", password: PW, tenant_name: "Thief", subdomain: "alpha" } }),
    expect: { status: 409, code: "subdomain_taken" },
  },
  ...[{ tenant: "bravo" }, { headers: { "x-tenant": "bravo" } }].map(
    (where): Attempt => ({
      op: "POST /api/v1/auth/login",
      what: `A's admin email and password on B (${Object.keys(where)[0]})`,
      send: (w) => req("POST", "/auth/login", { ...where, body: { email: w.a.admin.email, password: w.a.admin.password } }),
      expect: { status: 401, code: "invalid_credentials" },
    }),
  ),
  {
    op: "POST /api/v1/auth/login",
    what: "B's admin credentials on A's host",
    send: (w) => req("POST", "/auth/login", { tenant: "alpha", body: { email: w.b.admin.email, password: w.b.admin.password } }),
    expect: { status: 401, code: "invalid_credentials" },
  },
  {
    op: "POST /api/v1/auth/login",
    what: "the shared address with A's member password on B's host",
    send: (w) => req("POST", "/auth/login", { tenant: "bravo", body: { email: w.a.member.email, password: w.a.member.password } }),
    expect: { status: 401, code: "invalid_credentials" },
  },
  {
    op: "POST /api/v1/auth/login",
    // The password picks the account (issue 13, 2a): only B's matches, so B's member is meant, never A's.
    what: "the shared address with B's member password, no tenant named: B's member, not A's",
    send: (w) => req("POST", "/auth/login", { body: { email: w.b.member.email, password: w.b.member.password } }),
    expect: { status: 200 },
    check: (body, w) => {
      const claims = JSON.parse(Buffer.from(String(body.access_token).split(".")[1]!, "base64url").toString("utf8"));
      if (claims.tid === w.a.tenantId || claims.sub !== w.b.member.id) throw new Error(`signed in as ${claims.sub} of ${claims.tid}`);
    },
  },
  {
    op: "POST /api/v1/auth/login",
    what: "B's admin login naming A's tenant_id signs in to B",
    send: (w) => req("POST", "/auth/login", { tenant: "bravo", body: { email: w.b.admin.email, password: w.b.admin.password, tenant_id: w.a.tenantId } }),
    expect: { status: 200 },
    check: (b, w) => expect(claimsOf(b.access_token).tid).toBe(w.b.tenantId),
    tenantIdInBody: true,
  },
  ...(
    [
      ["A's refresh token on B's host", (w: World) => ({ tenant: "bravo", body: { refresh_token: w.a.admin.refresh } })],
      ["A's refresh token with X-Tenant: bravo", (w: World) => ({ headers: { "x-tenant": "bravo" }, body: { refresh_token: w.a.admin.refresh } })],
      ["A's rotated refresh token on B's host (no reuse detection fires)", (w: World) => ({ tenant: "bravo", body: { refresh_token: w.a.rotatedRefresh } })],
      ["A's member's refresh token on B's host", (w: World) => ({ tenant: "bravo", body: { refresh_token: w.a.member.refresh } })],
      [
        "A's svc_refresh cookie on B's host",
        (w: World) => ({ tenant: "bravo", cookies: { svc_refresh: w.a.admin.refresh }, headers: browserHeaders("http://bravo.localhost:8000") }),
      ],
    ] as const
  ).map(([what, o]): Attempt => ({ op: "POST /api/v1/auth/refresh", what, send: (w) => req("POST", "/auth/refresh", o(w)), expect: mismatch })),
  ...[{ tenant: "bravo" }, { headers: { "x-tenant": "bravo" } }].map(
    (where): Attempt => ({
      op: "POST /api/v1/auth/2fa/verify",
      what: `A's temp_token with a valid code on B (${Object.keys(where)[0]})`,
      send: (w) => req("POST", "/auth/2fa/verify", { ...where, body: { temp_token: w.a.tempToken, code: w.code() } }),
      expect: mismatch,
    }),
  ),
  {
    op: "POST /api/v1/auth/magic-link",
    what: "a link for A's admin asked on B's host, naming A's tenant_id: no mail",
    send: (w) => req("POST", "/auth/magic-link", { tenant: "bravo", body: { email: w.a.admin.email, tenant_id: w.a.tenantId } }),
    expect: { status: 202 },
    check: async (_b, w) => {
      await w.t.ctx.magicLinks.settled();
      expect(await countOf(w.t, "magic_links", w.b.tenantId)).toBe(0);
      expect(await countOf(w.t, "mail_outbox", w.b.tenantId, `recipient = '${w.a.admin.email}'`)).toBe(0);
    },
    tenantIdInBody: true,
  },
  {
    op: "POST /api/v1/auth/magic-link",
    what: "a link for the address both tenants share, asked on B's host, goes to B's member only",
    send: (w) => req("POST", "/auth/magic-link", { tenant: "bravo", body: { email: w.b.member.email } }),
    expect: { status: 202 },
    check: async (_b, w) => {
      await w.t.ctx.magicLinks.settled();
      expect(await countOf(w.t, "magic_links", w.b.tenantId, `user_id = '${w.b.member.id}'`)).toBe(1);
    },
  },
  ...[{ tenant: "bravo" }, { headers: { "x-tenant": "bravo" } }].map(
    (where): Attempt => ({
      op: "POST /api/v1/auth/magic-verify",
      what: `A's magic-link token on B (${Object.keys(where)[0]})`,
      send: (w) => req("POST", "/auth/magic-verify", { ...where, body: { token: w.a.magicToken } }),
      expect: mismatch,
    }),
  ),
  ...[{ tenant: "bravo" }, { headers: { "x-tenant": "bravo" } }].map(
    (where): Attempt => ({
      op: "POST /api/v1/auth/invitations/accept",
      what: `A's pending invitation token on B (${Object.keys(where)[0]})`,
      send: (w) => req("POST", "/auth/invitations/accept", { ...where, body: { token: w.a.invitations.pending.token, password: PW } }),
      expect: mismatch,
    }),
  ),
  {
    op: "POST /api/v1/auth/invitations/accept",
    what: "A's revoked invitation token on B's host",
    send: (w) => req("POST", "/auth/invitations/accept", { tenant: "bravo", body: { token: w.a.invitations.revoked.token, password: PW } }),
    expect: { status: 400, code: "invitation_invalid" },
  },
  {
    op: "POST /api/v1/auth/invitations/accept",
    what: "accepting B's invitation with A's tenant_id joins B",
    send: async (w) => {
      const r = await w.t.json("POST", `${API}/users/invite`, { ...asB(w), body: { email: "joiner@people.test" } });
      expect(r.status).toBe(201);
      return req("POST", "/auth/invitations/accept", { body: { token: (await mailedToken(w.t, "joiner@people.test")), password: PW, tenant_id: w.a.tenantId } });
    },
    expect: { status: 201 },
    check: (b, w) => {
      expect(b.user.tenant_id).toBe(w.b.tenantId);
      expect(b.tenant.id).toBe(w.b.tenantId);
    },
    tenantIdInBody: true,
  },

  // ---- sessions ----
  { op: "GET /api/v1/auth/sessions", what: "B's admin lists sessions", send: (w) => req("GET", "/auth/sessions", asB(w)), expect: { status: 200 }, check: ownPage("sessions", (w) => `user_id = '${w.b.admin.id}' AND revoked_at IS NULL AND expires_at > ${w.t.ctx.now()}`) },
  ...(["admin", "member"] as const).map(
    (who): Attempt => ({
      op: "POST /api/v1/auth/sessions/revoke",
      what: `revoke A's ${who}'s session`,
      send: (w) => req("POST", "/auth/sessions/revoke", { ...asB(w), body: { session_id: w.a[who].sessionId } }),
      expect: notFound,
    }),
  ),

  {
    op: "GET /api/v1/metrics",
    what: "B's admin token on A's host: the operator's metrics take no organization's token",
    send: (w) => req("GET", "/metrics", { token: w.b.admin.access, tenant: "alpha" }),
    expect: { status: 401, code: "not_authenticated" },
  },
];
