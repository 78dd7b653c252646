import type { DealJoined } from "./deals-repo";
import type { DealListQuery } from "./model";

export interface ListedSeqs {
  seqs: number[];
  total: number;
  /** The page's rows themselves (without their stage's data) when the list read them directly. */
  rows?: DealJoined[];
}

/**
 * The deal list's SQL. Totals come from the deal_counts table when there is no search (a sum of
 * a few rows), else from the trigram index limited to the tenant's rowid range, or for a term too
 * short for trigrams from a narrow (seq, stage, assignee, text) index read in that range. The page
 * is read from the index of the requested order; a search either walks that order testing each
 * row (when matches are dense, the first page is near), with a budget, or sorts the matching rows
 * (when rare, or when the walk ran out of budget). Statements are prepared once per shape and kept.
 */
export interface DealsQuery {
  list(tenantId: string, q: DealListQuery): Promise<ListedSeqs>;
}
