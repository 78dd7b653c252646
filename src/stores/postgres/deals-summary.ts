import type { DealSummaryQuery, SummaryRow } from "../../crm/deals-query";
import type { Pg } from "./database";
import { Params } from "./deals-list-request";
import { containing } from "./deals-search-page";

/**
 * The deal board's summary on PostgreSQL, the same answers as SQLite's (src/stores/sqlite/deals-summary.ts):
 * one grouped read of the deals within the list's filters and search (a term of three characters
 * or more through the trigram index, every match rechecked with strpos as the list does). The
 * sums of bigint are numeric, exact, read as text.
 */
export async function summaryRows(pg: Pg, tenantId: string, q: DealSummaryQuery): Promise<SummaryRow[]> {
  if (q.stages !== null && q.stages.length === 0) return [];
  const p = new Params();
  let where = `d.tenant_id = ${p.add(tenantId)}`;
  if (q.stages !== null) where += ` AND d.stage = ANY(${p.add(q.stages)}::text[])`;
  if (q.assignee === "") where += " AND d.assigned_to IS NULL";
  else if (q.assignee !== null) where += ` AND d.assigned_to = ${p.add(q.assignee)}`;
  if (q.search !== null) {
    const term = q.search.toLowerCase();
    if ([...term].length >= 3) where += ` AND d.search_text LIKE ${p.add(containing(term))}`;
    where += ` AND strpos(d.search_text, ${p.add(term)}) > 0`;
  }
  const key = q.groupBy === "stage" ? "d.stage" : "d.assigned_to";
  const named = q.groupBy === "stage" ? "NULL::text AS name, NULL::text AS email" : "max(d.assignee_name) AS name, max(d.assignee_email) AS email";
  const rows = await pg.unsafe<{ key: string | null; currency: string; n: string | number; cents: string; name: string | null; email: string | null }>(
    `SELECT ${key} AS key, d.currency AS currency, count(*) AS n, coalesce(sum(d.value_cents), 0)::text AS cents, ${named} FROM deals d WHERE ${where} GROUP BY ${key}, d.currency`,
    p.list,
  );
  return rows.map((r) => ({ ...r, n: Number(r.n) }));
}
