import { afterAll, describe, expect, test } from "bun:test";
import { hashToken } from "../../src/kernel/ids";
import { addMember, allAudit, clockedApp, login } from "../auth/support";
import { testApp } from "../helpers";
import { INVITE, accept, countRows, invite, invited, lastMail, mailedToken, PASSWORD } from "./support";
import { testSql } from "../support/sql";
import { mailSeam } from "../support/backend";

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const t = testApp();
const admin = await t.signup("inviting");
// Tests that move time have their own app, so the shared admin's token does not expire.
const timed = clockedApp();
const timedAdmin = await timed.t.signup("timed");
const clock = timed.clock;
afterAll(() => {
  t.close();
  timed.t.close();
});

describe("POST /users/invite", () => {
  test("a first invite answers 201 with exactly the fixed Invitation shape, on the default profile, and mails a link", async () => {
    const r = await invite(t, admin, { email: "  New.Person@Example.COM " });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body).sort()).toEqual(
      ["accepted_at", "created_at", "email", "expires_at", "id", "invited_by", "profile_id", "revoked_at", "role_id"].sort(),
    );
    const standard = (await t.ctx.repos.users.profileByName(admin.tenant.id, "Standard user"))!;
    expect(r.body).toMatchObject({
      email: "new.person@example.com",
      invited_by: admin.user.id,
      accepted_at: null,
      revoked_at: null,
      profile_id: standard.id,
      role_id: standard.id,
    });
    expect(r.body.created_at).toMatch(ISO);
    // Seven days by default.
    expect(Date.parse(r.body.expires_at) - Date.parse(r.body.created_at)).toBe(7 * 86_400_000);

    const mail = (await lastMail(t, "new.person@example.com"))!;
    expect(mail.kind).toBe("invitation");
    expect(mail.tenant_id).toBe(admin.tenant.id);
    expect(mail.subject).toContain("Org inviting");
    expect(mail.link).toStartWith("http://inviting.localhost:8000/accept-invitation#token=");
    const token = await mailedToken(t, "new.person@example.com");
    expect(mail.text_body).toContain(mail.link);
    // Only the hash is stored.
    const row = (await testSql(t.ctx).get("SELECT token_hash FROM invitations WHERE id = ?1", r.body.id)) as { token_hash: string };
    expect(row.token_hash).toBe(hashToken(token));
    expect(row.token_hash).not.toContain(token);
  });

  test("a repeat for a pending invitation is a resend: 200, same id, new token and expiry, the old link dead", async () => {
    const first = await invited(timed.t, timedAdmin, "resend@example.com");
    clock.advance(60_000);
    const again = await invite(timed.t, timedAdmin, { email: "RESEND@example.com" });
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(first.invitation.id);
    expect(Date.parse(again.body.expires_at)).toBe(Date.parse(first.invitation.expires_at) + 60_000);
    expect(again.body.created_at).toBe(first.invitation.created_at);
    const newToken = await mailedToken(timed.t, "resend@example.com");
    expect(newToken).not.toBe(first.token);
    expect(await countRows(timed.t, "SELECT count(*) AS n FROM mail_outbox WHERE recipient = ?1", "resend@example.com")).toBe(2);
    expect(await countRows(timed.t, "SELECT count(*) AS n FROM invitations WHERE email = ?1", "resend@example.com")).toBe(1);

    const old = await accept(timed.t, { token: first.token, password: PASSWORD });
    expect(old.status).toBe(400);
    expect(old.body.code).toBe("invitation_invalid");
    const ok = await accept(timed.t, { token: newToken, password: PASSWORD });
    expect(ok.status).toBe(201);
  });

  test("an expired invitation is replaced by a new one: 201 and a new id", async () => {
    const first = await invited(timed.t, timedAdmin, "late@example.com");
    clock.advance(7 * 86_400_000);
    // The admin's access token has expired meanwhile too.
    const signedIn = await login(timed.t, timedAdmin.email, timedAdmin.password);
    const again = await invite(timed.t, { ...timedAdmin, access_token: signedIn.body.access_token }, { email: "late@example.com" });
    expect(again.status).toBe(201);
    expect(again.body.id).not.toBe(first.invitation.id);
    expect((await accept(timed.t, { token: first.token, password: PASSWORD })).body.code).toBe("invitation_invalid");
  });

  test("a revoked invitation is replaced by a new one: 201", async () => {
    const first = await invited(t, admin, "again@example.com");
    const rv = await t.json("POST", `/api/v1/users/invitations/${first.invitation.id}/revoke`, { token: admin.access_token });
    expect(rv.status).toBe(200);
    const again = await invite(t, admin, { email: "again@example.com" });
    expect(again.status).toBe(201);
    expect(again.body.id).not.toBe(first.invitation.id);
  });

  test("409 already_member for an address of this workspace, in any case", async () => {
    const r = await invite(t, admin, { email: admin.email.toUpperCase() });
    expect(r.status).toBe(409);
    expect(r.body.code).toBe("already_member");
    expect(await countRows(t, "SELECT count(*) AS n FROM invitations WHERE email = ?1", admin.email)).toBe(0);
  });

  test("profile_id, or the legacy role_id, picks the profile; unknown ones are 404", async () => {
    const profiles = await t.ctx.repos.users.profiles(admin.tenant.id);
    const adminProfile = profiles.find((p) => p.is_admin === 1)!;
    const a = await invite(t, admin, { email: "p1@example.com", profile_id: adminProfile.id });
    expect(a.status).toBe(201);
    expect(a.body).toMatchObject({ profile_id: adminProfile.id, role_id: adminProfile.id });
    const b = await invite(t, admin, { email: "p2@example.com", role_id: adminProfile.id });
    expect(b.status).toBe(201);
    expect(b.body.profile_id).toBe(adminProfile.id);
    const same = await invite(t, admin, { email: "p3@example.com", role_id: adminProfile.id, profile_id: adminProfile.id });
    expect(same.status).toBe(201);

    for (const body of [{ profile_id: "nope" }, { role_id: "nope" }]) {
      const r = await invite(t, admin, { email: "p4@example.com", ...body });
      expect(r.status).toBe(404);
      expect(r.body.code).toBe("not_found");
    }
    // Another tenant's profile is unknown here.
    const other = await t.signup("otherprofiles");
    const foreign = (await t.ctx.repos.users.profiles(other.tenant.id))[0]!;
    expect((await invite(t, admin, { email: "p4@example.com", profile_id: foreign.id })).status).toBe(404);
    expect(await countRows(t, "SELECT count(*) AS n FROM invitations WHERE email = ?1", "p4@example.com")).toBe(0);
  });

  test("a resend that names a profile changes it; one that does not keeps it", async () => {
    const profiles = await t.ctx.repos.users.profiles(admin.tenant.id);
    const adminProfile = profiles.find((p) => p.is_admin === 1)!;
    const standard = profiles.find((p) => p.is_admin === 0)!;
    await invite(t, admin, { email: "prof@example.com" });
    const changed = await invite(t, admin, { email: "prof@example.com", profile_id: adminProfile.id });
    expect(changed.status).toBe(200);
    expect(changed.body.profile_id).toBe(adminProfile.id);
    const kept = await invite(t, admin, { email: "prof@example.com" });
    expect(kept.status).toBe(200);
    expect(kept.body.profile_id).toBe(adminProfile.id);
    expect(standard.id).not.toBe(adminProfile.id);
  });

  test("422 when profile_id and role_id differ, and for every malformed field", async () => {
    const profiles = await t.ctx.repos.users.profiles(admin.tenant.id);
    const r = await invite(t, admin, { email: "x@example.com", profile_id: profiles[0]!.id, role_id: profiles[1]!.id });
    expect(r.status).toBe(422);
    expect(r.body.detail).toEqual([expect.objectContaining({ loc: ["body"], type: "value_error" })]);

    const bad = await invite(t, admin, { email: "not-an-email", profile_id: 5 });
    expect(bad.status).toBe(422);
    const locs = bad.body.detail.map((d: { loc: unknown[] }) => d.loc);
    expect(locs).toContainEqual(["body", "email"]);
    expect(locs).toContainEqual(["body", "profile_id"]);
    expect(bad.body.detail.find((d: { loc: unknown[] }) => d.loc[1] === "email").type).toBe("value_error");

    const missing = await invite(t, admin, {});
    expect(missing.status).toBe(422);
    expect(missing.body.detail[0]).toMatchObject({ loc: ["body", "email"], type: "missing" });
    expect(await countRows(t, "SELECT count(*) AS n FROM invitations WHERE email = ?1", "x@example.com")).toBe(0);
  });

  test("members get 403 forbidden, even with a malformed body; no credentials get 401", async () => {
    const m = await addMember(t, admin.tenant.id, "member@inviting.test", "member password");
    const signedIn = await login(t, m.email, m.password, { "x-tenant": admin.subdomain });
    const token = signedIn.body.access_token;
    const r = await t.json("POST", INVITE, { token, body: { email: "someone@example.com" } });
    expect(r.status).toBe(403);
    expect(r.body.code).toBe("forbidden");
    expect((await t.json("POST", INVITE, { token, body: { email: 3 } })).status).toBe(403);
    expect((await t.json("POST", INVITE, { body: { email: "someone@example.com" } })).status).toBe(401);
    expect(await countRows(t, "SELECT count(*) AS n FROM invitations WHERE email = ?1", "someone@example.com")).toBe(0);
  });

  test("an admin's token on another tenant's host is refused (403 tenant_mismatch)", async () => {
    const r = await t.json("POST", INVITE, { token: admin.access_token, tenant: "otherprofiles", body: { email: "m@example.com" } });
    expect(r.status).toBe(403);
    expect(r.body.code).toBe("tenant_mismatch");
  });

  test("invites are audited as created and resent, without the token", async () => {
    const { token } = await invited(t, admin, "audited@example.com");
    await invite(t, admin, { email: "audited@example.com" });
    const rows = (await allAudit(t)).filter((a) => String(a.detail).includes("audited@example.com"));
    expect(rows.map((a) => a.action)).toEqual(["invitation.created", "invitation.resent"]);
    expect(rows[0]).toMatchObject({ tenant_id: admin.tenant.id, user_id: admin.user.id });
    const all = JSON.stringify((await allAudit(t)));
    expect(all).not.toContain(token);
    expect(all).not.toContain((await mailedToken(t, "audited@example.com")));
  });

  test("no log line carries a token or a link", async () => {
    const { token } = await invited(t, admin, "logged@example.com");
    const text = JSON.stringify(t.logs);
    expect(text).not.toContain(token);
    expect(text).not.toContain("accept-invitation");
  });
});

