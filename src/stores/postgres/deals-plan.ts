// The deal list's cost rules on PostgreSQL: which strategy reads a search's page, from estimates
// the list makes (deals-search-page.ts). Pure functions of numbers, no SQL. The strategies: the
// index walk (walk the requested order's index testing each row, within a budget), collecting the
// matches from the trigram index or from the narrow deals_text_by_filters index and sorting them,
// and for a term longer than a gram, counting and paging from one read of its trigram matches.

/**
 * Index entries a search page may walk along its order before it gives up and collects the
 * matches instead. A walk is chosen when the matches look dense enough to fill the page early;
 * matches cluster along an order (a term in titles, in title order), so the walk is capped.
 */
const WALK_BUDGET = 6_000;

/** Where a search's matches are collected from, to be sorted: the trigram index, or the rows within the filters (deals_text_by_filters). */
export type CollectFrom = "trigrams" | "filters";

/** A search page's choice: walk the order's index within `walkBudget` entries (null: no walk), else collect and sort. */
export interface PageChoice {
  walkBudget: number | null;
  collectFrom: CollectFrom;
}

/** The estimates of a search page of a term of 1-3 characters, or a longer one when not read in one go; in row visits. */
export interface PageCosts {
  /** Index entries a walk crosses before the page is full, if the matches were spread evenly (expectedWalk). */
  walk: number;
  /** Collecting from the trigram index (costOfTrigramCollect; infinite below 3 characters). */
  trigrams: number;
  /** Collecting the rows within the filters (costOfFilterCollect). */
  filters: number;
}

/**
 * The choices the deal list asks for. costPlan() is the one the server uses; tests pass plans
 * that force a strategy (tests/support/deals-strategies.ts) to compare each with the reference.
 */
export interface PostgresDealsPlan {
  /** Whether a term longer than a gram is counted and paged from one read of its trigram matches (else as a shorter term is: counted, then walked or collected). */
  longTermsInOneRead: boolean;
  page(c: PageCosts): PageChoice;
}

/** Entries walked before `wanted` matches are found, when `total` matches are spread evenly among the `among` entries the walk crosses. */
export const expectedWalk = (wanted: number, among: number, total: number): number => (wanted * among) / total;

/**
 * Collecting from the trigram index: each of its matches is a visit, in every tenant's deals (the
 * tenant is tested on the row), so the matches within the filters (`total`) are scaled by the
 * tenant's share. Nothing below 3 characters: no trigram to match.
 */
export const costOfTrigramCollect = (termLength: number, total: number, tenantTotal: number, withinFilters: number): number =>
  termLength >= 3 ? (total * tenantTotal) / Math.max(1, withinFilters) : Number.POSITIVE_INFINITY;

/**
 * Collecting the rows within the filters from the narrow index deals_text_by_filters alone (about
 * a quarter of a visit each), plus a visit to each match for its sort key, unless the index holds
 * it (title, account and contact: the orders a term clusters in). The deals whose text is longer
 * than the index's head (schema 71: over 600 bytes) are visited too; they are few, left out here.
 */
export const costOfFilterCollect = (withinFilters: number, total: number, sortKeyInIndex: boolean): number => withinFilters / 4 + (sortKeyInIndex ? 0 : total);

/** The cost rules the server uses; `walkBudget` is tunable (tests shrink it to reach the fallback). */
export function costPlan(tuning: { walkBudget?: number } = {}): PostgresDealsPlan {
  const walkBudget = tuning.walkBudget ?? WALK_BUDGET;
  return {
    longTermsInOneRead: true,
    page({ walk, trigrams, filters }) {
      const collectFrom: CollectFrom = trigrams < filters ? "trigrams" : "filters";
      // Walked when no costlier than collecting, within the budget or three times the expected
      // walk if that is more; collected from whichever index costs less.
      const walked = walk <= Math.min(trigrams, filters);
      return { walkBudget: walked ? Math.ceil(Math.max(walkBudget, 3 * walk)) : null, collectFrom };
    },
  };
}
