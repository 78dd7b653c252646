import { type Db, writeTx } from "./database";

/**
 * The deal search's full-text index (deals_fts, FTS5) is a stack of segments: every write
 * transaction adds a small one, and merges fold them into bigger ones so a search reads few.
 * FTS5's own merging runs inside the writing transaction: its incremental "automerge" (every 64
 * leaf pages written, 64 pages a level of the index, about 40 ms at a million deals) and its
 * "crisis merge" (a level that reaches `crisismerge` segments merged whole, at once: 190–307 ms
 * of CPU in one import batch of 32 deals). Schema version 32 turns the automerge off, so deal
 * writes never merge, and raises the crisis threshold to a backstop; the merging is done here
 * instead, in steps of the writer's idle time (the server's background upkeep, the live seed
 * between its batches), each a transaction of `merge` work sized to a few milliseconds.
 */

/** How long one merge step may hold the writer, in ms (the rule is 50 for any write transaction). */
export const MERGE_STEP_MS = 10;
/** Pages a step writes at least and at most (a page is about 4 KB of index). */
const MIN_PAGES = 8;
const MAX_PAGES = 2_000;

/** What a page of merge output costs, in ms, learnt from the steps so far (one index, one process). */
let msPerPage = 0.1;

/**
 * One bounded step of FTS5's incremental merge on deals_fts, in its own write transaction: about
 * `budgetMs` of work (its page count sized from the steps before). Answers the pages it was given,
 * or 0 when it merged nothing: no level holds `usermerge` segments and no merge is under way, so
 * the index is in shape until the next writes.
 */
export function ftsMergeStep(db: Db, budgetMs = MERGE_STEP_MS): number {
  const pages = Math.max(MIN_PAGES, Math.min(MAX_PAGES, Math.floor(budgetMs / msPerPage)));
  return writeTx(db, () => {
    const started = performance.now();
    if (!mergePages(db, pages)) return 0;
    // Learnt from steps that merged (one that ran out of work early makes the pace look faster
    // for a step or two; the next full one corrects it).
    const spent = performance.now() - started;
    msPerPage = Math.min(5, Math.max(0.005, 0.7 * msPerPage + (0.3 * spent) / pages));
    return pages;
  });
}

/** About `pages` pages of merge work in the caller's transaction; whether there was any to do. */
function mergePages(db: Db, pages: number): boolean {
  const before = totalChanges(db);
  db.run("INSERT INTO deals_fts (deals_fts, rank) VALUES ('merge', ?1)", [pages]);
  // FTS5 documents this test: a merge that found nothing to do changed fewer than two rows.
  return totalChanges(db) - before >= 2;
}

function totalChanges(db: Db): number {
  return (db.query("SELECT total_changes() AS n").get() as { n: number }).n;
}

/** Merges until the index is in shape, every step its own transaction (tests). Answers the steps taken. */
export function mergeAll(db: Db, budgetMs = MERGE_STEP_MS): number {
  let steps = 0;
  while (ftsMergeStep(db, budgetMs) > 0) steps++;
  return steps;
}

/**
 * Merges until the index is in shape inside the caller's transaction: the bulk seed's end, which
 * holds the file for its whole load anyway (its search index is otherwise left in as many
 * segments as its writes made, up to `crisismerge` a level, for the server's steps to merge).
 */
export function mergeAllInside(db: Db): void {
  while (mergePages(db, MAX_PAGES));
}
