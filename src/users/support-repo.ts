import type { Db } from "../db/database";

/** A member as `suite user list` shows them: the account, its second factor and its last sign-in. */
export interface SupportUserRow {
  id: string;
  email: string;
  full_name: string | null;
  role: "admin" | "member";
  created_at: number;
  /** 1 when the second factor is on (confirmed), else 0. */
  two_factor: number;
  /** Until when wrong codes locked the second factor, if they did. */
  totp_locked_until: number | null;
  /** The newest `login.success` in the audit log, if any. */
  last_sign_in: number | null;
}

/** SQL of the operator's view of an organization's members (src/cli/users.ts). */
export function createSupportRepo(db: Db) {
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
  return {
    list: async (tenantId: string) => list.all(tenantId),
  };
}

export type SupportRepo = ReturnType<typeof createSupportRepo>;
