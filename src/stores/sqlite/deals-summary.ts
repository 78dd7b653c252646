import type { Statement } from "bun:sqlite";
import type { DealSummaryQuery, SummaryRow } from "../../crm/deals-query";
import { TENANT_SPAN } from "../../crm/deal-columns";
import { MIN_FTS_TERM, ftsPhrase } from "./deals-search-terms";

/**
 * The deal board's summary on SQLite: one grouped read of the deals within the list's filters
 * and search (the same matches as the list: a substring of the lower-cased text; a term of three
 * characters or more through the trigram index, limited to the tenant's rowid range). The sums
 * are read as text (exact past 2^53; SQLite's integer sum is exact to 2^63 cents).
 */
export function summaryRows(
  stmt: (sql: string) => Statement,
  tenantNo: (tenantId: string) => number | null,
  tenantId: string,
  q: DealSummaryQuery,
): SummaryRow[] {
  if (q.stages !== null && q.stages.length === 0) return [];
  const where: string[] = [];
  const args: Array<string | number> = [tenantId];
  if (q.stages !== null) {
    where.push(`d.stage IN (${q.stages.map(() => "?").join(", ")})`);
    args.push(...q.stages);
  }
  if (q.assignee === "") where.push("d.assigned_to IS NULL");
  else if (q.assignee !== null) {
    where.push("d.assigned_to = ?");
    args.push(q.assignee);
  }
  if (q.search !== null) {
    const term = q.search.toLowerCase();
    if ([...term].length >= MIN_FTS_TERM) {
      const no = tenantNo(tenantId);
      if (no === null) return [];
      const lo = no * TENANT_SPAN;
      where.push("d.seq IN (SELECT rowid FROM deals_fts WHERE deals_fts MATCH ? AND rowid BETWEEN ? AND ?)");
      args.push(`search_text : ${ftsPhrase(term)}`, lo, lo + TENANT_SPAN - 1);
    } else {
      where.push("instr(d.search_text, ?) > 0");
      args.push(term);
    }
  }
  const key = q.groupBy === "stage" ? "d.stage" : "d.assigned_to";
  const named = q.groupBy === "stage" ? "NULL AS name, NULL AS email" : "max(d.assignee_name) AS name, max(d.assignee_email) AS email";
  const sql =
    `SELECT ${key} AS key, d.currency AS currency, count(*) AS n, CAST(coalesce(sum(d.value_cents), 0) AS TEXT) AS cents, ${named}` +
    ` FROM deals d WHERE d.tenant_id = ?${where.map((w) => ` AND ${w}`).join("")} GROUP BY ${key}, d.currency`;
  return stmt(sql).all(...args) as SummaryRow[];
}
