import type { UsersStore } from "../../team/repo";
import type { ProfileRow, UserRow } from "../../team/repo";
import { type Pg, type PgQueries, type PgTx } from "./database";
import { addressAccounts, directoryInsertInTx, emailHash } from "./user-directory";

/** Users and profiles on PostgreSQL. Every read names the tenant, except sign-in without one. */
/**
 * Sign-in without a tenant: an address's accounts, found through the address directory (schema
 * 54; its cost follows the address's accounts, not the organizations), read once into a
 * MATERIALIZED CTE; proven addresses win over unproven ones. `$1` the address's hash
 * (emailHash), `$2` the address, `$3` the limit.
 */
export const USERS_BY_EMAIL_ANY_TENANT = `WITH ${addressAccounts("u.*")}
  SELECT * FROM found
  WHERE email_verified_at IS NOT NULL OR NOT EXISTS (SELECT 1 FROM found v WHERE v.email_verified_at IS NOT NULL)
  ORDER BY created_at, id LIMIT $3`;

export function createPostgresUsersStore(pg: Pg) {
  const byEmail = (q: PgQueries, tenantId: string, email: string) =>
    q.one<UserRow>`SELECT * FROM users WHERE tenant_id = ${tenantId} AND email = ${email}`;
  const byId = (q: PgQueries, tenantId: string, id: string) => q.one<UserRow>`SELECT * FROM users WHERE tenant_id = ${tenantId} AND id = ${id}`;
  const profile = (q: PgQueries, tenantId: string, id: string) =>
    q.one<ProfileRow>`SELECT * FROM profiles WHERE tenant_id = ${tenantId} AND id = ${id}`;
  // Members oldest first; `pattern` is a LIKE pattern over the lower-cased address and name, or
  // null for everyone (the same escape character as SQLite's).
  const filter = (tenantId: string, pattern: string | null) =>
    pg.sql`tenant_id = ${tenantId} AND (${pattern}::text IS NULL OR email LIKE ${pattern}::text ESCAPE '\\'
           OR lower(coalesce(full_name, '')) LIKE ${pattern}::text ESCAPE '\\')`;

  const store = {
    /** The account and its address directory row (schema 54), in the caller's transaction. */
    insertInTx: async (tx: PgTx, u: Omit<UserRow, "updated_at">) => {
      await tx.run`INSERT INTO users (id, tenant_id, email, full_name, role, profile_id, password_hash, created_at, updated_at, email_verified_at, provider_verified_at)
                   VALUES (${u.id}, ${u.tenant_id}, ${u.email}, ${u.full_name}::text, ${u.role}, ${u.profile_id}::text, ${u.password_hash},
                           ${u.created_at}::bigint, ${u.created_at}::bigint, ${u.email_verified_at ?? null}::bigint, ${u.provider_verified_at ?? null}::bigint)`;
      await directoryInsertInTx(tx, u.tenant_id, u.id, u.email);
    },
    insertProfileInTx: async (tx: PgTx, p: ProfileRow) =>
      void (await tx.run`INSERT INTO profiles (id, tenant_id, name, is_admin, created_at)
                         VALUES (${p.id}, ${p.tenant_id}, ${p.name}, ${p.is_admin}, ${p.created_at}::bigint)`),
    byEmail: async (tenantId: string, email: string) => byEmail(pg, tenantId, email),
    /**
     * Sign-in without a tenant: the only cross-tenant read, by address alone, oldest first.
     * Accounts whose address is proven win: unproven ones count only when the address has no
     * proven one (auth/email/). At most `limit` rows.
     */
    byEmailAnyTenant: async (email: string, limit: number) =>
      pg.unsafe<UserRow>(USERS_BY_EMAIL_ANY_TENANT, [emailHash(email), email, limit]),
    byId: async (tenantId: string, id: string) => byId(pg, tenantId, id),
    profile: async (tenantId: string, id: string) => profile(pg, tenantId, id),
    profiles: async (tenantId: string) => pg.all<ProfileRow>`SELECT * FROM profiles WHERE tenant_id = ${tenantId} ORDER BY created_at, name COLLATE "C"`,
    profileByName: async (tenantId: string, name: string) =>
      pg.one<ProfileRow>`SELECT * FROM profiles WHERE tenant_id = ${tenantId} AND name = ${name}`,
    /** `pattern` from containsPattern (paging.ts), or null for every member. */
    page: async (tenantId: string, pattern: string | null, limit: number, offset: number) =>
      pg.all<UserRow>`SELECT * FROM users WHERE ${filter(tenantId, pattern)} ORDER BY created_at, id LIMIT ${limit} OFFSET ${offset}`,
    count: async (tenantId: string, pattern: string | null) =>
      (await pg.one<{ n: number }>`SELECT count(*) AS n FROM users WHERE ${filter(tenantId, pattern)}`)!.n,
    byEmailInTx: async (tx: PgTx, tenantId: string, email: string) => byEmail(tx, tenantId, email),
    byIdInTx: async (tx: PgTx, tenantId: string, id: string) => byId(tx, tenantId, id),
    profileInTx: async (tx: PgTx, tenantId: string, id: string) => profile(tx, tenantId, id),
  };
  return store satisfies UsersStore;
}

export type PostgresUsersStore = ReturnType<typeof createPostgresUsersStore>;
