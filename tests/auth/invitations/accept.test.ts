import { afterAll, describe, expect, test } from "bun:test";
import { ME, allAudit, claimsOf, clockedApp, login, sessionOf } from "../support";
import { setCookies, testApp } from "../../helpers";
import { PASSWORD, accept, countRows, invite, invited, mailedToken } from "../../team/support";
import { insertUser } from "../../support/sql";

const t = testApp();
const admin = await t.signup("acme");
const other = await t.signup("globex");
afterAll(() => t.close());

describe("POST /auth/invitations/accept", () => {
  test("the full path: invite, read the mailed link, accept, sign in with the password, /me shows tenant and role", async () => {
    const r = await invite(t, admin, { email: "Joiner@Example.com" });
    expect(r.status).toBe(201);
    const token = await mailedToken(t, "joiner@example.com");

    const a = await accept(t, { token, password: PASSWORD, full_name: "  Jo Iner " }, { host: "acme.localhost" });
    expect(a.status).toBe(201);
    expect(Object.keys(a.body).sort()).toEqual(["access_token", "refresh_token", "tenant", "token_type", "user"]);
    expect(a.body.token_type).toBe("bearer");
    expect(a.body.tenant).toMatchObject({ id: admin.tenant.id, subdomain: "acme" });
    expect(a.body.user).toMatchObject({ tenant_id: admin.tenant.id, email: "joiner@example.com", full_name: "Jo Iner", role: "member" });
    expect(a.body.user.profile_id).toBe(r.body.profile_id);
    expect(JSON.stringify(a.body)).not.toContain("$argon2");
    const cookies = setCookies(a.res);
    expect(cookies.svc_session?.value).toBe(a.body.access_token);
    expect(cookies.svc_refresh?.value).toBe(a.body.refresh_token);
    expect(claimsOf(a.body.access_token)).toMatchObject({ sub: a.body.user.id, tid: admin.tenant.id, typ: "access" });

    // The session it opened is an "invitation" sign-in.
    const session = (await sessionOf(t, a.body.access_token))!;
    expect(session.method).toBe("invitation");

    const signedIn = await login(t, "joiner@example.com", PASSWORD, { "x-tenant": "acme" });
    expect(signedIn.status).toBe(200);
    const me = await t.json("GET", ME, { token: signedIn.body.access_token });
    expect(me.status).toBe(200);
    expect(me.body.user).toMatchObject({ email: "joiner@example.com", role: "member", tenant_id: admin.tenant.id });
    expect(me.body.tenant.subdomain).toBe("acme");

    // The invitation is accepted, by this user; audited without the token.
    const inv = (await t.ctx.repos.invitations.byId(admin.tenant.id, r.body.id))!;
    expect(inv.accepted_user_id).toBe(a.body.user.id);
    expect(inv.accepted_at).not.toBeNull();
    const audit = (await allAudit(t)).filter((x) => x.action === "invitation.accepted");
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ tenant_id: admin.tenant.id, user_id: a.body.user.id });
    expect(JSON.stringify((await allAudit(t)))).not.toContain(token);
    expect(JSON.stringify(t.logs)).not.toContain(token);

    // Used: the same link again is refused.
    const again = await accept(t, { token, password: PASSWORD });
    expect(again.status).toBe(400);
    expect(again.body.code).toBe("invitation_invalid");
  });

  test("an invitation on the admin profile makes an admin", async () => {
    const adminProfile = (await t.ctx.repos.users.profiles(admin.tenant.id)).find((p) => p.is_admin === 1)!;
    const { token } = await invited(t, admin, "boss@example.com", { profile_id: adminProfile.id });
    const a = await accept(t, { token, password: PASSWORD });
    expect(a.status).toBe(201);
    expect(a.body.user).toMatchObject({ role: "admin", profile_id: adminProfile.id, full_name: null });
    // And may invite in turn.
    const r = await t.json("POST", "/api/v1/users/invite", { token: a.body.access_token, body: { email: "next@example.com" } });
    expect(r.status).toBe(201);
  });

  test("two accepts racing with one token make exactly one user: one 201 and one 400", async () => {
    const { token } = await invited(t, admin, "racer@example.com");
    const [x, y] = await Promise.all([accept(t, { token, password: PASSWORD }), accept(t, { token, password: "another password" })]);
    expect([x.status, y.status].sort()).toEqual([201, 400]);
    expect([x, y].find((r) => r.status === 400)!.body.code).toBe("invitation_invalid");
    expect(await countRows(t, "SELECT count(*) AS n FROM users WHERE tenant_id = ?1 AND email = ?2", admin.tenant.id, "racer@example.com")).toBe(1);
    expect(await countRows(t, "SELECT count(*) AS n FROM audit_log WHERE action = 'invitation.accepted' AND detail LIKE ?1", "%racer@%")).toBe(1);
  });

  test("unknown and revoked tokens are 400 invitation_invalid, and create no user", async () => {
    const unknown = await accept(t, { token: "x".repeat(43), password: PASSWORD });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toEqual({ detail: expect.any(String), code: "invitation_invalid" });

    const { invitation, token } = await invited(t, admin, "revoked@example.com");
    expect((await t.json("POST", `/api/v1/users/invitations/${invitation.id}/revoke`, { token: admin.access_token })).status).toBe(200);
    const r = await accept(t, { token, password: PASSWORD });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe("invitation_invalid");
    expect(await countRows(t, "SELECT count(*) AS n FROM users WHERE email = ?1", "revoked@example.com")).toBe(0);
  });

  test("an expired token is 400 invitation_invalid", async () => {
    const c = clockedApp();
    try {
      const a = await c.t.signup("expiring");
      const { token } = await invited(c.t, a, "slow@example.com");
      c.clock.advance(7 * 86_400_000);
      const r = await accept(c.t, { token, password: PASSWORD });
      expect(r.status).toBe(400);
      expect(r.body.code).toBe("invitation_invalid");
      expect(await countRows(c.t, "SELECT count(*) AS n FROM users WHERE email = ?1", "slow@example.com")).toBe(0);
    } finally {
      c.t.close();
    }
  });

  test("an address that became a member meanwhile is 409 already_member", async () => {
    // Invited in globex, then joins globex another way (here: a second invitation's link).
    const first = await invited(t, other, "twice@example.com");
    // Simulate the member appearing after the invitation was sent.
    const hash = await t.ctx.hasher.hash("whatever password");
    await insertUser(t.ctx, {
      id: "meanwhile",
      tenant_id: other.tenant.id,
      email: "twice@example.com",
      full_name: null,
      role: "member",
      profile_id: null,
      password_hash: hash,
      created_at: t.ctx.now(),
    });
    const r = await accept(t, { token: first.token, password: PASSWORD });
    expect(r.status).toBe(409);
    expect(r.body.code).toBe("already_member");
    expect(await countRows(t, "SELECT count(*) AS n FROM users WHERE tenant_id = ?1 AND email = ?2", other.tenant.id, "twice@example.com")).toBe(1);
  });

  test("a token of tenant A on tenant B's host or X-Tenant is refused (403 tenant_mismatch); on A's it works", async () => {
    const { token } = await invited(t, admin, "crossing@example.com");
    const foreignHosts: Record<string, string>[] = [{ host: "globex.localhost" }, { "x-tenant": "globex" }, { "x-tenant": "nosuchorg" }];
    for (const headers of foreignHosts) {
      const r = await accept(t, { token, password: PASSWORD }, headers);
      expect(r.status).toBe(403);
      expect(r.body.code).toBe("tenant_mismatch");
    }
    expect(await countRows(t, "SELECT count(*) AS n FROM users WHERE email = ?1", "crossing@example.com")).toBe(0);
    const ok = await accept(t, { token, password: PASSWORD }, { "x-tenant": "acme" });
    expect(ok.status).toBe(201);
    expect(ok.body.user.tenant_id).toBe(admin.tenant.id);
  });

  test("the same address invited by two tenants joins each separately", async () => {
    const a = await invited(t, admin, "both@example.com");
    const b = await invited(t, other, "both@example.com");
    expect(a.token).not.toBe(b.token);
    expect((await accept(t, { token: a.token, password: PASSWORD })).body.user.tenant_id).toBe(admin.tenant.id);
    expect((await accept(t, { token: b.token, password: PASSWORD })).body.user.tenant_id).toBe(other.tenant.id);
  });

  test("422 for a short password or a missing token, with no echo of either", async () => {
    const r = await accept(t, { password: "pw9Zq" });
    expect(r.status).toBe(422);
    const locs = r.body.detail.map((d: { loc: unknown[] }) => d.loc);
    expect(locs).toContainEqual(["body", "token"]);
    expect(locs).toContainEqual(["body", "password"]);
    expect(JSON.stringify(r.body)).not.toContain("pw9Zq");
    const long = await accept(t, { token: "abc", password: "p".repeat(129) });
    expect(long.status).toBe(422);
    expect(long.body.detail[0]).toMatchObject({ loc: ["body", "password"], type: "string_too_long" });
  });

  test("accepts are rate-limited per IP", async () => {
    const limited = testApp({ limits: { acceptPerIp: { name: "invite-accept-ip", max: 2, windowMs: 60_000 } } });
    try {
      const body = { token: "y".repeat(43), password: PASSWORD };
      expect((await accept(limited, body)).status).toBe(400);
      expect((await accept(limited, body)).status).toBe(400);
      const r = await accept(limited, body);
      expect(r.status).toBe(429);
      expect(r.headers.get("retry-after")).not.toBeNull();
    } finally {
      limited.close();
    }
  });
});
