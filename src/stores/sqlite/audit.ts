import type { AuditStore, AuditLogRow, AuditFilter, AuditCursor } from "../../security-log/repo";
import type { Statement } from "bun:sqlite";
import type { Db } from "../../db/database";

const COLUMNS = "a.id, a.user_id, u.email AS user_email, u.full_name AS user_name, a.action, a.ip, a.user_agent, a.detail, a.created_at";

/**
 * Index entries one step of a walk of the log may cross (a step reads them twice: 2-4 ms, at most
 * 16 ms seen, on a 1M-row log): a page's total, its skip to a deep offset and a CSV batch each go a
 * step a turn of the event loop. Counted in one statement, 1M rows held the thread 138-191 ms.
 */
export const AUDIT_STEP_ENTRIES = 10_000;

/** A turn of the event loop between two steps: other requests run. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Reading the audit log of one organization, newest first. One statement per filter shape (with
 * or without a user, with or without actions), prepared once when first used, so that each shape
 * gets its own plan: a user's rows from audit_by_tenant_user, the rest from audit_by_tenant_time,
 * whose columns also carry user_id and action so that a filter is checked from the index alone.
 *
 * A page's total and the rows before a deep page are walked in steps of `stepEntries` index
 * entries (the tenant's, the user's, within the time range), whatever share of them the actions
 * keep: each step finds the key `stepEntries` entries further, then counts or reads the matching
 * rows between the two keys. The walk is bounded above by the newest row when it starts, so the
 * total and the page describe one moment while rows keep coming.
 */
