import type { SupportStore } from "../../team/support-repo";
import type { SupportUserRow } from "../../team/support-repo";
import type { Pg } from "./database";

/** The operator's view of an organization's members (src/cli/users.ts) on PostgreSQL. */
export function createPostgresSupportStore(pg: Pg) {
  const store = {
    // The last sign-in is read through audit_by_tenant_user (tenant_id, user_id, created_at, id).
    list: async (tenantId: string) =>
      pg.all<SupportUserRow>`
        SELECT u.id, u.email, u.full_name, u.role, u.created_at,
               CASE WHEN z.enabled_at IS NOT NULL THEN 1 ELSE 0 END AS two_factor, z.locked_until AS totp_locked_until,
               (SELECT max(a.created_at) FROM audit_log a
                 WHERE a.tenant_id = u.tenant_id AND a.user_id = u.id AND a.action = 'login.success') AS last_sign_in
          FROM users u LEFT JOIN user_totp z ON z.tenant_id = u.tenant_id AND z.user_id = u.id
         WHERE u.tenant_id = ${tenantId}
         ORDER BY u.created_at, u.id`,
  };
  return store satisfies SupportStore;
}

export type PostgresSupportStore = ReturnType<typeof createPostgresSupportStore>;
