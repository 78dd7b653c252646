// The deal list's cost rules on SQLite: which strategy reads a search's page, from estimates the
// list makes (src/stores/sqlite/deals-search-pages.ts). Pure functions of numbers, no SQL. The
// strategies themselves: the index walk (walk the requested order's index, testing each entry),
// the bucket walk (a text order's index walked only through the buckets where a 3-letter term
// occurs, deals-text-walk.ts) and the sort fallback (collect the matches, look each up, sort).
// A walk that runs out of its budget returns nothing and the page is sorted instead.

/** A term with fewer matches than this in a tenant is rare: its rows are looked up one by one. */
const RARE = 10_000;
/** Index entries walked (each tested against a set of matches) that cost as much as one row looked up. */
const WALK_STEP_COST = 1 / 10;
/** An index entry walked and its filters tested on it, without its row: about a twentieth of a row read (0.09 µs a step against 2.3 µs a sorted match, 1M deals). */
const INDEX_STEP = 1 / 20;
/**
 * Rows a page may read walking an order's index before it gives up and sorts the matches instead:
 * matches are seldom spread evenly along an order (a term in a title clusters in title order), so a
 * walk that looked short can read the whole tenant. Capped, a wrong guess costs a few milliseconds.
 */
const WALK_BUDGET = 8_000;

/** How a search's page is read: an index walk or a bucket walk within a budget (entries), else the sort fallback. */
export type PageChoice = { by: "index walk"; budget: number } | { by: "bucket walk"; maxEntries: number } | { by: "sort" };

/** A 1-2 letter term's or a common term's page: the walk's expected length, in index entries. */
export interface ScanCosts {
  /** Index entries walked in order before the page is full, if the matches were spread evenly. */
  entries: number;
}

/** A 3-letter term's page: its matches' exact total gives the real density along the order. */
export interface ThreeLetterCosts {
  entries: number;
  /** What a walked entry costs, a row read being 1 (ROW_READ or costOfTestedEntry). */
  entryCost: number;
  /** What sorting the matches costs, in rows read (costOfSortingThreeLetters). */
  sortCost: number;
  /** Whether deal_key_grams counts the order's buckets (title, account, contact): a bucket walk can serve it. */
  bucketed: boolean;
}

/** A rare term's page: its matches are a set of rowids in hand. */
export interface RareTermCosts {
  /** Index entries walked before the page is full, if the matches were spread evenly over the tenant. */
  entries: number;
  /** The matches within the filters. */
  total: number;
}

/**
 * The choices the deal list asks for. costPlan() is the one the server uses; tests pass plans
 * that force a strategy (tests/support/deals-strategies.ts) to compare each with the reference.
 */
export interface SqliteDealsPlan {
  /** Matches read, at most, to tell a rare term (fewer) from a common one. */
  rare: number;
  /** Whether a 3-letter term is counted from deal_gram_counts (schema version 12), else from the trigram index as longer terms are. */
  threeLettersCounted: boolean;
  scanPage(c: ScanCosts): PageChoice;
  threeLetterPage(c: ThreeLetterCosts): PageChoice;
  rareTermPage(c: RareTermCosts): PageChoice;
}

/**
 * Sorting a 3-letter term's matches, in walked entries (each a row looked up at random, about 2.8
 * µs of CPU at 1M deals): each match within the filters looked up in rowid order and sorted (0.7),
 * and the index's matches of the term read to find them (0.015 each; 0.03 when each is also
 * probed against one user's deals).
 */
export const costOfSortingThreeLetters = (total: number, termAll: number, oneUser: boolean): number => 0.7 * total + termAll * (oneUser ? 0.03 : 0.015);

/** A walked entry whose filters the order's index serves: it reads its row (the unit of every cost here). */
export const ROW_READ = 1;

/**
 * A walked entry whose filters the order's index does not serve, a row read being 1: the filters
 * are tested on the entry, and only the share of entries within them (`within` of `among`) read
 * their row.
 */
export const costOfTestedEntry = (within: number, among: number): number => INDEX_STEP + within / Math.max(1, among);

/** The cost rules the server uses; `walkBudget` and `rare` are tunable (tests shrink them to reach the fallbacks). */
export function costPlan(tuning: { rare?: number; walkBudget?: number } = {}): SqliteDealsPlan {
  const walkBudget = tuning.walkBudget ?? WALK_BUDGET;
  // A 3-letter term's rules weigh the walk against sorting's known cost: no flat budget unless tuned.
  const threeLetterCap = tuning.walkBudget ?? Number.MAX_SAFE_INTEGER;
  return {
    rare: tuning.rare ?? RARE,
    threeLettersCounted: true,
    // Walked when the page looks near (a third of the budget), within the budget; else sorted.
    scanPage: ({ entries }) => (entries * 3 <= walkBudget ? { by: "index walk", budget: walkBudget } : { by: "sort" }),
    threeLetterPage({ entries, entryCost, sortCost, bucketed }) {
      // A text order (schema version 13): the walk crosses only the order's buckets where the term
      // occurs (deal_key_grams), planned from their counts, and gives up where sorting costs less.
      if (bucketed) return { by: "bucket walk", maxEntries: Math.min(threeLetterCap, sortCost / entryCost) };
      // Matches cluster along some orders (a term of the titles in title order), so a walk is tried
      // only when expected to cost under half of sorting, and gives up past twice its expected
      // length, or a quarter of what sorting costs up to 8,000 entries if that is more (clusters
      // a few thousand entries in are common: "ati" within two stages in title order, 4.7 ms
      // walked against 108 ms sorted); then the matches are sorted.
      if (2 * entries * entryCost <= sortCost)
        return { by: "index walk", budget: Math.min(threeLetterCap, sortCost / entryCost, Math.max(2 * entries, Math.min(8000, sortCost / 4) / entryCost)) };
      return { by: "sort" };
    },
    // Either look up every match and sort them (a random read each), or walk the order's index
    // from its start testing each entry against the set (no row read), whichever costs less;
    // the walk within a budget, since matches can cluster far along the order.
    rareTermPage: ({ entries, total }) =>
      entries * WALK_STEP_COST < total ? { by: "index walk", budget: Math.max(4 * entries, walkBudget / WALK_STEP_COST) } : { by: "sort" },
  };
}
