import { type Db, writeTx } from "./database";
import { walCatchUp } from "./checkpointer";
import { ftsLevels } from "./fts-structure";

/**
 * The deal search's full-text index (deals_fts, FTS5) is a stack of segments: every write
 * transaction adds a small one, and merges fold them into bigger ones so a search reads few.
 * FTS5's own merging runs inside the writing transaction: its incremental "automerge" (every 64
 * leaf pages written, 64 pages a level of the index) and its "crisis merge" (a level that reaches
 * `crisismerge` segments merged whole, at once: up to 103 ms of CPU in one import batch at a
 * million deals; 45 ms with the crisis merge at 64 and the automerge left on). Schema version 32
 * turns the automerge off, so deal writes never merge, and raises the crisis threshold to a
 * backstop; the merging is done here instead, in steps of the writer's idle time (the server's
 * background upkeep, the live seed between its batches, the bulk seed at its end).
 *
 * A step's bound is FTS5's: `merge` stops only between two terms, so a common trigram's whole
 * doclist is merged at once, however many pages it takes (at a million deals most steps take
 * 10-15 ms; one in a few hundred took 80 ms of CPU). docs/decisions.md, "Full-text index merging".
 */

/** How long one merge step may hold the writer, in ms (the rule is 50 for any write transaction). */
export const MERGE_STEP_MS = 10;
/**
 * Pages a chunk of a step is given, at least and at most (a page is about 4 KB of index, 50-60 µs
 * of merging at a million deals on an idle core). A step runs chunks until its time is spent, so
 * it ends within a chunk of its budget whatever the estimate of a page's cost says.
 */
export const MIN_CHUNK_PAGES = 16;
const MAX_CHUNK_PAGES = 128;

/** What a page of merge output costs, in ms, learnt from the chunks so far (one index, one process). */
let msPerPage = 0.1;

/**
 * One bounded step of FTS5's incremental merge on deals_fts, in its own write transaction: chunks
 * of `merge` work, each sized from the pace of those before, until `budgetMs` is spent (one chunk
 * at least). Answers the pages its chunks were given, or 0 when there was nothing to merge: no
 * level holds `usermerge` segments and no merge is under way, so the index is in shape until the
 * next writes.
 */
export function ftsMergeStep(db: Db, budgetMs = MERGE_STEP_MS): number {
  return writeTx(db, () => mergeStepInside(db, budgetMs));
}

/** ftsMergeStep's work inside the caller's write transaction (the live seed times its transactions itself). */
export function mergeStepInside(db: Db, budgetMs = MERGE_STEP_MS): number {
  const started = performance.now();
  let given = 0;
  for (;;) {
    const left = budgetMs - (performance.now() - started);
    if (given > 0 && left <= 0) break;
    const pages = chunkPages(given, left, msPerPage);
    const t = performance.now();
    const changed = mergePages(db, pages);
    // FTS5 documents this test: a merge that found nothing to do changed fewer than two rows.
    if (changed < 2) break;
    given += pages;
    // A page merged is about two rows changed (written to the new segment, trimmed from an
    // input): the pace is learnt per page done, so a chunk that ran out of work early (a small
    // level merged) does not make pages look cheap (steps of 294 ms followed from that).
    const done = Math.max(1, Math.min(pages, changed / 2));
    msPerPage = Math.min(5, Math.max(0.005, 0.7 * msPerPage + (0.3 * (performance.now() - t)) / done));
  }
  return given;
}

/**
 * A step's next chunk, in pages: what is left of the budget at the learnt pace, between the
 * bounds, and at most what the step was given so far (its first chunk the least): the pace is
 * learnt on cached pages, and after another process's commit (`suite seed` beside the server)
 * SQLite reads every page again, so a step sized at the cached pace ran 270 ms.
 */
export function chunkPages(given: number, leftMs: number, pace: number): number {
  const byPace = Math.max(MIN_CHUNK_PAGES, Math.min(MAX_CHUNK_PAGES, Math.floor(leftMs / pace)));
  return Math.min(byPace, Math.max(MIN_CHUNK_PAGES, given));
}

/** About `pages` pages of merge work in the caller's transaction; the rows it changed (under 2: nothing to merge). */
function mergePages(db: Db, pages: number): number {
  const before = totalChanges(db);
  db.run("INSERT INTO deals_fts (deals_fts, rank) VALUES ('merge', ?1)", [pages]);
  return totalChanges(db) - before;
}

function totalChanges(db: Db): number {
  return (db.query("SELECT total_changes() AS n").get() as { n: number }).n;
}

