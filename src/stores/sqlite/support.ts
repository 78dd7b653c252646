import type { SupportStore, SupportUserRow } from "../../team/support-repo";
import type { Db } from "../../db/database";

/** SQL of the operator's view of an organization's members (src/cli/users.ts). */
export function createSqliteSupportStore(db: Db) {
  // The last sign-in is read through audit_by_tenant_user (tenant_id, user_id, created_at, id).
  const list = db.prepare<SupportUserRow, [string]>(
    `SELECT u.id, u.email, u.full_name, u.role, u.created_at,
            coalesce(z.enabled_at IS NOT NULL, 0) AS two_factor, z.locked_until AS totp_locked_until,
            (SELECT max(a.created_at) FROM audit_log a
              WHERE a.tenant_id = u.tenant_id AND a.user_id = u.id AND a.action = 'login.success') AS last_sign_in
       FROM users u LEFT JOIN user_totp z ON z.tenant_id = u.tenant_id AND z.user_id = u.id
      WHERE u.tenant_id = ?1
      ORDER BY u.created_at, u.id`,
  );
  const store = {
    list: async (tenantId: string) => list.all(tenantId),
  };
  return store satisfies SupportStore;
}

export type SqliteSupportStore = ReturnType<typeof createSqliteSupportStore>;
