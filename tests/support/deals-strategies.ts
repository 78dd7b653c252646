// The deal list's strategies forced, for tests that compare each with the reference: plans passed
// to createSqliteDealsQuery / createPostgresDealsQuery in place of the cost rules the server uses
// (src/stores/sqlite/deals-plan.ts, src/stores/postgres/deals-plan.ts). Shipping code holds no
// switch for them: a test names the strategy here, and the store runs whatever its plan chooses.
import { type PageChoice, type SqliteDealsPlan, costPlan } from "../../src/stores/sqlite/deals-plan";
import { type CollectFrom, type PostgresDealsPlan, costPlan as postgresCostPlan } from "../../src/stores/postgres/deals-plan";

/** No budget: a forced walk runs until the page is full. */
const UNBUDGETED = Number.MAX_SAFE_INTEGER;

/**
 * A SQLite plan that always takes one strategy: "index walk" (unbudgeted, every search), "sort"
 * (every search), or "bucket walk" (a 3-letter term in a text order, unbudgeted: it must answer on
 * its own; other searches as the cost rules choose). `tuning` as costPlan's (rare, walkBudget).
 */
export function forcedSqlitePlan(by: PageChoice["by"], tuning: { rare?: number; walkBudget?: number } = {}): SqliteDealsPlan {
  const costs = costPlan(tuning);
  if (by === "bucket walk")
    return { ...costs, threeLetterPage: (c) => (c.bucketed ? { by: "bucket walk", maxEntries: Number.POSITIVE_INFINITY } : costs.threeLetterPage(c)) };
  const always = (): PageChoice => (by === "index walk" ? { by, budget: UNBUDGETED } : { by: "sort" });
  return { ...costs, scanPage: always, threeLetterPage: always, rareTermPage: always };
}

/** A SQLite plan whose 3-letter terms go through the trigram index, as longer terms do (as before schema version 12). */
export const threeLettersByTrigrams = (plan: SqliteDealsPlan): SqliteDealsPlan => ({ ...plan, threeLettersCounted: false });

/**
 * A PostgreSQL plan that always takes one strategy: "walk" (unbudgeted; a long term too, instead of
 * its one read), or "collect" (never a walk), from the index `from` names or, by default, from the
 * one the cost rules choose. A trigram collect needs 3 characters: shorter terms collect by filters.
 */
export function forcedPostgresPlan(by: "walk" | "collect", from?: CollectFrom): PostgresDealsPlan {
  const costs = postgresCostPlan();
  if (by === "walk") return { longTermsInOneRead: false, page: (c) => ({ ...costs.page(c), walkBudget: UNBUDGETED }) };
  return { longTermsInOneRead: true, page: (c) => ({ walkBudget: null, collectFrom: from ?? costs.page(c).collectFrom }) };
}
