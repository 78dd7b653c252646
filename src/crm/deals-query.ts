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
  /**
   * The deal board's summary: the deals within the list's filters and search, counted and their
   * values added up exactly, per group (stage or assignee) and currency; one row per pair that
   * has deals. `cents` is decimal text: a sum can pass 2^53.
   */
  summary(tenantId: string, q: DealSummaryQuery): Promise<SummaryRow[]>;
}

/** The deal list's filters and search, without paging or order, and what to group by. */
export type DealSummaryQuery = Pick<DealListQuery, "search" | "stages" | "assignee"> & { groupBy: "stage" | "assigned_to" };

export interface SummaryRow {
  /** The stage key, or the assignee's user id (null: nobody). */
  key: string | null;
  currency: string;
  n: number;
  cents: string;
  /** The assignee's name and address as their deals carry them (grouped by assignee). */
  name: string | null;
  email: string | null;
}
