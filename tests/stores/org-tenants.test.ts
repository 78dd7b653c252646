import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { isSqliteUniqueViolation as isUniqueViolation } from "../../src/kernel/unique-violation";
import { newId } from "../../src/kernel/ids";
import { containsPattern } from "../../src/kernel/paging";
import { BACKENDS } from "./backends";
import { T0, addMember, type OrgBackend, orgBackend, signup } from "./org-fixture";

for (const backend of BACKENDS) {
  describe(`tenants and users stores (${backend.name})`, () => {
    let b: OrgBackend;
    beforeAll(async () => {
      b = orgBackend(await backend.fresh());
    });
    afterAll(() => b.close());

    test("signup writes the tenant, modules, profiles, pipeline, admin, session and audit row together", async () => {
      expect(await b.org.tenants.any()).toBe(false);
      const t = await signup(b.org, "acme");
      expect(await b.org.tenants.any()).toBe(true);
      const row = await b.org.tenants.bySubdomain("acme");
      expect(row).toMatchObject({ id: t.tenantId, name: "Org acme", subdomain: "acme", created_at: T0, disabled_at: null });
      expect(await b.org.tenants.byId(t.tenantId)).toEqual(row!);
      expect(await b.org.tenants.byId("nope")).toBeNull();
      expect(await b.org.tenants.bySubdomain("nope")).toBeNull();
      expect(await b.org.tenants.modules(t.tenantId)).toEqual(["crm", "users"]);
      expect(await b.org.tenants.hasModule(t.tenantId, "crm")).toBe(true);
      expect(await b.org.tenants.hasModule(t.tenantId, "billing")).toBe(false);
      const profiles = await b.org.users.profiles(t.tenantId);
      expect(profiles.map((p) => [p.name, p.is_admin])).toEqual([["Administrator", 1], ["Standard user", 0]]);
      expect(profiles[0]!.id).toBe(t.adminProfileId);
      const admin = await b.org.users.byId(t.tenantId, t.adminId);
      expect(admin).toMatchObject({ email: "admin@acme.test", role: "admin", profile_id: t.adminProfileId, created_at: T0, updated_at: T0, email_verified_at: T0 });
      expect(Number(await b.value("SELECT count(*) AS n FROM sessions WHERE tenant_id = $1 AND user_id = $2", t.tenantId, t.adminId))).toBe(1);
      expect(Number(await b.value("SELECT count(*) AS n FROM pipeline_stages WHERE tenant_id = $1", t.tenantId))).toBeGreaterThan(0);
      const audit = await b.org.security.auditForTenant(t.tenantId);
      expect(audit.map((a) => [a.action, a.user_id, JSON.parse(a.detail!)])).toEqual([["tenant.signup", t.adminId, { subdomain: "acme" }]]);
      expect(await b.org.tenants.list()).toEqual([{ ...row!, members: 1 }]);
    });

    test("a taken subdomain is refused as SQLite refuses it, and nothing is half-written", async () => {
      await signup(b.org, "taken");
      const before = Number(await b.value("SELECT count(*) AS n FROM users"));
      const e = await signup(b.org, "taken").catch((x: unknown) => x);
      expect(isUniqueViolation(e, "tenants.subdomain")).toBe(true);
      expect(Number(await b.value("SELECT count(*) AS n FROM users"))).toBe(before);
      expect(Number(await b.value("SELECT count(*) AS n FROM tenants WHERE subdomain = $1", "taken"))).toBe(1);
    });

    test("a signup failing at its last writes leaves nothing behind", async () => {
      const tenantId = newId();
      // The session has no end (NOT NULL): its insert fails after the tenant, profiles, pipeline and user.
      const e = await b.org.tenants
        .createOrganization({
          tenant: { id: tenantId, name: "Half", subdomain: "half", created_at: T0 },
          modules: ["crm"],
          admin: { id: newId(), email: "half@x.test", full_name: null, password_hash: "h", created_at: T0 },
          session: { id: newId(), sid_hash: newId(), method: "signup", expires_at: null as unknown as number, proven_at: T0, ip: null, user_agent: null },
          audit: { action: "tenant.signup", ip: null, userAgent: null },
        })
        .catch((x: unknown) => x);
      expect(e).toBeInstanceOf(Error);
      expect(isUniqueViolation(e, "tenants.subdomain")).toBe(false);
      expect(await b.org.tenants.bySubdomain("half")).toBeNull();
      for (const table of ["tenant_modules", "profiles", "pipeline_stages", "users", "audit_log"]) {
        expect(Number(await b.value(`SELECT count(*) AS n FROM ${table} WHERE tenant_id = $1`, tenantId))).toBe(0);
      }
    });

    test("two signups for one subdomain at once: one wins, the other gets the same refusal", async () => {
      const users = Number(await b.value("SELECT count(*) AS n FROM users"));
      const sessions = Number(await b.value("SELECT count(*) AS n FROM sessions"));
      const results = await Promise.allSettled([signup(b.instance(), "race"), signup(b.instance(), "race")]);
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      const lost = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
      expect(isUniqueViolation(lost.reason, "tenants.subdomain")).toBe(true);
      expect(Number(await b.value("SELECT count(*) AS n FROM tenants WHERE subdomain = $1", "race"))).toBe(1);
      expect(Number(await b.value("SELECT count(*) AS n FROM users"))).toBe(users + 1);
      expect(Number(await b.value("SELECT count(*) AS n FROM sessions"))).toBe(sessions + 1);
    });

    test("disable and enable: once each, with an audit row; a repeat writes nothing", async () => {
      const t = await signup(b.org, "switch");
      const entry = (action: string) => () => ({ tenantId: t.tenantId, userId: null, action, ip: null, userAgent: null });
      const off = await b.org.tenants.setDisabled(t.tenantId, T0 + 5, T0 + 5, entry("tenant.disabled"));
      expect(off).toMatchObject({ changed: true, before: { disabled_at: null } });
      expect((await b.org.tenants.byId(t.tenantId))!.disabled_at).toBe(T0 + 5);
      expect((await b.org.tenants.setDisabled(t.tenantId, T0 + 6, T0 + 6, entry("tenant.disabled")))!.changed).toBe(false);
      const on = await b.org.tenants.setDisabled(t.tenantId, null, T0 + 7, entry("tenant.enabled"));
      expect(on).toMatchObject({ changed: true, before: { disabled_at: T0 + 5 } });
      expect((await b.org.tenants.byId(t.tenantId))!.disabled_at).toBeNull();
      expect(await b.org.tenants.setDisabled("nope", T0, T0, entry("x"))).toBeUndefined();
      expect((await b.org.security.auditForTenant(t.tenantId)).map((a) => a.action)).toEqual(["tenant.enabled", "tenant.disabled", "tenant.signup"]);
    });

    test("two operators disabling at once: one changes it, one audit row", async () => {
      const t = await signup(b.org, "twice");
      const entry = () => ({ tenantId: t.tenantId, userId: null, action: "tenant.disabled", ip: null, userAgent: null });
      const r = await Promise.all([b.instance().tenants.setDisabled(t.tenantId, T0, T0, entry), b.instance().tenants.setDisabled(t.tenantId, T0, T0, entry)]);
      expect(r.map((x) => x!.changed).sort()).toEqual([false, true]);
      expect((await b.org.security.auditForTenant(t.tenantId)).filter((a) => a.action === "tenant.disabled")).toHaveLength(1);
    });

    test("rename and modules, with audit rows built from before and after", async () => {
      const t = await signup(b.org, "rename");
      let seen: unknown;
      const after = await b.org.tenants.update(t.tenantId, { name: "Renamed", modules: ["users"] }, T0 + 9, (before, after) => {
        seen = { before: [before.row.name, before.modules], after: [after.row.name, after.modules] };
        return [{ tenantId: t.tenantId, userId: t.adminId, action: "tenant.updated", ip: null, userAgent: null, detail: { name: after.row.name } }];
      });
      expect(seen).toEqual({ before: ["Org rename", ["crm", "users"]], after: ["Renamed", ["users"]] });
      expect(after).toEqual({ row: { ...(await b.org.tenants.byId(t.tenantId))! }, modules: ["users"] });
      expect(after!.row.name).toBe("Renamed");
      expect(await b.org.tenants.update(t.tenantId, { modules: ["crm", "users", "crm"] }, T0, () => [])).toMatchObject({ modules: ["crm", "users"] });
      expect(await b.org.tenants.update("nope", { name: "x" }, T0, () => [])).toBeUndefined();
      expect((await b.org.security.auditForTenant(t.tenantId, 1))[0]!.action).toBe("tenant.updated");
    });

    test("users and profiles: lookups, pages, counts and the address across organizations", async () => {
      const a = await signup(b.org, "people-a");
      const c = await signup(b.org, "people-c");
      const bob = await addMember(b.org, a, "bob@x.test");
      await addMember(b.org, a, "under_score@x.test", false, T0 + 2000);
      await addMember(b.org, c, "bob@x.test", false, T0 + 3000);
      expect((await b.org.users.byEmail(a.tenantId, "bob@x.test"))!.id).toBe(bob.id);
      expect(await b.org.users.byEmail(a.tenantId, "zed@x.test")).toBeNull();
      expect(await b.org.users.byId(c.tenantId, bob.id)).toBeNull();
      expect((await b.org.users.profile(a.tenantId, a.adminProfileId))!.name).toBe("Administrator");
      expect(await b.org.users.profile(c.tenantId, a.adminProfileId)).toBeNull();
      expect((await b.org.users.profileByName(a.tenantId, "Standard user"))!.is_admin).toBe(0);
      expect(await b.org.users.profileByName(a.tenantId, "Nobody")).toBeNull();
      // Both accounts are proven (an accepted invitation proves the address): oldest first, capped.
      const any = await b.org.users.byEmailAnyTenant("bob@x.test", 2);
      expect(any.map((u) => u.tenant_id)).toEqual([a.tenantId, c.tenantId]);
      expect(await b.org.users.byEmailAnyTenant("bob@x.test", 1)).toHaveLength(1);
      expect(await b.org.users.byEmailAnyTenant("nobody@x.test", 2)).toEqual([]);
      expect((await b.org.users.page(a.tenantId, null, 10, 0)).map((u) => u.email)).toEqual(["admin@people-a.test", "bob@x.test", "under_score@x.test"]);
      expect((await b.org.users.page(a.tenantId, null, 1, 1)).map((u) => u.email)).toEqual(["bob@x.test"]);
      expect(await b.org.users.count(a.tenantId, null)).toBe(3);
      // `_` is a literal under containsPattern, and names match lower-cased.
      expect((await b.org.users.page(a.tenantId, containsPattern("_"), 10, 0)).map((u) => u.email)).toEqual(["under_score@x.test"]);
      expect(await b.org.users.count(a.tenantId, containsPattern("ADA"))).toBe(1);
      expect(await b.org.users.count(a.tenantId, containsPattern("%"))).toBe(0);
    });

    test("an unproven account does not count beside a proven one for sign-in without a tenant", async () => {
      const t = await signup(b.org, "unproven");
      // The founder's address proven elsewhere: a second organization whose admin is unproven.
      const tenantId = newId();
      await b.org.tenants.createOrganization({
        tenant: { id: tenantId, name: "Other", subdomain: "unproven-2", created_at: T0 - 1 },
        modules: [],
        admin: { id: newId(), email: "admin@unproven.test", full_name: null, password_hash: "h", created_at: T0 - 1, email_verified_at: null },
        session: { id: newId(), sid_hash: newId(), method: "signup", expires_at: T0 + 1, proven_at: T0, ip: null, user_agent: null },
        audit: { action: "tenant.signup", ip: null, userAgent: null },
      });
      expect((await b.org.users.byEmailAnyTenant("admin@unproven.test", 2)).map((u) => u.tenant_id)).toEqual([t.tenantId]);
    });

    test("support: members with their second factor and last sign-in", async () => {
      const t = await signup(b.org, "support");
      await b.org.security.audit({ tenantId: t.tenantId, userId: t.adminId, action: "login.success", ip: null, userAgent: null }, T0 + 50);
      await b.org.security.audit({ tenantId: t.tenantId, userId: t.adminId, action: "login.success", ip: null, userAgent: null }, T0 + 90);
      const m = await addMember(b.org, t, "carol@x.test");
      expect(await b.org.support.list(t.tenantId)).toEqual([
        { id: t.adminId, email: "admin@support.test", full_name: "Ada Admin", role: "admin", created_at: T0, two_factor: 0, totp_locked_until: null, last_sign_in: T0 + 90 },
        { id: m.id, email: "carol@x.test", full_name: "carol", role: "member", created_at: T0 + 1000, two_factor: 0, totp_locked_until: null, last_sign_in: null },
      ]);
    });
  });
}
