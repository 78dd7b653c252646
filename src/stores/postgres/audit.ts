import type { AuditStore } from "../../security-log/repo";
import type { AuditCursor, AuditFilter, AuditLogRow } from "../../security-log/repo";
import type { Pg } from "./database";

const COLUMNS = "a.id, a.user_id, u.email AS user_email, u.full_name AS user_name, a.action, a.ip, a.user_agent, a.detail, a.created_at";
const JOIN = "LEFT JOIN users u ON u.tenant_id = a.tenant_id AND u.id = a.user_id";
const ORDER = "ORDER BY a.created_at DESC, a.id DESC";

/**
 * Reading one organization's audit log on PostgreSQL, newest first: the same filters, order and
 * pages as SQLite's. The WHERE clause is built from the filter's shape (with or without a user,
 * with or without actions) so that each shape gets its own plan: a user's rows from
 * audit_by_tenant_user, the rest from audit_by_tenant_time.
 */
export function createPostgresAuditStore(pg: Pg) {
  // Until is inclusive: the first cursor is (until, the largest id), so rows of its last millisecond count.
  const where = (tenantId: string, f: AuditFilter, cursor: AuditCursor | null) => {
    const params: unknown[] = [tenantId, f.since, cursor ? cursor.createdAt : f.until, cursor ? cursor.id : Number.MAX_SAFE_INTEGER];
    const parts = ["a.tenant_id = $1", "a.created_at >= $2::bigint", "(a.created_at, a.id) < ($3::bigint, $4::bigint)"];
    if (f.userId !== null) {
      params.push(f.userId);
      parts.push(`a.user_id = $${params.length}`);
    }
    if (f.actions !== null) {
      params.push(f.actions);
      parts.push(`a.action = ANY($${params.length}::text[])`);
    }
    return { sql: parts.join(" AND "), params };
  };

  const store = {
    async page(tenantId: string, f: AuditFilter, limit: number, offset: number): Promise<{ rows: AuditLogRow[]; total: number }> {
      const w = where(tenantId, f, null);
      const n = w.params.length;
      const rows = await pg.unsafe<AuditLogRow>(
        `SELECT ${COLUMNS} FROM (SELECT * FROM audit_log a WHERE ${w.sql} ${ORDER} LIMIT $${n + 1} OFFSET $${n + 2}) a ${JOIN} ${ORDER}`,
        [...w.params, limit, offset],
      );
      const total = (await pg.unsafe<{ n: number }>(`SELECT count(*) AS n FROM audit_log a WHERE ${w.sql}`, w.params))[0]!.n;
      return { rows, total };
    },
    /** The next `limit` rows after `cursor` (from the newest when null), by keyset: no offset to skip. */
    async after(tenantId: string, f: AuditFilter, cursor: AuditCursor | null, limit: number): Promise<AuditLogRow[]> {
      const w = where(tenantId, f, cursor);
      return pg.unsafe<AuditLogRow>(`SELECT ${COLUMNS} FROM audit_log a ${JOIN} WHERE ${w.sql} ${ORDER} LIMIT $${w.params.length + 1}`, [
        ...w.params,
        limit,
      ]);
    },
  };
  return store satisfies AuditStore;
}

export type PostgresAuditStore = ReturnType<typeof createPostgresAuditStore>;
