import type { ListedSeqs } from "../../crm/deals-query";
import type { ListRequest } from "./deals-list-request";
import { ROW_READ, costOfSortingThreeLetters, costOfTestedEntry } from "./deals-plan";
import { indexWalk, readPage, seqsOf, sortedPage } from "./deals-page-reads";
import { UNASSIGNED_TOKEN, ftsPhrase, globContaining } from "./deals-search-terms";
import { isBucketedOrder } from "./deals-text-walk";

// A search's total and page, by the term's length: 1-2 characters (no trigram can match), 3 (exact
// totals from deal_gram_counts), longer (the trigram index; rare and common terms apart). Each
// works out the estimates its cost rule takes, asks the plan (deals-plan.ts) and reads the page.

/** The term (lowercase) and the tenant's rowid range, which bounds the search index's matches. */
export interface Search {
  term: string;
  lo: number;
  hi: number;
}

/** The walk's test of a row (the filters are the walk's own). */
const ROW_TEST = "instr(d.search_text, ?) > 0";

/**
 * A term's matches within the filters, as a set of rowids (counted, or sorted for the page):
 * stages are matched inside the index (stage_token), and so is "unassigned" (unassigned_token,
 * migration 10); one user's matches are the index's, tested against the user's few deals read
 * once from the assignee index (ion/mine: 49 -> 28 ms at 1M).
 */
function matchSet(r: ListRequest, s: Search, termOnly: string): [string, Array<string | number>] {
  const { q, tenantId } = r;
  const match = termOnly + (q.stages !== null ? r.reads.stageMatch(tenantId, q.stages) : "") + (q.assignee === "" ? ` AND unassigned_token : ${ftsPhrase(UNASSIGNED_TOKEN)}` : "");
  const matching = "SELECT rowid AS seq FROM deals_fts WHERE deals_fts MATCH ? AND rowid BETWEEN ? AND ?";
  if (q.assignee === null || q.assignee === "") return [matching, [match, s.lo, s.hi]];
  return [`${matching} AND +rowid IN (SELECT seq FROM deals INDEXED BY deals_by_assignee_created WHERE tenant_id = ? AND assigned_to = ?)`, [match, s.lo, s.hi, tenantId, q.assignee]];
}

/** A walk of the order's index testing each row for the term, or the sort of `set` (the plan's scan rule). */
function scannedPage(r: ListRequest, s: Search, total: number, set: string, setArgs: Array<string | number>): number[] {
  return readPage(r.reads.plan.scanPage({ entries: r.expectedEntries(total) }), {
    indexWalk: (budget) => indexWalk(r, ROW_TEST, [s.term], total, budget),
    sort: () => sortedPage(r, set, setArgs),
  });
}

/**
 * Too short for trigrams: the exact total is a sum of deal_gram_counts rows (schema version 11),
 * never a read of the text. Sorted, the matches are read from the narrow (seq, stage, assignee,
 * text) index in the tenant's rowid range, in order (a sequential read, not a lookup per row), or
 * one user's deals from the assignee index (thousands), not the tenant's text.
 */
export function shortTermPage(r: ListRequest, s: Search): ListedSeqs {
  const { q, tenantId } = r;
  const total = r.reads.shortTermTotal(tenantId, s.term, q);
  if (r.offset >= total) return { seqs: [], total };
  const [set, setArgs]: [string, Array<string | number>] =
    q.assignee !== null && q.assignee !== ""
      ? [`SELECT seq FROM deals INDEXED BY deals_by_assignee_created WHERE tenant_id = ? AND assigned_to = ? AND instr(search_text, ?) > 0`, [tenantId, q.assignee, s.term]]
      : [`SELECT d.seq FROM deals d INDEXED BY deals_text_by_seq WHERE d.seq BETWEEN ? AND ? AND d.search_text GLOB ?${r.filterSql}`, [s.lo, s.hi, globContaining(s.term), ...r.args]];
  return { seqs: scannedPage(r, s, total, set, setArgs), total };
}

