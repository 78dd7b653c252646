import type { TenantsStore } from "../../organization/repo";
import type { NewSessionRow } from "../../auth/repo";
import { newId } from "../../kernel/ids";
import type { AuditEntry } from "../../security/repo";
import type { NewOrganization, SignInPolicyChange, TenantListRow, TenantRow } from "../../organization/repo";
import { type Pg, type PgQueries, type PgTx } from "./database";
import { isPgUniqueViolation } from "../../kernel/unique-violation";
import { createNumberingInTx } from "./deals";
import type { PostgresSecurityStore } from "./security";
import type { PostgresUsersStore } from "./users";

/** What signup needs of the CRM and sessions stores: their writes inside its transaction. */
export interface SignupHooks {
  crm: { seedDefaultStagesInTx(tx: PgTx, tenantId: string, now: number): Promise<unknown> };
  sessions: { insertInTx(tx: PgTx, row: NewSessionRow): Promise<unknown> };
}

/**
 * A duplicate, told the way SQLite tells it ("UNIQUE constraint failed: table.column"), so that
 * the service's isUniqueViolation check (src/db/database.ts) answers the same refusal on both
 * backends; the PostgreSQL error is kept as the cause.
 */
export class UniqueViolation extends Error {
  constructor(what: string, cause: unknown) {
    super(`UNIQUE constraint failed: ${what}`, { cause });
    this.name = "UniqueViolation";
  }
}

/**
 * The operator's list. tenants.id is COLLATE "C" and users.tenant_id the database's collation:
 * compared as they are, no index on users serves the member count (a full scan of users per
 * organization: 12.8 s at 10,000 organizations of 5 members; 33 ms with the COLLATE).
 */
export const TENANT_LIST = `SELECT t.*, (SELECT count(*) FROM users u WHERE u.tenant_id = t.id COLLATE "default") AS members
  FROM tenants t ORDER BY t.created_at, t.subdomain COLLATE "C"`;

/**
 * Tenants and their modules on PostgreSQL, and the one transaction that creates an organization.
 * Writes to an existing organization lock its tenants row first (FOR UPDATE), so two operators
 * disabling, or two admins renaming, at once are applied one after the other and each audit row
 * tells the before it really replaced.
 */
