import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { AuditEntry } from "../../src/security/repo";
import type { UserRow } from "../../src/team/repo";
import { BACKENDS } from "./backends";
import { T0, addMember, type OrgBackend, orgBackend, signup } from "./org-fixture";

for (const backend of BACKENDS) {
  describe(`members store (${backend.name})`, () => {
    let b: OrgBackend;
    beforeAll(async () => {
      b = orgBackend(await backend.fresh());
    });
    afterAll(() => b.close());

    const audits = (tenantId: string, action: string) => (before: UserRow, after: UserRow): AuditEntry[] => [
      { tenantId, userId: null, action, ip: null, userAgent: null, detail: { from: before.role, to: after.role } },
    ];
    const admins = async (tenantId: string) => Number(await b.value("SELECT count(*) AS n FROM users WHERE tenant_id = $1 AND role = 'admin'", tenantId));

    test("a change: name (copied to the CRM), role and profile, with its audit rows", async () => {
      const t = await signup(b.org, "change");
      const m = await addMember(b.org, t, "m@x.test");
      const standard = (await b.org.users.profileByName(t.tenantId, "Standard user"))!;
      const r = await b.org.members.change(t.tenantId, m.id, { fullName: "Mia", role: "admin", profileId: standard.id }, T0 + 5000, audits(t.tenantId, "user.changed"));
      expect(r).toMatchObject({ id: m.id, full_name: "Mia", role: "admin", profile_id: standard.id, updated_at: T0 + 5000 });
      expect(await b.org.users.byId(t.tenantId, m.id)).toEqual(r as UserRow);
      expect(b.org.renamed).toContainEqual([t.tenantId, m.id, "Mia", "m@x.test"]);
      const a = (await b.org.security.auditForTenant(t.tenantId, 1))[0]!;
      expect([a.action, JSON.parse(a.detail!)]).toEqual(["user.changed", { from: "member", to: "admin" }]);
      // Unnamed fields stay; a null profile clears it; no rename, no copy.
      const copies = b.org.renamed.length;
      const r2 = await b.org.members.change(t.tenantId, m.id, { profileId: null }, T0 + 6000, () => []);
      expect(r2).toMatchObject({ full_name: "Mia", role: "admin", profile_id: null });
      expect(b.org.renamed).toHaveLength(copies);
    });

    test("refusals: no such member, no such profile, the last admin", async () => {
      const t = await signup(b.org, "refuse");
      expect(await b.org.members.change(t.tenantId, "nope", { role: "member" }, T0, () => [])).toBe("not_found");
      const other = await signup(b.org, "refuse-other");
      expect(await b.org.members.change(other.tenantId, t.adminId, { role: "member" }, T0, () => [])).toBe("not_found");
      expect(await b.org.members.change(t.tenantId, t.adminId, { profileId: other.adminProfileId }, T0, () => [])).toBe("profile_not_found");
      expect(await b.org.members.change(t.tenantId, t.adminId, { role: "member" }, T0, () => [])).toBe("last_admin");
      expect(await b.org.members.remove(t.tenantId, t.adminId, null, T0, () => ({ userId: null, action: "x", ip: null, userAgent: null }))).toBe("last_admin");
      expect(await b.org.members.remove(t.tenantId, "nope", null, T0, () => ({ userId: null, action: "x", ip: null, userAgent: null }))).toBe("not_found");
      expect(await b.org.members.remove(t.tenantId, t.adminId, "nope", T0, () => ({ userId: null, action: "x", ip: null, userAgent: null }))).toBe(
        "reassign_not_found",
      );
      expect(await admins(t.tenantId)).toBe(1);
      // Renaming or re-profiling the last admin is fine.
      expect(await b.org.members.change(t.tenantId, t.adminId, { fullName: "Solo", role: "admin" }, T0, () => [])).toMatchObject({ full_name: "Solo" });
    });

    test("two admins demoting each other at once: one wins, one admin is left", async () => {
      for (let i = 0; i < 5; i++) {
        const t = await signup(b.org, `demote-${i}`);
        const second = await addMember(b.org, t, `second${i}@x.test`, true);
        expect(await admins(t.tenantId)).toBe(2);
        const [x, y] = [b.instance(), b.instance()];
        const r = await Promise.all([
          x.members.change(t.tenantId, second.id, { role: "member" }, T0, () => []),
          y.members.change(t.tenantId, t.adminId, { role: "member" }, T0, () => []),
        ]);
        expect(r.filter((v) => v === "last_admin")).toHaveLength(1);
        expect(await admins(t.tenantId)).toBe(1);
      }
    });

    test("two admins removing each other at once: one wins, one admin is left", async () => {
      for (let i = 0; i < 5; i++) {
        const t = await signup(b.org, `remove-${i}`);
        const second = await addMember(b.org, t, `second${i}@x.test`, true);
        const audit = () => ({ userId: null, action: "user.removed", ip: null, userAgent: null });
        const [x, y] = [b.instance(), b.instance()];
        const r = await Promise.all([x.members.remove(t.tenantId, second.id, null, T0, audit), y.members.remove(t.tenantId, t.adminId, null, T0, audit)]);
        expect(r.filter((v) => v === "last_admin")).toHaveLength(1);
        expect(await admins(t.tenantId)).toBe(1);
        expect(Number(await b.value("SELECT count(*) AS n FROM users WHERE tenant_id = $1", t.tenantId))).toBe(1);
      }
    });

    test("removal: invitations they sent or to their address are revoked, their sessions go, audit row", async () => {
      const t = await signup(b.org, "removal");
      const helper = await addMember(b.org, t, "helper@x.test", true);
      await b.org.invitations.invite(
        {
          id: "inv-by-helper",
          tenantId: t.tenantId,
          email: "friend@x.test",
          profileId: null,
          profileNamed: false,
          invitedBy: helper.id,
          tokenHash: "tok-by-helper",
          expiresAt: T0 + 86_400_000,
          mail: { tenantId: t.tenantId, kind: "invitation", recipient: "friend@x.test", subject: "s", text: "t", html: "h", link: null },
          who: { ip: null, userAgent: null },
        },
        T0 + 2000,
      );
      expect(Number(await b.value("SELECT count(*) AS n FROM sessions WHERE tenant_id = $1 AND user_id = $2", t.tenantId, helper.id))).toBe(1);
      const r = await b.org.members.remove(t.tenantId, helper.id, t.adminId, T0 + 3000, (u, moved) => ({
        userId: t.adminId,
        action: "user.removed",
        ip: null,
        userAgent: null,
        detail: { email: u.email, moved },
      }));
      expect(r).toMatchObject({ user: { id: helper.id, email: "helper@x.test" }, dealsMoved: 0 });
      expect(await b.org.users.byId(t.tenantId, helper.id)).toBeNull();
      expect(Number(await b.value("SELECT count(*) AS n FROM sessions WHERE tenant_id = $1 AND user_id = $2", t.tenantId, helper.id))).toBe(0);
      expect((await b.org.invitations.byId(t.tenantId, "inv-by-helper"))!.revoked_at).toBe(T0 + 3000);
      const a = (await b.org.security.auditForTenant(t.tenantId, 1))[0]!;
      expect([a.action, a.tenant_id, JSON.parse(a.detail!)]).toEqual(["user.removed", t.tenantId, { email: "helper@x.test", moved: 0 }]);
    });

    test("second factor reset and unlock", async () => {
      const t = await signup(b.org, "factor");
      const m = await addMember(b.org, t, "f@x.test");
      await b.value(
        "INSERT INTO user_totp (tenant_id, user_id, secret_enc, enabled_at, failures, locked_until, created_at, updated_at) VALUES ($1, $2, 'sealed', $3, 5, $4, $3, $3)",
        t.tenantId,
        m.id,
        T0,
        T0 + 60_000,
      );
      await b.value("INSERT INTO backup_codes (tenant_id, code_hash, user_id, created_at) VALUES ($1, $2, $3, $4)", t.tenantId, `code-${m.id}`, m.id, T0);
      await b.value("INSERT INTO sign_in_challenges (tenant_id, id, user_id, method, created_at, expires_at) VALUES ($1, $2, $3, 'password', $4, $5)", t.tenantId, `ch-${m.id}`, m.id, T0, T0 + 1);
      const entry = (action: string) => ({ userId: t.adminId, action, ip: null, userAgent: null });
      expect(await b.org.members.unlock(t.tenantId, m.id, T0 + 7000, () => entry("user.unlocked"))).toMatchObject({ id: m.id });
      expect(await b.value("SELECT failures FROM user_totp WHERE tenant_id = $1 AND user_id = $2", t.tenantId, m.id)).toBe(0);
      expect(await b.value("SELECT locked_until FROM user_totp WHERE tenant_id = $1 AND user_id = $2", t.tenantId, m.id)).toBeNull();
      const seen: boolean[] = [];
      const reset = await b.org.members.resetSecondFactor(t.tenantId, m.id, T0 + 8000, (_u, was) => (seen.push(was), entry("user.2fa_reset")));
      expect(reset).toMatchObject({ id: m.id });
      expect(seen).toEqual([true]);
      for (const table of ["user_totp", "backup_codes", "sign_in_challenges"]) {
        expect(Number(await b.value(`SELECT count(*) AS n FROM ${table} WHERE tenant_id = $1 AND user_id = $2`, t.tenantId, m.id))).toBe(0);
      }
      await b.org.members.resetSecondFactor(t.tenantId, m.id, T0 + 9000, (_u, was) => (seen.push(was), entry("user.2fa_reset")));
      expect(seen).toEqual([true, false]);
      expect((await b.org.security.auditForTenant(t.tenantId, 3)).map((a) => a.action)).toEqual(["user.2fa_reset", "user.2fa_reset", "user.unlocked"]);
      expect(await b.org.members.unlock(t.tenantId, "nope", T0, () => entry("x"))).toBe("not_found");
      expect(await b.org.members.resetSecondFactor(t.tenantId, "nope", T0, () => entry("x"))).toBe("not_found");
    });
  });
}
