import type { ListedSeqs } from "../../crm/deals-query";
import type { ListRequest } from "./deals-list-request";
import { sortedPage } from "./deals-page-reads";

/**
 * The deals of one account or contact (their pages' lists): the record's own range of its index
 * (deals_by_account_id / deals_by_contact_id) is the set, the other filters and the search tested
 * on each of its rows, counted exactly and sorted for the page. A record's deals are few next to
 * the tenant's, so no counter or walk is needed: the cost is the record's deal count.
 */
export function recordDealsPage(r: ListRequest): ListedSeqs {
  const { q, tenantId } = r;
  const account = q.account ?? null;
  const contact = q.contact ?? null;
  const where: string[] = [];
  const args: Array<string | number> = [tenantId];
  if (account !== null) {
    where.push("account_id = ?");
    args.push(account);
  }
  if (contact !== null) {
    where.push("contact_id = ?");
    args.push(contact);
  }
  // The same test as the search's walks: a substring of the deal's lowercased search text.
  if (q.search !== null) {
    where.push("instr(search_text, ?) > 0");
    args.push(q.search.toLowerCase());
  }
  const index = account !== null ? "deals_by_account_id" : "deals_by_contact_id";
  const set = `SELECT seq FROM deals INDEXED BY ${index} WHERE tenant_id = ? AND ${where.join(" AND ")}`;
  const total = (r.reads.stmt(`SELECT count(*) AS n FROM (${set}) m CROSS JOIN deals d ON d.seq = m.seq WHERE d.tenant_id = ?${r.filterSql}`).get(...args, tenantId, ...r.args) as {
    n: number;
  }).n;
  if (r.offset >= total) return { seqs: [], total };
  return { seqs: sortedPage(r, set, args), total };
}