export function createPostgresTenantsStore(pg: Pg, others: SignupHooks & { users: PostgresUsersStore; security: PostgresSecurityStore }) {
  const byId = (q: PgQueries, id: string) => q.one<TenantRow>`SELECT * FROM tenants WHERE id = ${id}`;
  const lock = (tx: PgTx, id: string) => tx.one<TenantRow>`SELECT * FROM tenants WHERE id = ${id} FOR UPDATE`;
  const modules = async (q: PgQueries, tenantId: string) =>
    (await q.all<{ module: string }>`SELECT module FROM tenant_modules WHERE tenant_id = ${tenantId} ORDER BY module COLLATE "C"`).map((m) => m.module);
  const insertModule = (tx: PgTx, tenantId: string, module: string) =>
    tx.run`INSERT INTO tenant_modules (tenant_id, module) VALUES (${tenantId}, ${module}) ON CONFLICT DO NOTHING`;

  const store = {
    bySubdomain: async (subdomain: string) => pg.one<TenantRow>`SELECT * FROM tenants WHERE subdomain = ${subdomain}`,
    byId: async (id: string) => byId(pg, id),
    modules: async (tenantId: string) => modules(pg, tenantId),
    hasModule: async (tenantId: string, module: string) =>
      (await pg.one`SELECT 1 AS one FROM tenant_modules WHERE tenant_id = ${tenantId} AND module = ${module}`) !== null,
    /** Whether any organization exists yet (`suite serve`'s first-run hint). */
    any: async () => (await pg.one`SELECT 1 AS one FROM tenants LIMIT 1`) !== null,
    /** Every organization with its member count, oldest first (the operator's `suite tenant list`). */
    list: async () => pg.unsafe<TenantListRow>(TENANT_LIST),

    /** Disables (`at`) or re-enables (null) an organization with its audit row; already so: nothing is written. */
    async setDisabled(
      tenantId: string,
      at: number | null,
      now: number,
      audit: (before: TenantRow) => AuditEntry,
    ): Promise<{ before: TenantRow; changed: boolean } | undefined> {
      return pg.begin(async (tx) => {
        const before = await lock(tx, tenantId);
        if (!before) return undefined;
        if ((before.disabled_at != null) === (at !== null)) return { before, changed: false };
        await tx.run`UPDATE tenants SET disabled_at = ${at}::bigint WHERE id = ${tenantId}`;
        await others.security.auditInTx(tx, audit(before), now);
        return { before, changed: true };
      });
    },

    /** Renames the organization and/or sets which modules are on, with its audit rows. Module data is never touched. */
    async update(
      tenantId: string,
      change: { name?: string; modules?: string[]; policy?: SignInPolicyChange },
      now: number,
      audits: (before: { row: TenantRow; modules: string[] }, after: { row: TenantRow; modules: string[] }) => AuditEntry[],
    ): Promise<{ row: TenantRow; modules: string[] } | undefined> {
      return pg.begin(async (tx) => {
        const row = await lock(tx, tenantId);
        if (!row) return undefined;
        const before = { row, modules: await modules(tx, tenantId) };
        if (change.name !== undefined) await tx.run`UPDATE tenants SET name = ${change.name} WHERE id = ${tenantId}`;
        if (change.policy !== undefined) {
          // Flags are 0 or 1 here as on SQLite (schema 61); undefined leaves a switch as it is.
          const bit = (on: boolean | undefined) => (on === undefined ? null : on ? 1 : 0);
          const mfa = bit(change.policy.require_passkey_or_2fa);
          const admins = bit(change.policy.require_passkey_for_admins);
          await tx.run`UPDATE tenants SET require_passkey_or_2fa = coalesce(${mfa}::integer, require_passkey_or_2fa),
            require_passkey_for_admins = coalesce(${admins}::integer, require_passkey_for_admins) WHERE id = ${tenantId}`;
        }
        if (change.modules !== undefined) {
          const dropped = before.modules.filter((m) => !change.modules!.includes(m));
          if (dropped.length > 0) await tx.run`DELETE FROM tenant_modules WHERE tenant_id = ${tenantId} AND module = ANY(${pg.sql.array(dropped, "text")})`;
          for (const m of change.modules) await insertModule(tx, tenantId, m);
        }
        const after = { row: (await byId(tx, tenantId))!, modules: await modules(tx, tenantId) };
        for (const a of audits(before, after)) await others.security.auditInTx(tx, a, now);
        return after;
      });
    },

    /**
     * Tenant, modules, the two default profiles, the default pipeline and deal numbering, the first
     * admin and their session: all or nothing. Two signups for one subdomain at once: the second INSERT waits for
     * the first to commit, then fails on the unique subdomain and is answered as on SQLite.
     */
    async createOrganization(o: NewOrganization): Promise<{ adminProfileId: string }> {
      const { tenant, admin, session } = o;
      const now = tenant.created_at;
      const adminProfileId = newId();
      try {
        await pg.begin(async (tx) => {
          await tx.run`INSERT INTO tenants (id, name, subdomain, created_at) VALUES (${tenant.id}, ${tenant.name}, ${tenant.subdomain}, ${now}::bigint)`;
          for (const m of o.modules) await insertModule(tx, tenant.id, m);
          await others.users.insertProfileInTx(tx, { id: adminProfileId, tenant_id: tenant.id, name: "Administrator", is_admin: 1, created_at: now });
          await others.users.insertProfileInTx(tx, { id: newId(), tenant_id: tenant.id, name: "Standard user", is_admin: 0, created_at: now });
          await others.crm.seedDefaultStagesInTx(tx, tenant.id, now);
          await createNumberingInTx(tx, tenant.id);
          await others.users.insertInTx(tx, { ...admin, tenant_id: tenant.id, role: "admin", profile_id: adminProfileId });
          await others.sessions.insertInTx(tx, { ...session, tenant_id: tenant.id, user_id: admin.id, created_at: now });
          await others.security.auditInTx(tx, { ...o.audit, tenantId: tenant.id, userId: admin.id }, now);
        });
      } catch (e) {
        if (isPgUniqueViolation(e, "tenants_subdomain_key")) throw new UniqueViolation("tenants.subdomain", e);
        throw e;
      }
      return { adminProfileId };
    },
  };
  return store satisfies TenantsStore;
}

export type PostgresTenantsStore = ReturnType<typeof createPostgresTenantsStore>;