describe("race safety and the outbox", () => {
  test("concurrent invites for one address leave one pending invitation", async () => {
    const rs = await Promise.all(Array.from({ length: 8 }, () => invite(t, admin, { email: "burst@example.com" })));
    expect(rs.filter((r) => r.status === 201)).toHaveLength(1);
    expect(rs.filter((r) => r.status === 200)).toHaveLength(7);
    expect(new Set(rs.map((r) => r.body.id)).size).toBe(1);
    expect(await countRows(t, "SELECT count(*) AS n FROM invitations WHERE email = ?1", "burst@example.com")).toBe(1);
  });

  test("a failing mail enqueue leaves no invitation behind (one transaction)", async () => {
    const fresh = testApp();
    try {
      const a = await fresh.signup("outboxfail");
      const mailRepo = mailSeam(fresh.ctx);
      const original = mailRepo.enqueueInTx;
      mailRepo.enqueueInTx = () => {
        throw new Error("disk full");
      };
      const r = await invite(fresh, a, { email: "lost@example.com" });
      mailRepo.enqueueInTx = original;
      expect(r.status).toBe(500);
      expect(await countRows(fresh, "SELECT count(*) AS n FROM invitations WHERE tenant_id = ?1", a.tenant.id)).toBe(0);
      expect(await countRows(fresh, "SELECT count(*) AS n FROM audit_log WHERE action LIKE 'invitation.%'")).toBe(0);
    } finally {
      fresh.close();
    }
  });

  test("invites are rate-limited per admin", async () => {
    const limited = testApp({ limits: { invitesPerAdmin: { name: "invite-admin", max: 2, windowMs: 3_600_000 } } });
    try {
      const a = await limited.signup("limited");
      expect((await invite(limited, a, { email: "a@example.com" })).status).toBe(201);
      expect((await invite(limited, a, { email: "b@example.com" })).status).toBe(201);
      const r = await invite(limited, a, { email: "c@example.com" });
      expect(r.status).toBe(429);
      expect(r.body.code).toBe("rate_limited");
      expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(await countRows(limited, "SELECT count(*) AS n FROM mail_outbox WHERE kind = 'invitation'")).toBe(2);
    } finally {
      limited.close();
    }
  });
});