/** FTS5's `crisismerge` as schema version 32 sets it: a level reaching it is merged whole, inside the writing transaction. */
export const CRISIS_MERGE = 64;
/** Segments a level may hold before a job's pause merges: half the crisis threshold. */
export const CRISIS_GUARD = CRISIS_MERGE / 2;

/**
 * A job's pause between its batches (imports, bulk changes): the checkpointer's catch-up, then a
 * merge step when a level of the search index nears CRISIS_MERGE. A batch writes one segment, and
 * where the server's upkeep does not merge in time (a test app has none; a busy upkeep) the batch
 * that wrote the 64th segment merged the level whole: 12-16 ms of an import's batch alone, over
 * 50 under CI's load. A step merges `usermerge` (4) segments at least, a batch adds one, so a level
 * never gets there.
 */
export async function jobPause(db: Db): Promise<void> {
  await walCatchUp(db.filename);
  if (nearCrisis(db)) ftsMergeStep(db);
}

/** Whether a level of the search index holds CRISIS_GUARD segments or more. */
function nearCrisis(db: Db): boolean {
  return fullestLevel(db) >= CRISIS_GUARD;
}

/** The segments of the search index's fullest level (one structure record read: a few µs). */
export function fullestLevel(db: Db): number {
  return Math.max(0, ...ftsLevels(db, "deals_fts").map((l) => l.segments.length));
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
  while (mergePages(db, 2_000) >= 2);
}

/**
 * The level a bulk load's index is written at, at least. FTS5 merges a level once it holds
 * `usermerge` (4) segments, and its 'optimize' writes its one segment a level above the highest the
 * index has had: a new file's bulk-loaded index ended at level 2, where the small segments of later
 * writes arrived after a few hundred transactions, and each time a level filled it was rewritten
 * whole with them (50,000 pages at a million deals, about 3 s of the upkeep's steps, three times in
 * a bulk change of 100k deals and its undo). Written above this level, it sits where the writes'
 * segments never climb to (4^16 transactions); they merge among themselves below it, and FTS5's own
 * rule pulls it down to merge with them once one of theirs has grown as big as it is.
 */
export const PARKED_LEVEL = 16;

/**
 * Prepares an empty index for a bulk load that ends with `optimize` (the answer, to call in the
 * same transaction after the load), so that the load's segment lands above PARKED_LEVEL; null when
 * the index holds anything (its levels are then left to the merge steps, as before). While empty,
 * the index is raised by `optimize`s of a few placeholder rows (negative rowids, which no deal has)
 * at no cost. Two FTS5 rules shape how: an optimize of segments that all share a level merges them
 * one level up only, and a flush pulls down every segment above it that is no bigger, unless a
 * merge is under way on the way up (and a load's flushes are bigger than the placeholders). So the
 * raise ends with a merge begun on the top level, which the load's flushes stop at; the answer
 * removes the placeholders and optimizes, which writes everything, the begun merge included, as one
 * segment above the top.
 */
export function parkBulkLoad(db: Db): (() => void) | null {
  if (ftsLevels(db, "deals_fts").some((l) => l.segments.length > 0)) return null;
  const add = db.prepare("INSERT INTO deals_fts (rowid, search_text, stage_token, unassigned_token) VALUES (?1, ?2, '', NULL)");
  const remove = db.prepare("INSERT INTO deals_fts (deals_fts, rowid, search_text, stage_token, unassigned_token) VALUES ('delete', ?1, ?2, '', NULL)");
  const placed: Array<[number, string]> = [];
  // Each statement's rows are flushed as a segment of their own when the next statement begins.
  const place = (text: string) => {
    const rowid = -(placed.length + 1);
    add.run(rowid, text);
    placed.push([rowid, text]);
  };
  // A few pages of distinct trigrams, so that a small placeholder's flush cannot pull it down.
  const pages = (n: number) => Array.from({ length: 600 }, (_, i) => (i * 7919 + n).toString(36)).join(" ");
  place(pages(1));
  place(pages(2));
  while (ftsLevels(db, "deals_fts").length < PARKED_LEVEL) {
    place("tiny");
    db.run("INSERT INTO deals_fts (deals_fts) VALUES ('optimize')");
  }
  // A smaller segment below the top, then an incremental optimize of one page: both on a new top
  // level, their merge begun there.
  place(pages(3).slice(0, 1000));
  db.run("INSERT INTO deals_fts (deals_fts, rank) VALUES ('merge', -1)");
  return () => {
    for (const [rowid, text] of placed) remove.run(rowid, text);
    db.run("INSERT INTO deals_fts (deals_fts) VALUES ('optimize')");
  };
}
