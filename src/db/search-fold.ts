import { walCatchUp } from "./checkpointer";
import { type Db, writeTx } from "./database";
import { runAs } from "./stall-monitor";
import { FoldTally, type Pending, nextChunkRows } from "./fold-tally";
import { ftsMergeStep } from "./fts-merge";
import { dropOldestPending, forgetSweep, sweepStep, sweeping } from "./search-sweep";

/**
 * The deal search counters' fold (schema version 15). A deal write appends its counted state to
 * deal_search_pending (-1 for the state it leaves, +1 for the one it enters) instead of updating
 * deal_gram_counts and deal_key_grams itself; one fold step takes an organization's oldest pending
 * rows, adds their grams up in memory (the pieces the bulk seed's tallies count: gramsOf,
 * trigramsOf), writes each changed counter once and deletes the rows, in one transaction: a reader
 * sees the rows or their fold, never both or neither (it adds what is pending to the counters),
 * and a killed process leaves one or the other. An edit's -1 and +1 cancel on every piece it kept,
 * and rows of one stage and assignee share their common pieces, so a counter is written once a step.
 */

/**
 * How long one step may hold the writer, in ms: it folds rows in chunks, each sized from the time
 * the rows before it took, and commits once the next chunk would pass this (at least one row).
 * A row costs 0.3-2 ms (its ~110 grams and ~140 key grams, upserted at random in tables of
 * millions of rows), and the commit writes every page they touched, which the pace does not see:
 * steps of a bulk change's rows reached 74 ms at p99. An organization with SWEEP_FROM_ROWS pending
 * rows or more is swept instead (search-sweep.ts), so a step here folds fewer than that.
 */
export const FOLD_STEP_MS = 10;
/** A deleted organization's pending rows dropped a step (5,000 took 6 ms on a file, commit included). */
export const DROPPED_ROWS_STEP = 5_000;
/**
 * The most rows an organization's job may leave pending: each 1-3 letter search of it adds them up
 * (38 ms at 200,000 on a 1M-deal file; the target is 100), and a bulk change leaves two a deal.
 */
export const DEFER_ROWS_MAX = 300_000;
/** Where the next step starts: organizations take turns, so one that writes without pause cannot starve the others. */
let lastTenant = "";

/**
 * One fold step for the next organization with pending rows (they take turns): a step of its
 * sweep when it has a burst of them (search-sweep.ts), else its oldest rows folded into the
 * counters in chunks for up to `budgetMs` (at least one row), then deleted, in one write
 * transaction. Answers how many rows it folded or swept through (0: nothing was pending).
 */
export function foldSearchCounters(db: Db, budgetMs = FOLD_STEP_MS, now = Date.now()): number {
  const tenantId = nextTenant(db, now);
  if (tenantId === null) return 0;
  lastTenant = tenantId;
  // A deleted organization's deals append rows as they cascade away; its counters (and sweep) went
  // with it. Its rows go DROPPED_ROWS_STEP a step: one statement for all of them held the writer
  // for as long as the organization had rows pending (20,000 took 39 ms; a bulk change leaves 200,000).
  if (!db.query("SELECT 1 AS x FROM tenants WHERE id = ?1").get(tenantId)) {
    forgetSweep(db, tenantId);
    return writeTx(db, () => dropOldestPending(db, tenantId, Number.MAX_SAFE_INTEGER, DROPPED_ROWS_STEP).dropped);
  }
  if (sweeping(db, tenantId)) return sweepStep(db, tenantId, budgetMs);
  return foldOldest(db, tenantId, budgetMs);
}

/**
 * The next organization with pending rows after the last one folded, in turn, skipping those with
 * a job running (an import, a bulk change and its undo): their rows wait for the job's end, when
 * a sweep takes them together. Folded as they came, they took the job's thread turns: 30,000
 * deals imported beside 1.1M took 20.9 s with the fold beside them, of which the import's own
 * batches were 8.6 s of CPU (bench/probes/import-batch-cost.ts with PROBE_UPKEEP=1). Each
 * organization is found by one seek of the pending rows' key and one of the running-job index.
 * Past DEFER_ROWS_MAX rows pending, an organization is folded whatever runs.
 */
function nextTenant(db: Db, now: number): string | null {
  const after = db.query("SELECT tenant_id FROM deal_search_pending WHERE tenant_id > ?1 LIMIT 1");
  // A running job of the organization, or a seed beside the server (holdFold): while one writes,
  // every organization's rows wait, since a step reads counter pages that each of the seed's commits
  // made stale (a step of one row held the event loop 78-82 ms beside a seed); few pile up meanwhile.
  const busy = db.query(
    "SELECT 1 AS x FROM crm_jobs WHERE tenant_id = ?1 AND status = 'running' AND lease_until > ?2 UNION ALL SELECT 1 FROM deal_search_holds WHERE until > ?2 LIMIT 1",
  );
  // The organization's pending rows, counted by two seeks: their ids are 1, 2, ... per organization,
  // removed oldest first. Two subqueries: SQLite seeks for a lone min() or max() only; both in one
  // SELECT read every pending row (10-25 ms at 100,000, on every tick of the upkeep during an import).
  const pendingSpan = db.query(
    `SELECT coalesce((SELECT max(id) FROM deal_search_pending WHERE tenant_id = ?1)
                   - (SELECT min(id) FROM deal_search_pending WHERE tenant_id = ?1) + 1, 0) AS n`,
  );
  let from = lastTenant;
  let wrapped = false;
  for (;;) {
    const row = after.get(from) as { tenant_id: string } | null;
    if (!row) {
      if (wrapped || from === "") return null;
      wrapped = true;
      from = "";
      continue;
    }
    if (wrapped && row.tenant_id > lastTenant) return null;
    if (!busy.get(row.tenant_id, now)) return row.tenant_id;
    // Jobs back to back (an import a minute) would let the rows pile up: past the bound they are folded anyway.
    const span = pendingSpan.get(row.tenant_id) as { n: number };
    if (span.n >= DEFER_ROWS_MAX) return row.tenant_id;
    from = row.tenant_id;
  }
}