/**
 * A 3-letter term (schema version 12): its exact total within the filters is a sum of
 * deal_gram_counts rows, no match read. That total also gives the real density of matches among
 * the entries a walk of the order's index crosses, so the walks and sorting are weighed by their
 * expected cost: a walk reads about (offset + size) × among / total entries; sorting reads the
 * index's matches within the filters (a few bytes each) and looks up and sorts those rows.
 */
export function threeLetterPage(r: ListRequest, s: Search): ListedSeqs {
  const { q, tenantId } = r;
  const total = r.reads.shortTermTotal(tenantId, s.term, q);
  if (r.offset >= total) return { seqs: [], total };
  const [set, setArgs] = matchSet(r, s, `search_text : ${ftsPhrase(s.term)}`);
  const termAll = r.reads.shortTermTotal(tenantId, s.term, { ...q, stages: null, assignee: null });
  const w = r.walkShape();
  const choice = r.reads.plan.threeLetterPage({
    entries: r.expectedEntries(total),
    sortCost: costOfSortingThreeLetters(total, termAll, q.assignee !== null && q.assignee !== ""),
    entryCost: w.tested === "" ? ROW_READ : costOfTestedEntry(r.unsearchedTotal(), w.among()),
    bucketed: isBucketedOrder(q.sortBy),
  });
  const seqs = readPage(choice, {
    indexWalk: (budget) => indexWalk(r, ROW_TEST, [s.term], total, budget),
    bucketWalk: isBucketedOrder(q.sortBy)
      ? (maxEntries) =>
          r.reads.walkBuckets({
            tenantId,
            sortBy: q.sortBy,
            desc: q.sortDir === "desc",
            term: s.term,
            filterSql: r.filterSql,
            filterArgs: r.args,
            offset: r.offset,
            size: q.size,
            total,
            termAll,
            maxEntries,
          })
      : undefined,
    sort: () => sortedPage(r, set, setArgs),
  });
  return { seqs, total };
}

/**
 * A term the trigram index serves (longer than 3 characters, or 3 when the plan does not count
 * them). How common is it? Reading at most `rare` matches costs little either way, and a rare
 * term's matches are all there is to filter, count and sort: the index is read once. A common
 * term's matches within the filters are counted in the index (matchSet), then scanned or sorted.
 */
export function trigramTermPage(r: ListRequest, s: Search): ListedSeqs {
  const { stmt, plan } = r.reads;
  const termOnly = `search_text : ${ftsPhrase(s.term)}`;
  const hits = seqsOf(stmt("SELECT rowid FROM deals_fts WHERE deals_fts MATCH ? AND rowid BETWEEN ? AND ? LIMIT ?").values(termOnly, s.lo, s.hi, plan.rare));
  if (hits.length < plan.rare) return rareTermPage(r, hits);
  const [set, setArgs] = matchSet(r, s, termOnly);
  const total = (stmt(`SELECT count(*) AS n FROM (${set})`).get(...setArgs) as { n: number }).n;
  if (r.offset >= total) return { seqs: [], total };
  return { seqs: scannedPage(r, s, total, set, setArgs), total };
}

/** A rare term's page from its matches in hand: the set walked against the order's index (no row read), or sorted. */
function rareTermPage(r: ListRequest, hits: number[]): ListedSeqs {
  // Filters read the narrow (seq, stage, assigned_to, ...) index, not the rows; every hit is in the tenant's range.
  const found = !r.hasFilters
    ? hits
    : seqsOf(
        r.reads
          .stmt(`SELECT d.seq FROM json_each(?) m CROSS JOIN deals d INDEXED BY deals_text_by_seq ON d.seq = m.value WHERE 1${r.filterSql}`)
          .values(JSON.stringify(hits), ...r.args),
      );
  const total = found.length;
  if (r.offset >= total) return { seqs: [], total };
  const set = JSON.stringify(found);
  const seqs = readPage(r.reads.plan.rareTermPage({ entries: r.expectedWalk(total, r.tenantTotal()), total }), {
    indexWalk: (budget) => indexWalk(r, "d.seq IN (SELECT value FROM json_each(?))", [set], total, budget, false),
    sort: () => sortedPage(r, "SELECT value AS seq FROM json_each(?)", [set]),
  });
  return { seqs, total };
}
