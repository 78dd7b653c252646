import type { TransferStore, ExportFilter, DealCursor, ExportedContact, PeopleCursor, PeopleStep } from "../../crm/export-import/repo";
import type { Statement } from "bun:sqlite";
import type { SqliteSecurityStore } from "./security";
import type { Db } from "../../db/database";
import { SORT_COLUMN } from "../../crm/deal-columns";
import { csvCellSql, csvGuardedSql, csvIntegerSql, csvIsoTimeSql } from "../../kernel/csv";
import type { AccountRow } from "../../crm/repo";

/**
 * A line of the deals export (EXPORT_COLUMNS.deals), as SQLite writes it from a deals row `d`
 * joined to its stage `s`: the same cells csvCell writes (value as formatCents, times as toIso).
 */
const EXPORT_DEAL_LINE = [
  // Ids (newId's alphabet), currencies (^[A-Z]{3}$) and close dates (YYYY-MM-DD) never need
  // quotes: they skip the cell's scans (about a fifth of a chunk's cost).
  csvGuardedSql("d.id"),
  csvCellSql("d.title"),
  "((d.value_cents / 100) || '.' || substr('0' || (d.value_cents % 100), -2))",
  csvGuardedSql("d.currency"),
  csvCellSql("d.stage"),
  csvCellSql("s.name"),
  csvIntegerSql("d.probability"),
  csvGuardedSql("d.close_date"),
  csvCellSql("d.account_name"),
  csvCellSql("d.contact_name"),
  csvCellSql("d.assignee_name"),
  csvCellSql("d.assignee_email"),
  csvCellSql("d.notes"),
  csvCellSql("d.custom_data"),
  csvIsoTimeSql("d.created_at"),
  csvIsoTimeSql("d.updated_at"),
  csvCellSql("d.external_id"),
].join(" || ',' || ").concat(" || char(13, 10)");

/**
 * SQL of CSV export and import. Exports walk an index by key (WHERE (key, id) > last) in chunks,
 * never by offset, so each chunk costs the same however deep the walk is (imports: jobs.ts).
 */