/**
 * Until `until` (ms since the epoch) the fold leaves pending rows alone: the organization's, as
 * while it has a job running, and the others' too (their few rows wait for the seed's end). A
 * writer in another process (`suite seed` beside the server) calls this as it goes, inside its own
 * transactions, and releaseFold when it ends; its rows are then swept together. Killed, it stops
 * renewing and the hold runs out. Past DEFER_ROWS_MAX rows an organization is folded anyway.
 */
export function holdFold(db: Db, tenantId: string, until: number): void {
  db.run("INSERT INTO deal_search_holds (tenant_id, until) VALUES (?1, ?2) ON CONFLICT (tenant_id) DO UPDATE SET until = excluded.until", [tenantId, until]);
}

/** The organization's hold ends: its pending rows are folded (swept) from the fold's next step. */
export function releaseFold(db: Db, tenantId: string): void {
  db.run("DELETE FROM deal_search_holds WHERE tenant_id = ?1", [tenantId]);
}

/** The organization's oldest pending rows folded and deleted in one write transaction of about `budgetMs`. */
function foldOldest(db: Db, tenantId: string, budgetMs: number): number {
  return writeTx(db, () => {
    const started = performance.now();
    const chunkOf = db.query("SELECT id, sign, stage, assigned_to, search_text, title_key, account_key, contact_key FROM deal_search_pending WHERE tenant_id = ?1 AND id > ?2 ORDER BY id LIMIT ?3");
    let last = 0;
    let folded = 0;
    let size = 1;
    for (;;) {
      const rows = chunkOf.all(tenantId, last, size) as Pending[];
      if (rows.length === 0) break;
      const tally = new FoldTally();
      for (const p of rows) tally.add(p);
      tally.write(db, tenantId);
      last = rows[rows.length - 1]!.id;
      folded += rows.length;
      if (rows.length < size) break;
      size = nextChunkRows(folded, performance.now() - started, budgetMs);
      if (size < 1) break;
    }
    db.run("DELETE FROM deal_search_pending WHERE tenant_id = ?1 AND id <= ?2", [tenantId, last]);
    return folded;
  });
}

/** How many rows are pending fold, for one organization or all. */
export function pendingSearchRows(db: Db, tenantId?: string): number {
  const q = tenantId === undefined ? db.query("SELECT count(*) AS n FROM deal_search_pending").get() : db.query("SELECT count(*) AS n FROM deal_search_pending WHERE tenant_id = ?1").get(tenantId);
  return (q as { n: number }).n;
}

/** Folds until nothing is pending (tests, the seed, a migration's end): every step its own transaction. */
export function foldAll(db: Db): number {
  let total = 0;
  for (let n = foldSearchCounters(db); n > 0; n = foldSearchCounters(db)) total += n;
  return total;
}

export interface SearchFolder {
  /** Stops folding (before the database closes); what is pending stays for the next start. */
  stop(): void;
}

/**
 * The server's background fold, and the full-text index's merge (fts-merge.ts): one step, then the
 * next after a macrotask (requests queued meanwhile run between steps) while either has work, else
 * a look every `idleMs`. A step that fails (the writer busy past its timeout) is retried at the next look.
 */
/** The connection's busy timeout (database.ts), given back after each step. */
const BUSY_TIMEOUT_MS = 5000;
/** The next try after another process held the writer. */
const BUSY_RETRY_MS = 20;

export function startSearchFold(db: Db, idleMs = 250, log: (message: string) => void = () => {}): SearchFolder {
  let timer: ReturnType<typeof setTimeout> | null = null;
  let stopped = false;
  let mergeFirst = false;
  const tick = () => {
    timer = null;
    if (stopped) return;
    let again = false;
    let busy = false;
    // The fold never waits for another process's writer (a `suite seed` beside the server): the
    // wait would be SQLite's busy handler sleeping on the event loop, every request behind it (a
    // fold step waited 541 ms for the seed's lock). Busy: the next try comes a little later.
    db.run("PRAGMA busy_timeout = 0");
    try {
      // Named in the stall monitor's warnings (a timer runs outside any request's work). The fold
      // and the full-text index's merge (fts-merge.ts) take turns, a step each tick, the one whose
      // turn it is first: an import keeps the fold busy, and its segments need merging meanwhile.
      const fold = () => runAs("job search fold", () => foldSearchCounters(db)) > 0;
      const merge = () => runAs("job search index merge", () => ftsMergeStep(db)) > 0;
      mergeFirst = !mergeFirst;
      again = mergeFirst ? merge() || fold() : fold() || merge();
    } catch (e) {
      busy = e instanceof Error && /database is locked|SQLITE_BUSY/i.test(e.message);
      if (!busy) log(`search counters fold or search index merge failed, retrying: ${e instanceof Error ? e.message : String(e)}`);
    } finally {
      db.run(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    }
    const schedule = () => {
      if (stopped) return;
      timer = setTimeout(tick, busy ? BUSY_RETRY_MS : again ? 1 : idleMs);
      timer.unref?.();
    };
    // Steps back to back write the WAL as a job's batches do: the checkpointer copies it between them.
    if (again) void walCatchUp(db.filename).then(schedule, schedule);
    else schedule();
  };
  timer = setTimeout(tick, 0);
  timer.unref?.();
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
