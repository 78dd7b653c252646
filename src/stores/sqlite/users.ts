import type { UsersStore, UserRow, ProfileRow } from "../../team/repo";
import type { Db } from "../../db/database";

/** SQL of users and profiles. Every statement is prepared once; every read names the tenant. */
export function createSqliteUsersStore(db: Db) {
  const insertUser = db.prepare<never, [string, string, string, string | null, string, string | null, string, number, number | null, number | null]>(
    `INSERT INTO users (id, tenant_id, email, full_name, role, profile_id, password_hash, created_at, updated_at, email_verified_at, provider_verified_at)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8, ?9, ?10)`,
  );
  const insertProfile = db.prepare<never, [string, string, string, number, number]>(
    "INSERT INTO profiles (id, tenant_id, name, is_admin, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
  );
  const byEmail = db.prepare<UserRow, [string, string]>("SELECT * FROM users WHERE tenant_id = ?1 AND email = ?2");
  // Sign-in without a tenant: the only cross-tenant read, and it reads the address alone.
  // Oldest first: sign-in without a tenant considers a fixed number of an address's accounts (auth/password-check.ts).
  // Accounts whose address is proven win: unproven ones count only when the address has no proven
  // one, so a workspace someone else opened with this address cannot get in the way (auth/email/).
  const byEmailAnyTenant = db.prepare<UserRow, [string, number]>(
    `SELECT * FROM users WHERE email = ?1
        AND (email_verified_at IS NOT NULL OR NOT EXISTS (SELECT 1 FROM users v WHERE v.email = ?1 AND v.email_verified_at IS NOT NULL))
      ORDER BY created_at, id LIMIT ?2`,
  );
  const byId = db.prepare<UserRow, [string, string]>("SELECT * FROM users WHERE tenant_id = ?1 AND id = ?2");
  const profileById = db.prepare<ProfileRow, [string, string]>("SELECT * FROM profiles WHERE tenant_id = ?1 AND id = ?2");
  const profiles = db.prepare<ProfileRow, [string]>("SELECT * FROM profiles WHERE tenant_id = ?1 ORDER BY created_at, name");
  const profileByName = db.prepare<ProfileRow, [string, string]>("SELECT * FROM profiles WHERE tenant_id = ?1 AND name = ?2");
  // Members oldest first (the founder leads, and new members join at the end, not shifting pages).
  // ?2 is a LIKE pattern over the lower-cased address and name, or null for everyone.
  const memberFilter = "tenant_id = ?1 AND (?2 IS NULL OR email LIKE ?2 ESCAPE '\\' OR lower(coalesce(full_name, '')) LIKE ?2 ESCAPE '\\')";
  const page = db.prepare<UserRow, [string, string | null, number, number]>(
    `SELECT * FROM users WHERE ${memberFilter} ORDER BY created_at, id LIMIT ?3 OFFSET ?4`,
  );
  const count = db.prepare<{ n: number }, [string, string | null]>(`SELECT count(*) AS n FROM users WHERE ${memberFilter}`);

  const store = {
    insertInTx: (u: Omit<UserRow, "updated_at">) =>
      void insertUser.run(u.id, u.tenant_id, u.email, u.full_name, u.role, u.profile_id, u.password_hash, u.created_at, u.email_verified_at ?? null, u.provider_verified_at ?? null),
    insertProfileInTx: (p: ProfileRow) => void insertProfile.run(p.id, p.tenant_id, p.name, p.is_admin, p.created_at),
    byEmail: async (tenantId: string, email: string) => byEmail.get(tenantId, email),
    /** At most two rows: enough to tell "one workspace" from "several". */
    byEmailAnyTenant: async (email: string, limit: number) => byEmailAnyTenant.all(email, limit),
    byId: async (tenantId: string, id: string) => byId.get(tenantId, id),
    profile: async (tenantId: string, id: string) => profileById.get(tenantId, id),
    profiles: async (tenantId: string) => profiles.all(tenantId),
    profileByName: async (tenantId: string, name: string) => profileByName.get(tenantId, name),
    /** `pattern` from containsPattern (paging.ts), or null for every member. */
    page: async (tenantId: string, pattern: string | null, limit: number, offset: number) => page.all(tenantId, pattern, limit, offset),
    count: async (tenantId: string, pattern: string | null) => count.get(tenantId, pattern)!.n,
    byEmailInTx: (tenantId: string, email: string) => byEmail.get(tenantId, email),
    byIdInTx: (tenantId: string, id: string) => byId.get(tenantId, id),
    profileInTx: (tenantId: string, id: string) => profileById.get(tenantId, id),
  };
  return store satisfies UsersStore;
}

export type SqliteUsersStore = ReturnType<typeof createSqliteUsersStore>;
