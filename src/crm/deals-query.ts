import type { DealJoined } from "./deals-repo";
import type { DealListQuery } from "./model";

export interface ListedSeqs {
  seqs: number[];
  total: number;
  /** The page's rows themselves (without their stage's data) when the list read them directly. */
  rows?: DealJoined[];
}

/**
 * The deal list's reads, one per backend (src/stores/sqlite/deals-query.ts,
 * src/stores/postgres/deals-query.ts): a page of deals within the filters, in the requested order,
 * with the exact total of those matching. Totals come from counters or the search index, pages from a walk of the
 * order's index or from sorting the matches, whichever each backend's plan (deals-plan.ts) expects
 * to cost less; every plan gives the same answers.
 */
export interface DealsQuery {
  list(tenantId: string, q: DealListQuery): Promise<ListedSeqs>;
}
