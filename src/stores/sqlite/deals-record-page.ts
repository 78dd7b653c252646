import type { ListedSeqs } from "../../crm/deals-query";
import type { ListRequest } from "./deals-list-request";
import { indexWalk, readPage, sortedPage } from "./deals-page-reads";

/**
 * The deals of one account or contact (their pages' lists): the record's own range of its index
 * (deals_by_account_id / deals_by_contact_id), kept within the filters and the search by the narrow
 * (seq, stage, assignee, text) index rather than the rows, and counted exactly (from the record's
 * index alone without them). The page is that set sorted (a typical record's deals are few: under
 * a millisecond), or, when the record holds so many of the organization's deals that the page lies
 * near along the order's index (a big customer: 40,000 of 200,000 deals took 150–300 ms to sort
 * at load 14, 2 ms walked), a walk of that index testing each entry, within the plan's budget
 * (deals-plan.ts's scan rule, as a search's).
 */
export function recordDealsPage(r: ListRequest): ListedSeqs {
  const { q, tenantId } = r;
  const account = q.account ?? null;
  const contact = q.contact ?? null;
  const where: string[] = [];
  const args: string[] = [];
  if (account !== null) {
    where.push("account_id = ?");
    args.push(account);
  }
  if (contact !== null) {
    where.push("contact_id = ?");
    args.push(contact);
  }
  const index = account !== null ? "deals_by_account_id" : "deals_by_contact_id";
  // The record's deals, from its index alone.
  const range = `SELECT seq FROM deals INDEXED BY ${index} WHERE tenant_id = ? AND ${where.join(" AND ")}`;
  const rangeArgs = [tenantId, ...args];
  // The search's test, as its walks make it: a substring of the deal's lowercased search text.
  const term = q.search === null ? null : q.search.toLowerCase();
  const searched = term === null ? "" : " AND instr(t.search_text, ?) > 0";
  const termArgs = term === null ? [] : [term];
  // Those within the filters and the search, read from the narrow (seq, stage, assignee, text) index, not the rows.
  const set = `SELECT m.seq FROM (${range}) m CROSS JOIN deals t INDEXED BY deals_text_by_seq ON t.seq = m.seq WHERE 1${r.filterSql.replaceAll("d.", "t.")}${searched}`;
  const setArgs = [...rangeArgs, ...r.args, ...termArgs];
  const total =
    term === null && !r.hasFilters
      ? (r.reads.stmt(`SELECT count(*) AS n FROM (${range})`).get(...rangeArgs) as { n: number }).n
      : (r.reads.stmt(`SELECT count(*) AS n FROM (${set})`).get(...setArgs) as { n: number }).n;
  if (r.offset >= total) return { seqs: [], total };
  // The same conditions over a walked row (d).
  const test = [...where.map((w) => `d.${w}`), ...(term === null ? [] : ["instr(d.search_text, ?) > 0"])].join(" AND ");
  const seqs = readPage(r.reads.plan.scanPage({ entries: r.expectedEntries(total) }), {
    indexWalk: (budget) => indexWalk(r, test, [...args, ...termArgs], total, budget),
    sort: () => sortedPage(r, set, setArgs),
  });
  return { seqs, total };
}