export function createSqliteAuditStore(db: Db, stepEntries = AUDIT_STEP_ENTRIES) {
  const cache = new Map<string, Statement>();
  const stmt = (sql: string) => {
    let s = cache.get(sql);
    if (!s) cache.set(sql, (s = db.prepare(sql)));
    return s;
  };
  /**
   * The entries a walk crosses: the tenant's (or the user's) below the cursor, and from `since`,
   * or from a step's far end (inclusive: itself at or after `since`). One lower bound, never two:
   * given both, SQLite started the step's range at `since` and read every older entry (3.3 s a page at 1M).
   */
  const served = (f: AuditFilter, toEnd = false) =>
    [
      "a.tenant_id = $tenant",
      toEnd ? "(a.created_at, a.id) >= ($endAt, $endId)" : "a.created_at >= $since",
      "(a.created_at, a.id) < ($before, $beforeId)",
      ...(f.userId !== null ? ["a.user_id = $user"] : []),
    ].join(" AND ");
  const where = (f: AuditFilter, toEnd = false) => served(f, toEnd) + (f.actions !== null ? " AND a.action IN (SELECT value FROM json_each($actions))" : "");
  const order = "ORDER BY a.created_at DESC, a.id DESC";
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

  /** The key `stepEntries` entries below `from` (that entry included), or null when fewer are left. */
  const stepEnd = (tenantId: string, f: AuditFilter, from: AuditCursor | null): AuditCursor | null =>
    (stmt(`SELECT a.created_at AS createdAt, a.id AS id FROM audit_log a WHERE ${served(f)} ${order} LIMIT 1 OFFSET $skip`).get({
      ...params(tenantId, f, from),
      skip: stepEntries - 1,
    } as never) as AuditCursor | null) ?? null;
  /** The range a step covers: the matching rows below `from` and at or above `end` (everything left when null). */
  const range = (tenantId: string, f: AuditFilter, from: AuditCursor | null, end: AuditCursor | null) => {
    const { since, ...rest } = params(tenantId, f, from);
    return end ? { where: where(f, true), args: { ...rest, endAt: end.createdAt, endId: end.id } } : { where: where(f), args: { ...rest, since } };
  };
  /** Just above the newest entry the walk serves now: rows written later are not walked. */
  const top = (tenantId: string, f: AuditFilter): AuditCursor | null => {
    const newest = stmt(`SELECT a.created_at AS createdAt, a.id AS id FROM audit_log a WHERE ${served(f)} ${order} LIMIT 1`).get(params(tenantId, f, null) as never) as AuditCursor | null;
    return newest ? { createdAt: newest.createdAt, id: newest.id + 1 } : null;
  };

  /**
   * Walks the matching rows below `from` a step at a time: `visit` gets each step's range and
   * answers whether to go on. Every step waits for a turn of the event loop, the first too: a
   * page's three walks (total, skip, rows) follow one another through resolved promises, which
   * run in the same turn (23-31 ms turns at 1M rows when only later steps waited).
   */
  async function walk(tenantId: string, f: AuditFilter, from: AuditCursor | null, visit: (r: ReturnType<typeof range>) => boolean): Promise<void> {
    for (;;) {
      await turn();
      const end = stepEnd(tenantId, f, from);
      if (!visit(range(tenantId, f, from, end)) || end === null) return;
      from = end;
    }
  }

  /** How many rows match below `from`. */
  async function count(tenantId: string, f: AuditFilter, from: AuditCursor | null): Promise<number> {
    let n = 0;
    await walk(tenantId, f, from, (r) => {
      n += (stmt(`SELECT count(*) AS n FROM audit_log a WHERE ${r.where}`).get(r.args as never) as { n: number }).n;
      return true;
    });
    return n;
  }

  /** The key of the `offset`-th matching row below `from` (the last one skipped), or `from` itself at 0; "end" past the last row. */
  async function skip(tenantId: string, f: AuditFilter, from: AuditCursor | null, offset: number): Promise<AuditCursor | null | "end"> {
    if (offset === 0) return from;
    let left = offset;
    let found: AuditCursor | "end" = "end";
    await walk(tenantId, f, from, (r) => {
      const n = (stmt(`SELECT count(*) AS n FROM audit_log a WHERE ${r.where}`).get(r.args as never) as { n: number }).n;
      if (n < left) {
        left -= n;
        return true;
      }
      found = stmt(`SELECT a.created_at AS createdAt, a.id AS id FROM audit_log a WHERE ${r.where} ${order} LIMIT 1 OFFSET $skip`).get({
        ...r.args,
        skip: left - 1,
      } as never) as AuditCursor;
      return false;
    });
    return found;
  }

  /** Up to `limit` matching rows below `from`, newest first, gathered a step at a time. */
  async function rowsAfter(tenantId: string, f: AuditFilter, from: AuditCursor | null, limit: number): Promise<AuditLogRow[]> {
    const rows: AuditLogRow[] = [];
    await walk(tenantId, f, from, (r) => {
      rows.push(
        ...(stmt(`SELECT ${COLUMNS} FROM (SELECT * FROM audit_log a WHERE ${r.where} ${order} LIMIT $limit) a ${join} ${order}`).all({
          ...r.args,
          limit: limit - rows.length,
        } as never) as AuditLogRow[]),
      );
      return rows.length < limit;
    });
    return rows;
  }

  const store = {
    async page(tenantId: string, f: AuditFilter, limit: number, offset: number): Promise<{ rows: AuditLogRow[]; total: number }> {
      const from = top(tenantId, f);
      if (from === null) return { rows: [], total: 0 };
      const total = await count(tenantId, f, from);
      if (offset >= total) return { rows: [], total };
      const start = await skip(tenantId, f, from, offset);
      return { rows: start === "end" ? [] : await rowsAfter(tenantId, f, start, limit), total };
    },
    /** The next `limit` rows after `cursor` (from the newest when null), by keyset: no offset to skip. */
    after: (tenantId: string, f: AuditFilter, cursor: AuditCursor | null, limit: number): Promise<AuditLogRow[]> => rowsAfter(tenantId, f, cursor, limit),
  };
  return store satisfies AuditStore;
}

export type SqliteAuditStore = ReturnType<typeof createSqliteAuditStore>;
