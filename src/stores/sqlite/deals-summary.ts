import type { Statement } from "bun:sqlite";
import type { DealSummaryQuery, SummaryRow } from "../../crm/deals-query";
import { TENANT_SPAN } from "../../crm/deal-columns";
import { MIN_FTS_TERM, ftsPhrase } from "./deals-search-terms";

/**
 * The deal board's summary on SQLite.
 *
 * Without a search: a sum of deal_sums rows (counters kept by triggers per assignee, stage and
 * currency, version 26: a few hundred rows at most), each assignee's name read from one of their
 * deals. Well under a millisecond at 1M deals.
 *
 * With a search (the same matches as the list: a substring of the lower-cased text): a rare term
 * of three characters or more (under RARE matches in the trigram index, limited to the tenant's
 * rowid range) is summed from its matches in one statement; any other term is summed over the
 * tenant's rowid range in slices of at most 8,192 rows, each a bounded read with the event loop let go between them
 * (a common term at 1M deals reads every row: seconds of work that must not hold the thread). No
 * counter holds sums per search term, so such a summary costs a read of the tenant's deals.
 * The sums are read as text (exact past 2^53; SQLite's integer sum is exact to 2^63 cents).
 */

/**
 * rare: a term with fewer matches than this is summed from its matches (as the list's rare terms);
 * firstSlice: rows the first slice reads, each next one sized to take about sliceMs. Tests shrink
 * them to reach every path with little data.
 */
export interface SummaryTuning {
  rare: number;
  firstSlice: number;
  /** At most this many rows a slice, whatever the last one took: rows not in the cache cost far more (a cold 32k-row slice took 217 ms at load 14). */
  maxSlice: number;
  sliceMs: number;
}
export const SUMMARY_TUNING: SummaryTuning = { rare: 10_000, firstSlice: 2_048, maxSlice: 8_192, sliceMs: 10 };

export interface SummaryReads {
  stmt(sql: string): Statement;
  tenantNo(tenantId: string): number | null;
  /** Runs `fn` in one read transaction (synchronous). */
  read<T>(fn: () => T): T;
  tuning: SummaryTuning;
}

interface Filters {
  sql: string;
  args: Array<string | number>;
}

/** The stage and assignee filters over deals (d); unary + keeps them off the indexes when a rowid range is walked. */
function filtersOf(q: DealSummaryQuery, plus: string): Filters {
  let sql = "";
  const args: Array<string | number> = [];
  if (q.stages !== null) {
    sql += ` AND ${plus}d.stage IN (${q.stages.map(() => "?").join(", ")})`;
    args.push(...q.stages);
  }
  if (q.assignee === "") sql += ` AND ${plus}d.assigned_to IS NULL`;
  else if (q.assignee !== null) {
    sql += ` AND ${plus}d.assigned_to = ?`;
    args.push(q.assignee);
  }
  return { sql, args };
}

const selectOf = (q: DealSummaryQuery): string => {
  const key = q.groupBy === "stage" ? "d.stage" : "d.assigned_to";
  const named = q.groupBy === "stage" ? "NULL AS name, NULL AS email" : "max(d.assignee_name) AS name, max(d.assignee_email) AS email";
  return `SELECT ${key} AS key, d.currency AS currency, count(*) AS n, CAST(coalesce(sum(d.value_cents), 0) AS TEXT) AS cents, ${named}`;
};
const groupOf = (q: DealSummaryQuery): string => ` GROUP BY ${q.groupBy === "stage" ? "d.stage" : "d.assigned_to"}, d.currency`;

export async function summaryRows(r: SummaryReads, tenantId: string, q: DealSummaryQuery): Promise<SummaryRow[]> {
  if (q.stages !== null && q.stages.length === 0) return [];
  if (q.search === null) return r.read(() => countedRows(r.stmt, tenantId, q));
  const no = r.tenantNo(tenantId);
  if (no === null) return [];
  const lo = no * TENANT_SPAN;
  const hi = lo + TENANT_SPAN - 1;
  const term = q.search.toLowerCase();
  if ([...term].length >= MIN_FTS_TERM) {
    const hits = r.stmt("SELECT rowid FROM deals_fts WHERE deals_fts MATCH ? AND rowid BETWEEN ? AND ? LIMIT ?").values(`search_text : ${ftsPhrase(term)}`, lo, hi, r.tuning.rare) as number[][];
    if (hits.length < r.tuning.rare) {
      const f = filtersOf(q, "");
      return r
        .stmt(`${selectOf(q)} FROM json_each(?) m CROSS JOIN deals d ON d.seq = m.value WHERE d.tenant_id = ?${f.sql}${groupOf(q)}`)
        .all(JSON.stringify(hits.map((h) => h[0])), tenantId, ...f.args) as SummaryRow[];
    }
  }
  return slicedRows(r, tenantId, q, term, lo, hi);
}

