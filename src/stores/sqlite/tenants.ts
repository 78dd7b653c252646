import type { TenantsStore, TenantRow, TenantListRow, NewOrganization, SignInPolicyChange } from "../../organization/repo";
import type { NewSessionRow } from "../../auth/repo";
import { type SqliteSessionsStore } from "./sessions";
import { type SqliteCrmStore } from "./crm";
import { type Db, writeTxAsync } from "../../db/database";
import { newId } from "../../kernel/ids";
import type { AuditEntry } from "../../security/repo";
import { type SqliteSecurityStore } from "./security";
import type { UserRow } from "../../team/repo";
import { type SqliteUsersStore } from "./users";

/** SQL of tenants and their modules, and the one transaction that creates an organization. */
export function createSqliteTenantsStore(db: Db, others: { users: SqliteUsersStore; crm: SqliteCrmStore; sessions: SqliteSessionsStore; security: SqliteSecurityStore }) {
  const insertTenant = db.prepare<never, [string, string, string, number]>(
    "INSERT INTO tenants (id, name, subdomain, created_at) VALUES (?1, ?2, ?3, ?4)",
  );
  const insertModule = db.prepare<never, [string, string]>("INSERT OR IGNORE INTO tenant_modules (tenant_id, module) VALUES (?1, ?2)");
  const bySubdomain = db.prepare<TenantRow, [string]>("SELECT * FROM tenants WHERE subdomain = ?1");
  const byId = db.prepare<TenantRow, [string]>("SELECT * FROM tenants WHERE id = ?1");
  const modules = db.prepare<{ module: string }, [string]>("SELECT module FROM tenant_modules WHERE tenant_id = ?1 ORDER BY module");
  const rename = db.prepare<never, [string, string]>("UPDATE tenants SET name = ?2 WHERE id = ?1");
  const setPolicy = db.prepare<never, [string, number | null, number | null]>(
    "UPDATE tenants SET require_passkey_or_2fa = coalesce(?2, require_passkey_or_2fa), require_passkey_for_admins = coalesce(?3, require_passkey_for_admins) WHERE id = ?1",
  );
  const dropModule = db.prepare<never, [string, string]>("DELETE FROM tenant_modules WHERE tenant_id = ?1 AND module = ?2");
  const list = db.prepare<TenantListRow, []>(
    "SELECT t.*, (SELECT count(*) FROM users u WHERE u.tenant_id = t.id) AS members FROM tenants t ORDER BY t.created_at, t.subdomain",
  );
  const setDisabled = db.prepare<never, [string, number | null]>("UPDATE tenants SET disabled_at = ?2 WHERE id = ?1");
  const hasModule = db.prepare<{ one: number }, [string, string]>("SELECT 1 AS one FROM tenant_modules WHERE tenant_id = ?1 AND module = ?2");
  const anyTenant = db.prepare<{ one: number }, []>("SELECT 1 AS one FROM tenants LIMIT 1");

  const store = {
    bySubdomain: async (subdomain: string) => bySubdomain.get(subdomain),
    byId: async (id: string) => byId.get(id),
    modules: async (tenantId: string) => modules.all(tenantId).map((m) => m.module),
    hasModule: async (tenantId: string, module: string) => hasModule.get(tenantId, module) !== null,
    /** Whether any organization exists yet (`suite serve`'s first-run hint). */
    any: async () => anyTenant.get() !== null,
    /** Every organization with its member count, oldest first (the operator's `suite tenant list`). */
    list: async () => list.all(),

    /**
     * Disables (`at`: the time) or re-enables (null) an organization with its audit row, in one
     * transaction. Already so: nothing is written. Answers the row as it was before and whether
     * it changed, or undefined when there is none.
     */
    async setDisabled(
      tenantId: string,
      at: number | null,
      now: number,
      audit: (before: TenantRow) => AuditEntry,
    ): Promise<{ before: TenantRow; changed: boolean } | undefined> {
      return writeTxAsync(db, () => {
        const before = byId.get(tenantId);
        if (!before) return undefined;
        if ((before.disabled_at != null) === (at !== null)) return { before, changed: false };
        setDisabled.run(tenantId, at);
        others.security.auditInTx(audit(before), now);
        return { before, changed: true };
      });
    },

    /**
     * Renames the organization and/or sets which modules are on, with the audit rows the caller
     * builds from the before and after, in one transaction. Module data is never touched: a module
     * turned off keeps its rows, and turning it on shows them again.
     */
    async update(
      tenantId: string,
      change: { name?: string; modules?: string[]; policy?: SignInPolicyChange },
      now: number,
      audits: (before: { row: TenantRow; modules: string[] }, after: { row: TenantRow; modules: string[] }) => AuditEntry[],
    ): Promise<{ row: TenantRow; modules: string[] } | undefined> {
      return writeTxAsync(db, () => {
        const row = byId.get(tenantId);
        if (!row) return undefined;
        const before = { row, modules: modules.all(tenantId).map((m) => m.module) };
        if (change.name !== undefined) rename.run(tenantId, change.name);
        if (change.policy !== undefined) {
          const bit = (v: boolean | undefined) => (v === undefined ? null : v ? 1 : 0);
          setPolicy.run(tenantId, bit(change.policy.require_passkey_or_2fa), bit(change.policy.require_passkey_for_admins));
        }
        if (change.modules !== undefined) {
          for (const m of before.modules) if (!change.modules.includes(m)) dropModule.run(tenantId, m);
          for (const m of change.modules) insertModule.run(tenantId, m);
        }
        const after = { row: byId.get(tenantId)!, modules: modules.all(tenantId).map((m) => m.module) };
        for (const a of audits(before, after)) others.security.auditInTx(a, now);
        return after;
      });
    },

    /**
     * Tenant, modules, the two default profiles, the default pipeline, the first admin and their
     * session: all or nothing. The password is hashed before this is called.
     */
    async createOrganization(o: NewOrganization): Promise<{ adminProfileId: string }> {
      const { tenant, admin, session } = o;
      const now = tenant.created_at;
      const adminProfileId = newId();
      await writeTxAsync(db, () => {
        insertTenant.run(tenant.id, tenant.name, tenant.subdomain, now);
        for (const m of o.modules) insertModule.run(tenant.id, m);
        others.users.insertProfileInTx({ id: adminProfileId, tenant_id: tenant.id, name: "Administrator", is_admin: 1, created_at: now });
        others.users.insertProfileInTx({ id: newId(), tenant_id: tenant.id, name: "Standard user", is_admin: 0, created_at: now });
        others.crm.seedDefaultStagesInTx(tenant.id, now);
        others.users.insertInTx({ ...admin, tenant_id: tenant.id, role: "admin", profile_id: adminProfileId });
        others.sessions.insertInTx({ ...session, tenant_id: tenant.id, user_id: admin.id, created_at: now });
        others.security.auditInTx({ ...o.audit, tenantId: tenant.id, userId: admin.id }, now);
      });
      return { adminProfileId };
    },
  };
  return store satisfies TenantsStore;
}

export type SqliteTenantsStore = ReturnType<typeof createSqliteTenantsStore>;
