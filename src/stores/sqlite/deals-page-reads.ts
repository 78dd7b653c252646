import type { ListedSeqs } from "../../crm/deals-query";
import type { DealJoined } from "../../crm/deals-repo";
import { DEAL_COLUMNS } from "../../crm/deal-columns";
import type { ListRequest } from "./deals-list-request";
import type { PageChoice } from "./deals-plan";

// The ways the deal list reads a page's rowids: the plain page of a list without a search, the
// index walk and the sort fallback. The bucket walk is deals-text-walk.ts; which one a search uses
// is deals-plan.ts's choice.

/**
 * A listed deal's columns, read by rowid (`r`) after the page's rowids were walked along the
 * order's index (`p.page_seq`): one statement for a page at any depth. Skipped entries cost an
 * index step each, never a row read. CROSS JOIN keeps the walk outermost, so the rows come in its
 * order (tests/stores/deals-list.test.ts checks every order at several depths); an outer ORDER BY
 * would sort whole rows again, 5 µs. Issue 15: a page 100 to 200 deep took about 12 µs more as
 * rowids first and rows by rowid in a second statement.
 */
const PAGE_COLUMNS = DEAL_COLUMNS.split(",").map((c) => `r.${c.trim()}`).join(", ");

export const seqsOf = (rows: unknown): number[] => (rows as number[][]).map((r) => r[0]!);

/**
 * A list without a search: its total is a sum of a few deal_counts rows, its page one walk of the
 * order's index (skipped entries cost an index step each), its rows read in the same statement.
 */
export function unsearchedPage(r: ListRequest): ListedSeqs {
  const { q, tenantId, filterSql, args } = r;
  const total = r.unsearchedTotal();
  if (r.offset >= total) return { seqs: [], total };
  // Assignee order under an assignee filter: that assignee's range of the index is sought (as a
  // search walk does, see walkShape()) instead of walked to past every other assignee's deals.
  const seek = q.sortBy === "assignee_name" && q.assignee !== null ? r.walkShape() : null;
  // The tenant id, the size and the offset as `(SELECT ?)`: compared or limited by a bound value
  // directly, SQLite (as Bun builds it) plans the statement anew at every execution, about
  // 190,000 instructions of a 1M-instruction request (callgrind, issue 15); the same plan
  // either way (every sort and filter compared).
  const walked = seek
    ? {
        sql: `SELECT d.seq AS page_seq FROM deals d${seek.indexed} WHERE d.tenant_id = (SELECT ?)${seek.served}${filterSql} ORDER BY ${seek.order} LIMIT (SELECT ?) OFFSET (SELECT ?)`,
        args: [tenantId, ...seek.servedArgs, ...args, q.size, r.offset],
      }
    : r.inOrder({ select: "d.seq AS page_seq", where: filterSql, whereArgs: args, limit: q.size, offset: r.offset, bind: "(SELECT ?)" });
  const rows = r.reads.stmt(`SELECT ${PAGE_COLUMNS} FROM (${walked.sql}) p CROSS JOIN deals r ON r.seq = p.page_seq`).all(...walked.args) as DealJoined[];
  // Their stage data too, in this read transaction: the store's withStages then reads nothing.
  return { seqs: rows.map((x) => x.seq), total, rows: r.reads.withStages(tenantId, rows) };
}

/**
 * Index walk: the first `offset + size` of the order's first `budget` index entries that `test`
 * accepts (the subquery's LIMIT stops the walk), sliced to the page; null when the walk ran out of
 * budget before it found them. Cheap when matches are dense along the order: the page is near.
 * `filtered` false: the test alone decides (it already holds only matches within the filters).
 */
export function indexWalk(r: ListRequest, test: string, testArgs: Array<string | number>, total: number, budget: number, filtered = true): number[] | null {
  const wanted = Math.min(total, r.offset + r.q.size);
  // The filters an index serves select the entries walked (served); the others are part of the
  // test (tested), and every entry walked counts against the budget. The tested filters come
  // first (CASE): read from the index entry (each order's index holds the stage and the assignee
  // since version 13), they spare the row of every entry outside them.
  const w = filtered ? r.walkShape() : null;
  const select = `d.seq AS seq, CASE WHEN 1${w?.tested ?? ""} THEN ${test} ELSE 0 END AS ok`;
  const selectArgs = [...(w?.testedArgs ?? []), ...testArgs];
  const limit = Math.ceil(Math.min(budget, Number.MAX_SAFE_INTEGER));
  // A walk in the list's order (the shape's own order: one assignee's range of the assignee index).
  const walked =
    w !== null && w.order !== r.orderBy
      ? { sql: `SELECT ${select} FROM deals d${w.indexed} WHERE d.tenant_id = ?${w.served} ORDER BY ${w.order} LIMIT ?`, args: [...selectArgs, r.tenantId, ...w.servedArgs, limit] }
      : r.inOrder({ select, selectArgs, where: w?.served ?? "", whereArgs: w?.servedArgs ?? [], limit });
  const found = seqsOf(r.reads.stmt(`SELECT seq FROM (${walked.sql}) WHERE ok LIMIT ?`).values(...walked.args, wanted));
  return found.length < wanted ? null : found.slice(r.offset);
}

/**
 * Sort fallback: the page of a set of rowids (the matches), each looked up, then the few sorted.
 * Its cost is the set's size, wherever the matches lie along the order. CROSS JOIN pins that
 * order, which the planner, without statistics, may otherwise turn into a walk of the whole index.
 */
export function sortedPage(r: ListRequest, set: string, setArgs: Array<string | number>): number[] {
  return seqsOf(
    r.reads
      .stmt(`SELECT d.seq FROM (${set}) m CROSS JOIN deals d ON d.seq = m.seq WHERE d.tenant_id = ?${r.filterSql} ORDER BY ${r.orderBy} LIMIT ? OFFSET ?`)
      .values(...setArgs, r.tenantId, ...r.args, r.q.size, r.offset),
  );
}

/** The strategies one search can take; the plan's choice picks one, a walk that gives up falls back to sorting. */
export interface PageReaders {
  indexWalk(budget: number): number[] | null;
  bucketWalk?(maxEntries: number): number[] | null;
  sort(): number[];
}

export function readPage(choice: PageChoice, read: PageReaders): number[] {
  if (choice.by === "index walk") return read.indexWalk(choice.budget) ?? read.sort();
  if (choice.by === "bucket walk" && read.bucketWalk) {
    const walked = read.bucketWalk(choice.maxEntries);
    // Unbudgeted, the bucket walk must answer on its own.
    if (!walked && !Number.isFinite(choice.maxEntries)) throw new Error("the bucket walk gave up without a budget");
    return walked ?? read.sort();
  }
  return read.sort();
}