/** A search summed over the tenant's rowid range, slice after slice, the partial sums added up here (BigInt). */
async function slicedRows(r: SummaryReads, tenantId: string, q: DealSummaryQuery, term: string, lo: number, hi: number): Promise<SummaryRow[]> {
  // Two statements: SQLite reads a lone min() or max() off the rowid's ends, but both in one scan the whole range (600 ms at 1M).
  const first = (r.stmt("SELECT min(seq) AS s FROM deals WHERE seq BETWEEN ? AND ?").get(lo, hi) as { s: number | null }).s;
  const last = (r.stmt("SELECT max(seq) AS s FROM deals WHERE seq BETWEEN ? AND ?").get(lo, hi) as { s: number | null }).s;
  if (first === null || last === null) return [];
  const range = { first, last };
  const f = filtersOf(q, "+");
  const slice = r.stmt(`${selectOf(q)} FROM deals d WHERE d.seq BETWEEN ? AND ? AND +d.tenant_id = ?${f.sql} AND instr(d.search_text, ?) > 0${groupOf(q)}`);
  const found = new Map<string, { row: SummaryRow; cents: bigint }>();
  const { firstSlice, maxSlice, sliceMs } = r.tuning;
  let size = firstSlice;
  for (let from = range.first; from <= range.last; ) {
    const to = Math.min(range.last, from + size - 1);
    const started = performance.now();
    for (const row of slice.all(from, to, tenantId, ...f.args, term) as SummaryRow[]) {
      const k = `${row.key ?? ""}\u0000${row.currency}`;
      const had = found.get(k);
      if (!had) found.set(k, { row: { ...row }, cents: BigInt(row.cents) });
      else {
        had.row.n += row.n;
        had.cents += BigInt(row.cents);
        had.row.name ??= row.name;
        had.row.email ??= row.email;
      }
    }
    const took = performance.now() - started;
    from = to + 1;
    size = Math.max(Math.min(256, firstSlice), Math.min(maxSlice, size * 2, Math.round((size * sliceMs) / Math.max(took, 0.5))));
    await new Promise((go) => setImmediate(go));
  }
  return [...found.values()].map(({ row, cents }) => ({ ...row, cents: String(cents) }));
}

/** Without a search: deal_sums rows added up (zero rows left by deals that moved away are skipped). */
function countedRows(stmt: (sql: string) => Statement, tenantId: string, q: DealSummaryQuery): SummaryRow[] {
  const args: Array<string | number> = [tenantId];
  let where = "";
  if (q.stages !== null) {
    where += ` AND stage IN (${q.stages.map(() => "?").join(", ")})`;
    args.push(...q.stages);
  }
  if (q.assignee !== null) {
    where += " AND assignee = ?";
    args.push(q.assignee);
  }
  const key = q.groupBy === "stage" ? "stage" : "assignee";
  const rows = stmt(
    `SELECT ${key} AS key, currency, sum(n) AS n, CAST(sum(cents) AS TEXT) AS cents, NULL AS name, NULL AS email FROM deal_sums WHERE tenant_id = ?${where}` +
      ` GROUP BY ${key}, currency HAVING sum(n) > 0`,
  ).all(...args) as SummaryRow[];
  if (q.groupBy === "stage") return rows;
  // An assignee's name and address as their deals carry them (copied and kept current on every deal).
  const named = stmt("SELECT assignee_name AS name, assignee_email AS email FROM deals INDEXED BY deals_by_assignee_created WHERE tenant_id = ? AND assigned_to = ? LIMIT 1");
  const names = new Map<string, { name: string | null; email: string | null }>();
  return rows.map((row) => {
    if (row.key === "") return { ...row, key: null };
    let who = names.get(row.key!);
    if (!who) names.set(row.key!, (who = (named.get(tenantId, row.key!) as { name: string | null; email: string | null } | null) ?? { name: null, email: null }));
    return { ...row, ...who };
  });
}
