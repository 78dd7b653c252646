import type { NewSessionRow, SessionsRepo } from "../auth/repo";
import type { CrmRepo } from "../crm/repo";
import { type Db, writeTx } from "../db/database";
import { newId } from "../db/ids";
import type { AuditEntry, SecurityRepo } from "../security/repo";
import type { UserRow, UsersRepo } from "../users/repo";

export interface TenantRow {
  id: string;
  name: string;
  subdomain: string;
  created_at: number;
}

export interface NewOrganization {
  tenant: TenantRow;
  modules: string[];
  admin: Omit<UserRow, "tenant_id" | "profile_id" | "role" | "updated_at">;
  session: Omit<NewSessionRow, "tenant_id" | "user_id" | "created_at">;
  audit: Omit<AuditEntry, "tenantId" | "userId">;
}

/** SQL of tenants and their modules, and the one transaction that creates an organization. */
export function createTenantsRepo(db: Db, others: { users: UsersRepo; crm: CrmRepo; sessions: SessionsRepo; security: SecurityRepo }) {
  const insertTenant = db.prepare<never, [string, string, string, number]>(
    "INSERT INTO tenants (id, name, subdomain, created_at) VALUES (?1, ?2, ?3, ?4)",
  );
  const insertModule = db.prepare<never, [string, string]>("INSERT OR IGNORE INTO tenant_modules (tenant_id, module) VALUES (?1, ?2)");
  const bySubdomain = db.prepare<TenantRow, [string]>("SELECT * FROM tenants WHERE subdomain = ?1");
  const byId = db.prepare<TenantRow, [string]>("SELECT * FROM tenants WHERE id = ?1");
  const modules = db.prepare<{ module: string }, [string]>("SELECT module FROM tenant_modules WHERE tenant_id = ?1 ORDER BY module");
  const hasModule = db.prepare<{ one: number }, [string, string]>("SELECT 1 AS one FROM tenant_modules WHERE tenant_id = ?1 AND module = ?2");

  return {
    bySubdomain: async (subdomain: string) => bySubdomain.get(subdomain),
    byId: async (id: string) => byId.get(id),
    modules: async (tenantId: string) => modules.all(tenantId).map((m) => m.module),
    hasModule: async (tenantId: string, module: string) => hasModule.get(tenantId, module) !== null,

    /**
     * Tenant, modules, the two default profiles, the default pipeline, the first admin and their
     * session: all or nothing. The password is hashed before this is called.
     */
    async createOrganization(o: NewOrganization): Promise<{ adminProfileId: string }> {
      const { tenant, admin, session } = o;
      const now = tenant.created_at;
      const adminProfileId = newId();
      writeTx(db, () => {
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
}

export type TenantsRepo = ReturnType<typeof createTenantsRepo>;
