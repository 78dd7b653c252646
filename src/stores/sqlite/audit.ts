import type { AuditStore, AuditLogRow, AuditFilter, AuditCursor } from "../../security-log/repo";
import type { Statement } from "bun:sqlite";
import type { Db } from "../../db/database";

const COLUMNS = "a.id, a.user_id, u.email AS user_email, u.full_name AS user_name, a.action, a.ip, a.user_agent, a.detail, a.created_at";

/**
 * Reading the audit log of one organization, newest first. One statement per filter shape (with
 * or without a user, with or without actions), prepared once when first used, so that each shape
 * gets its own plan: a user's rows from audit_by_tenant_user, the rest from audit_by_tenant_time,
 * whose columns also carry user_id and action so that a filter is checked from the index alone.
 */
export function createSqliteAuditStore(db: Db) {
  const cache = new Map<string, Statement>();
  const stmt = (sql: string) => {
    let s = cache.get(sql);
    if (!s) cache.set(sql, (s = db.prepare(sql)));
    return s;
  };
  const where = (f: AuditFilter) =>
    [
      "a.tenant_id = $tenant",
      "a.created_at >= $since",
      "(a.created_at, a.id) < ($before, $beforeId)",
      ...(f.userId !== null ? ["a.user_id = $user"] : []),
      ...(f.actions !== null ? ["a.action IN (SELECT value FROM json_each($actions))"] : []),
    ].join(" AND ");
  // Until is inclusive: the first cursor is just past its last millisecond.
  const params = (tenantId: string, f: AuditFilter, cursor: AuditCursor | null) => ({
    tenant: tenantId,
    since: f.since,
    before: cursor ? cursor.createdAt : f.until,
    beforeId: cursor ? cursor.id : Number.MAX_SAFE_INTEGER,
    ...(f.userId !== null ? { user: f.userId } : {}),
    ...(f.actions !== null ? { actions: JSON.stringify(f.actions) } : {}),
  });
  const join = "LEFT JOIN users u ON u.id = a.user_id AND u.tenant_id = a.tenant_id";

  const store = {
    async page(tenantId: string, f: AuditFilter, limit: number, offset: number): Promise<{ rows: AuditLogRow[]; total: number }> {
      const w = where(f);
      const p = params(tenantId, f, null);
      const rows = stmt(
        `SELECT ${COLUMNS} FROM (SELECT * FROM audit_log a WHERE ${w} ORDER BY a.created_at DESC, a.id DESC LIMIT $limit OFFSET $offset) a ${join}
         ORDER BY a.created_at DESC, a.id DESC`,
      ).all({ ...p, limit: limit, offset: offset } as never) as AuditLogRow[];
      const total = (stmt(`SELECT count(*) AS n FROM audit_log a WHERE ${w}`).get(p as never) as { n: number }).n;
      return { rows, total };
    },
    /** The next `limit` rows after `cursor` (from the newest when null), by keyset: no offset to skip. */
    async after(tenantId: string, f: AuditFilter, cursor: AuditCursor | null, limit: number): Promise<AuditLogRow[]> {
      return stmt(`SELECT ${COLUMNS} FROM audit_log a ${join} WHERE ${where(f)} ORDER BY a.created_at DESC, a.id DESC LIMIT $limit`).all({
        ...params(tenantId, f, cursor),
        limit: limit,
      } as never) as AuditLogRow[];
    },
  };
  return store satisfies AuditStore;
}

export type SqliteAuditStore = ReturnType<typeof createSqliteAuditStore>;
