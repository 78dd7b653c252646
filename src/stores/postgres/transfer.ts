import type { TransferStore } from "../../crm/export-import/repo";
import { toIso } from "../../kernel/ids";
import { csvLine } from "../../kernel/csv";
import { SORT_COLUMN } from "../../crm/deal-columns";
import { formatCents } from "../../crm/money";
import type { AccountRow } from "../../crm/repo";
import type { DealCursor, ExportedContact, ExportFilter, PeopleCursor, PeopleStep } from "../../crm/export-import/repo";
import type { Pg } from "./database";
import type { PgAuditWriter } from "./stages";

/** A deals export row: the cells of EXPORT_COLUMNS.deals, in order. */
type ExportRow = {
  id: string; title: string; value_cents: number; currency: string; stage: string; stage_name: string | null; probability: number | null;
  close_date: string | null; account_name: string; contact_name: string | null; assignee_name: string | null; assignee_email: string | null;
  notes: string | null; custom_data: string | null; created_at: number; updated_at: number; external_id: string | null; k: string | number | null;
};

// The same cells SQLite writes in SQL (stores/sqlite/transfer.ts' EXPORT_DEAL_LINE): csvCell of each value.
const dealLine = (r: ExportRow) =>
  csvLine([r.id, r.title, formatCents(r.value_cents), r.currency, r.stage, r.stage_name, r.probability, r.close_date, r.account_name,
    r.contact_name, r.assignee_name, r.assignee_email, r.notes, r.custom_data, toIso(r.created_at), toIso(r.updated_at), r.external_id]);

const encoder = new TextEncoder();

const ACCOUNT_FILTER = `($2::text IS NULL OR lower(x.name) LIKE $2 ESCAPE '\\' OR lower(x.domain) LIKE $2 ESCAPE '\\')`;
const CONTACT_FILTER = `($2::text IS NULL OR lower(x.first_name || ' ' || coalesce(x.last_name, '')) LIKE $2 ESCAPE '\\' OR lower(coalesce(x.email, '')) LIKE $2 ESCAPE '\\')`;

/**
 * PostgreSQL twin of src/crm/export-import/repo.ts. Exports walk the order's index by key
 * (WHERE (key, id) > last, never OFFSET) a chunk at a time, so memory holds one chunk however
 * long the file; the reads are async here (SQLite's are not). An import writes every row in one
 * transaction or none.
 */