export function createSqliteTransferStore(db: Db, _others: { security: SqliteSecurityStore }) {
  const prepared = new Map<string, Statement>();
  const stmt = (sql: string): Statement => {
    let s = prepared.get(sql);
    if (!s) {
      s = db.prepare(sql);
      prepared.set(sql, s);
    }
    return s;
  };

  /**
   * One chunk of the deals export after `after` in the filter's order (null: from the start): at
   * most `limit` deals of the order walked, those the filters match written as CSV bytes by SQLite
   * (EXPORT_DEAL_LINE), and where the walk stopped. The walk is bounded, not the matches: a search
   * that matches one deal in a million would otherwise read the million in one call (1.1 s of this
   * thread at a million deals). The rows never become JavaScript objects, so a million-row export
   * allocates one buffer a chunk (bench/export.ts).
   */
  function dealsCsvAfter(tenantId: string, f: ExportFilter, after: DealCursor | null, limit: number): { csv: Uint8Array | null; next: DealCursor | null } {
    const { column, nullable } = SORT_COLUMN[f.sortBy];
    const dir = f.sortDir === "asc" ? "ASC" : "DESC";
    const cmp = f.sortDir === "asc" ? ">" : "<";
    const order = `d.${column} ${dir}, d.id ${dir}`;
    // Every parameter as `(SELECT ?)`, as the list's page reads bind theirs: compared or limited by a
    // bound value directly, SQLite (as Bun builds it) plans the statement anew at every run, and this
    // one's CSV cells (thousands of opcodes) made that 6 ms a step before its first row.
    const P = "(SELECT ?)";
    // The filters, tested on each walked deal (read by its seq).
    const filters: string[] = [];
    const filterArgs: Array<string | number> = [];
    if (f.stages !== null) {
      filters.push(`d.stage IN (${f.stages.map(() => P).join(", ")})`);
      filterArgs.push(...f.stages);
    }
    if (f.assignee === "") filters.push("d.assigned_to IS NULL");
    else if (f.assignee !== null) {
      filters.push(`d.assigned_to = ${P}`);
      filterArgs.push(f.assignee);
    }
    if (f.search !== null) {
      filters.push(`instr(d.search_text, ${P}) > 0`);
      filterArgs.push(f.search);
    }
    /**
     * The chunk: the walk of the order's index (LIMIT stops it: no filter in it), numbered in its
     * order, then the matching deals' lines joined in that order into one blob, with the walk's last
     * key and id for the next chunk (a bare column beside max() is read from the row holding the max:
     * SQLite's documented rule).
     */
    const chunk = (walkWhere: string[], walkArgs: Array<string | number | null>, key: string, n: number) => {
      const sql = `WITH walk AS MATERIALIZED (
          SELECT seq, k, id, row_number() OVER (ORDER BY ${order.replace(/d\./g, "")}) AS rn FROM (
            SELECT d.seq AS seq, ${key} AS k, d.id AS id, d.${column} AS ${column} FROM deals d
            WHERE ${walkWhere.join(" AND ")} ORDER BY ${order} LIMIT ${P}))
        SELECT (SELECT CAST(group_concat(line, '' ORDER BY rn) AS BLOB) FROM (
            SELECT ${EXPORT_DEAL_LINE} AS line, w.rn AS rn FROM walk w CROSS JOIN deals d ON d.seq = w.seq
            LEFT JOIN pipeline_stages s ON s.tenant_id = d.tenant_id AND s.key = d.stage
            WHERE ${[`d.tenant_id = ${P}`, ...filters].join(" AND ")})) AS csv, max(rn) AS n, k, id FROM walk`;
      return stmt(sql).get(...walkArgs, n, tenantId, ...filterArgs) as { csv: Uint8Array | null; n: number | null; k: string | number | null; id: string | null };
    };
    const parts: Uint8Array[] = [];
    let walked = 0;
    if (!(after?.inNulls ?? false)) {
      // Deals with a key, in key order. The nullable orders' indexes lead with `key IS NULL`: the
      // term `key IS NULL = 0` matches that column, and ORDER BY must then leave it out, or SQLite
      // sorts every remaining row again (a temporary B-tree per chunk).
      const w = [`d.tenant_id = ${P}`];
      const a: Array<string | number | null> = [tenantId];
      if (nullable) w.push(`d.${column} IS NULL = 0`);
      if (after) {
        w.push(`(d.${column}, d.id) ${cmp} (SELECT ?, ?)`);
        a.push(after.key, after.id);
      }
      const r = chunk(w, a, `d.${column}`, limit);
      walked = r.n ?? 0;
      if (r.csv) parts.push(r.csv);
      if (walked === limit) return { csv: r.csv, next: { key: r.k, id: r.id!, inNulls: false } };
      if (!nullable) return { csv: r.csv, next: null };
    }
    // Then the deals without a key (nulls last either way), by id in the same direction, ordered
    // as the index is (the key, all NULL here, then id), so that no chunk is sorted.
    const w = [`d.tenant_id = ${P}`, `d.${column} IS NULL = 1`];
    const a: Array<string | number | null> = [tenantId];
    if (after?.inNulls) {
      w.push(`d.id ${cmp} ${P}`);
      a.push(after.id);
    }
    const r = chunk(w, a, "NULL", limit - walked);
    if (r.csv) parts.push(r.csv);
    walked += r.n ?? 0;
    const csv = parts.length === 0 ? null : parts.length === 1 ? parts[0]! : Buffer.concat(parts);
    if (walked < limit) return { csv, next: null };
    return { csv, next: { key: null, id: r.id!, inNulls: true } };
  }

  /**
   * One step of an accounts or contacts export: the walk newest first (LIMIT stops it: no filter in
   * it), then the records of it the pattern matches and its last entry (the cursor), in its order.
   * The rows carry `hit_` (matched), `rn_` and `walked_` (the walk's length), taken off by peopleStep.
   */
  const peopleSql = (table: "accounts" | "contacts", filter: string, select: string, after: boolean) =>
    db.prepare(`WITH walk AS MATERIALIZED (
        SELECT r, row_number() OVER (ORDER BY created_at DESC, id DESC) AS rn, count(*) OVER () AS walked FROM (
          SELECT rowid AS r, created_at, id FROM ${table} WHERE tenant_id = (SELECT ?1)${after ? " AND (created_at, id) < (SELECT ?4, ?5)" : ""}
          ORDER BY created_at DESC, id DESC LIMIT (SELECT ?3)))
      SELECT ${select}, ${filter} AS hit_, w.rn AS rn_, w.walked AS walked_ FROM walk w CROSS JOIN ${table} x ON x.rowid = w.r
      ${table === "contacts" ? "LEFT JOIN accounts a ON a.id = x.account_id AND a.tenant_id = x.tenant_id" : ""}
      WHERE x.tenant_id = (SELECT ?1) AND (${filter} OR w.rn = w.walked) ORDER BY w.rn`);
  const accountFilter = "((SELECT ?2) IS NULL OR lower(x.name) LIKE (SELECT ?2) ESCAPE '\\' OR lower(x.domain) LIKE (SELECT ?2) ESCAPE '\\')";
  const contactFilter = `((SELECT ?2) IS NULL OR lower(x.first_name || ' ' || coalesce(x.last_name, '')) LIKE (SELECT ?2) ESCAPE '\\' OR lower(coalesce(x.email, '')) LIKE (SELECT ?2) ESCAPE '\\')`;
  const accountSteps = [false, true].map((after) => peopleSql("accounts", accountFilter, "x.*", after));
  const contactSteps = [false, true].map((after) => peopleSql("contacts", contactFilter, "x.*, a.name AS account_name", after));
  type Walked = { created_at: number; id: string; hit_: number; rn_: number; walked_: number };
  function peopleStep<R>(statements: Statement[], tenantId: string, pattern: string | null, after: PeopleCursor | null, limit: number): PeopleStep<R> {
    const walked = (after ? statements[1]!.all(tenantId, pattern, limit, after.created_at, after.id) : statements[0]!.all(tenantId, pattern, limit)) as Walked[];
    const last = walked[walked.length - 1];
    const rows = walked.filter((r) => r.hit_ === 1).map(({ hit_: _h, rn_: _r, walked_: _w, ...r }) => r as unknown as R);
    return { rows, next: last && last.walked_ === limit ? { created_at: last.created_at, id: last.id } : null };
  }

  // Oldest first, a bounded step: (created_at, id) after the last one read.
  const accountNames = [false, true].map((after) =>
    db.prepare(`SELECT id, name, created_at FROM accounts WHERE tenant_id = (SELECT ?1)${after ? " AND (created_at, id) > (SELECT ?3, ?4)" : ""} ORDER BY created_at, id LIMIT (SELECT ?2)`),
  );
  const contactNames = [false, true].map((after) =>
    db.prepare(`SELECT id, first_name, last_name, account_id, created_at FROM contacts WHERE tenant_id = (SELECT ?1)${after ? " AND (created_at, id) > (SELECT ?3, ?4)" : ""} ORDER BY created_at, id LIMIT (SELECT ?2)`),
  );
  function namesStep<R extends { created_at: number; id: string }>(statements: Statement[], tenantId: string, after: PeopleCursor | null, limit: number): PeopleStep<R> {
    const rows = (after ? statements[1]!.all(tenantId, limit, after.created_at, after.id) : statements[0]!.all(tenantId, limit)) as R[];
    const last = rows[rows.length - 1];
    return { rows, next: last && rows.length === limit ? { created_at: last.created_at, id: last.id } : null };
  }
  const allUsers = db.prepare<{ id: string; email: string; full_name: string | null }, [string]>("SELECT id, email, full_name FROM users WHERE tenant_id = ?1");

  const store = {
    dealsCsvAfter: async (tenantId: string, f: ExportFilter, after: DealCursor | null, limit: number) => dealsCsvAfter(tenantId, f, after, limit),
    async accountsAfter(tenantId: string, pattern: string | null, after: PeopleCursor | null, limit: number): Promise<PeopleStep<AccountRow>> {
      return peopleStep<AccountRow>(accountSteps, tenantId, pattern, after, limit);
    },
    async contactsAfter(tenantId: string, pattern: string | null, after: PeopleCursor | null, limit: number): Promise<PeopleStep<ExportedContact>> {
      return peopleStep<ExportedContact>(contactSteps, tenantId, pattern, after, limit);
    },
    accountNamesAfter: async (tenantId: string, after: PeopleCursor | null, limit: number) =>
      namesStep<{ id: string; name: string; created_at: number }>(accountNames, tenantId, after, limit),
    contactNamesAfter: async (tenantId: string, after: PeopleCursor | null, limit: number) =>
      namesStep<{ id: string; first_name: string; last_name: string | null; account_id: string | null; created_at: number }>(contactNames, tenantId, after, limit),
    members: async (tenantId: string) => allUsers.all(tenantId),
  };
  return store satisfies TransferStore;
}

export type SqliteTransferStore = ReturnType<typeof createSqliteTransferStore>;