export function createPostgresTransferStore(pg: Pg, _deps: { security: PgAuditWriter }) {
  /**
   * One chunk of the deals export after `after` in the filter's order (null: from the start): at
   * most `limit` deals of the order walked, those the filters match as CSV bytes, and where the walk
   * stopped. The walk is bounded, not the matches, so no statement reads the whole organization for
   * a rare search (SQLite's twin does the same: there the walk is this thread's time).
   */
  async function dealsCsvAfter(tenantId: string, f: ExportFilter, after: DealCursor | null, limit: number): Promise<{ csv: Uint8Array | null; next: DealCursor | null }> {
    const { column, nullable } = SORT_COLUMN[f.sortBy];
    const dir = f.sortDir === "asc" ? "ASC" : "DESC";
    const cmp = f.sortDir === "asc" ? ">" : "<";
    const args: unknown[] = [tenantId];
    const arg = (v: unknown) => `$${args.push(v)}`;
    const filters: string[] = [];
    if (f.stages !== null) filters.push(`d.stage = ANY(${arg(f.stages)}::text[])`);
    if (f.assignee === "") filters.push("d.assigned_to IS NULL");
    else if (f.assignee !== null) filters.push(`d.assigned_to = ${arg(f.assignee)}`);
    if (f.search !== null) filters.push(`strpos(d.search_text, ${arg(f.search)}) > 0`);
    const hit = filters.length === 0 ? "true" : `coalesce(${filters.join(" AND ")}, false)`;
    const base = args.length;

    /** The walk (LIMIT stops it: no filter in it), then the matching deals of it and its last entry, in its order. */
    const chunk = async (w: string[], n: number): Promise<Array<ExportRow & { hit: boolean; rn: string; walked: string }>> => {
      // The nullable orders' indexes lead with (key IS NULL): the same expression in ORDER BY lets
      // PostgreSQL walk them without sorting.
      const orderBy = (key: string) => `${nullable ? `(${key} IS NULL), ` : ""}${key} ${dir}, d.id ${dir}`;
      const sql = `WITH walk AS MATERIALIZED (
          SELECT d.id, row_number() OVER (ORDER BY ${orderBy("d.k")}) AS rn, count(*) OVER () AS walked FROM (
            SELECT d.id, d.${column} AS k FROM deals d WHERE ${w.join(" AND ")} ORDER BY ${orderBy(`d.${column}`)} LIMIT ${arg(n)}) d)
        SELECT d.id, d.title, d.value_cents, d.currency, d.stage, s.name AS stage_name, d.probability, d.close_date, d.account_name,
          d.contact_name, d.assignee_name, d.assignee_email, d.notes, d.custom_data, d.created_at, d.updated_at, d.external_id,
          d.${column} AS k, ${hit} AS hit, w.rn, w.walked
        FROM walk w JOIN deals d ON d.tenant_id = $1 AND d.id = w.id
        LEFT JOIN pipeline_stages s ON s.tenant_id = d.tenant_id AND s.key = d.stage
        WHERE ${hit} OR w.rn = w.walked ORDER BY w.rn`;
      return pg.unsafe(sql, args);
    };
    const lines: string[] = [];
    let last: ExportRow | undefined;
    let walked = 0;
    const take = (rows: Array<ExportRow & { hit: boolean; walked: string }>) => {
      for (const r of rows) if (r.hit) lines.push(dealLine(r));
      last = rows[rows.length - 1];
      return last ? Number(rows[0]!.walked) : 0;
    };
    const csvOf = () => (lines.length === 0 ? null : encoder.encode(lines.join("")));
    if (!(after?.inNulls ?? false)) {
      args.length = base;
      const w = ["d.tenant_id = $1"];
      if (nullable) w.push(`(d.${column} IS NULL) = false`);
      if (after) w.push(`(d.${column}, d.id) ${cmp} (${arg(after.key)}, ${arg(after.id)})`);
      walked = take(await chunk(w, limit));
      if (walked === limit) return { csv: csvOf(), next: { key: last!.k, id: last!.id, inNulls: false } };
      if (!nullable) return { csv: csvOf(), next: null };
    }
    // Then the deals without a key (nulls last either way), by id in the same direction.
    args.length = base;
    const w = ["d.tenant_id = $1", `(d.${column} IS NULL) = true`];
    if (after?.inNulls) w.push(`d.id ${cmp} ${arg(after.id)}`);
    const nulls = take(await chunk(w, limit - walked));
    walked += nulls;
    if (walked < limit) return { csv: csvOf(), next: null };
    return { csv: csvOf(), next: { key: null, id: last!.id, inNulls: true } };
  }

  /**
   * One step of an accounts or contacts export: the walk newest first (LIMIT stops it: no filter in
   * it), then the records of it the pattern matches and its last entry (the cursor), in its order.
   */
  async function peopleStep<R>(
    table: "accounts" | "contacts", select: string, filter: string, tenantId: string, pattern: string | null, after: PeopleCursor | null, limit: number,
  ): Promise<PeopleStep<R>> {
    const join = table === "contacts" ? "LEFT JOIN accounts a ON a.tenant_id = x.tenant_id AND a.id = x.account_id" : "";
    const walked = await pg.unsafe<{ created_at: number; id: string; hit_: boolean; rn_: string; walked_: string }>(
      `WITH walk AS MATERIALIZED (
          SELECT w.id, row_number() OVER (ORDER BY w.created_at DESC, w.id DESC) AS rn, count(*) OVER () AS walked FROM (
            SELECT id, created_at FROM ${table} WHERE tenant_id = $1${after ? " AND (created_at, id) < ($4, $5)" : ""}
            ORDER BY created_at DESC, id DESC LIMIT $3) w)
        SELECT ${select}, coalesce(${filter}, false) AS hit_, w.rn AS rn_, w.walked AS walked_ FROM walk w JOIN ${table} x ON x.tenant_id = $1 AND x.id = w.id ${join}
        WHERE ${filter} OR w.rn = w.walked ORDER BY w.rn`,
      after ? [tenantId, pattern, limit, after.created_at, after.id] : [tenantId, pattern, limit],
    );
    const last = walked[walked.length - 1];
    const rows = walked.filter((r) => r.hit_).map(({ hit_: _h, rn_: _r, walked_: _w, ...r }) => r as unknown as R);
    return { rows, next: last && Number(last.walked_) === limit ? { created_at: Number(last.created_at), id: last.id } : null };
  }

  /** Accounts' or contacts' names oldest first, a bounded step: (created_at, id) after the last one read. */
  async function namesStep<R extends { created_at: number; id: string }>(table: "accounts" | "contacts", columns: string, tenantId: string, after: PeopleCursor | null, limit: number): Promise<PeopleStep<R>> {
    const rows = [...(await pg.unsafe<R>(
      `SELECT ${columns} FROM ${table} WHERE tenant_id = $1${after ? " AND (created_at, id) > ($3, $4)" : ""} ORDER BY created_at, id LIMIT $2`,
      after ? [tenantId, limit, after.created_at, after.id] : [tenantId, limit],
    ))];
    const last = rows[rows.length - 1];
    return { rows, next: last && rows.length === limit ? { created_at: Number(last.created_at), id: last.id } : null };
  }

  const store = {
    dealsCsvAfter,
    accountsAfter: (tenantId: string, pattern: string | null, after: PeopleCursor | null, limit: number) =>
      peopleStep<AccountRow>("accounts", "x.*", ACCOUNT_FILTER, tenantId, pattern, after, limit),
    contactsAfter: (tenantId: string, pattern: string | null, after: PeopleCursor | null, limit: number) =>
      peopleStep<ExportedContact>("contacts", "x.*, a.name AS account_name", CONTACT_FILTER, tenantId, pattern, after, limit),
    accountNamesAfter: (tenantId: string, after: PeopleCursor | null, limit: number) =>
      namesStep<{ id: string; name: string; created_at: number }>("accounts", "id, name, created_at", tenantId, after, limit),
    contactNamesAfter: (tenantId: string, after: PeopleCursor | null, limit: number) =>
      namesStep<{ id: string; first_name: string; last_name: string | null; account_id: string | null; created_at: number }>(
        "contacts", "id, first_name, last_name, account_id, created_at", tenantId, after, limit),
    async members(tenantId: string) {
      return [...(await pg.all<{ id: string; email: string; full_name: string | null }>`SELECT id, email, full_name FROM users WHERE tenant_id = ${tenantId}`)];
    },
  };
  return store satisfies TransferStore;
}

export type PostgresTransferStore = ReturnType<typeof createPostgresTransferStore>;
