import { type Db, writeTx } from "./database";
import { addCounterRows, writeGramRows } from "./deal-grams";
import { writeKeyGramRows } from "./deal-key-grams";
import { FoldTally, type Pending } from "./fold-tally";

/**
 * The sweep of the deal search's counters (schema version 34). The fold (search-fold.ts) took an
 * organization's oldest pending rows a few at a time and upserted each one's ~110 gram and ~140
 * key counters at random places in tables of millions of rows: 1.6 ms of CPU a row at a million
 * deals, so a bulk change of 100k deals (200k rows) kept the server folding for about 6.5 minutes
 * (bench/probes/sweep-after-bulk.ts), its steps up to 88 ms long, and every 1-3 letter search of
 * the organization added all those rows up meanwhile (37 ms).
 *
 * A sweep covers up to SWEEP_ROWS of them and goes through four phases, each a series of short steps:
 * 1. begin: a row in deal_search_sweeps names the last pending row it covers (upto_id);
 * 2. tally: the rows are read and added up in memory (fold-tally.ts), then handed, a slice a step,
 *    to this connection's temporary tables, which keep them in key order (a transaction of the
 *    temporary database alone takes no lock on the database's writer);
 * 3. write: deal_gram_counts, then deal_key_grams, get the tally's rows in key order, a slice a
 *    transaction, each moving the sweep's cursor (the last key written) in the same transaction;
 *    rows of many deals share keys (a stage's grams): 100k rows came to about 200k upserts, each
 *    next to the one before;
 * 4. delete: the covered pending rows, a slice a transaction; the last one ends the sweep.
 * A reader adds a covered row only where its counter's key is past the cursor (deals-search-terms.ts,
 * deals-text-walk.ts), so every total is exact between any two steps. A killed process loses the
 * tally only: the covered rows are still there, added up again, and the writes go on from the
 * cursor. The same 200k rows: 19 s, steps of 10 ms (32 ms at most).
 */

/** Pending rows of an organization from which its fold sweeps (under: a step or two of folding; 300 rows took three of 80 ms). */
export const SWEEP_FROM_ROWS = 64;
/** Rows one sweep covers at most (a tally's keys stop growing much past this many rows' texts: 230k for 100k rows). */
export const SWEEP_ROWS = 50_000;
/** Rows (tally, delete) or keys (write) of a step's first slice; the next ones are sized from its pace. */
const FIRST_SLICE = 64;
/** A tally's first slice: a row is ~250 keys added up (0.1-0.3 ms), a step's first slice must fit its budget. */
const FIRST_TALLY_SLICE = 8;
const MAX_SLICE = 8_192;

type Sweep = {
  upto_id: number;
  grams_done: number;
  gram: string;
  gram_stage: string;
  gram_assignee: string;
  keys_done: number;
  key_ord: string;
  key_gram: string;
  key_bucket: string;
};

/**
 * Where this connection's tally of an organization's sweep stands: rows are added up in memory
 * (a Map: 40-70 µs a row) and handed to the temporary tables a bounded slice at a time once the
 * Map holds TALLY.keys rows or every covered row is read. Each covered row's ~100 keys upserted
 * into the tables one row at a time cost 150-170 µs a row; added up over thousands of rows first,
 * most keys are shared (a stage's grams): 50,000 deals' rows came to 230,000 keys.
 */
type Tallied = { upto: number; readThrough: number; read: boolean; tally: FoldTally; handing: { grams: Array<string | number>; keys: Array<string | number>; at: number } | null; complete: boolean };
const talliesOf = new WeakMap<Db, Map<string, Tallied>>();
/** Keys the Map holds at most before they go to the tables (a bound on its memory and the garbage it leaves: docs/decisions.md; tests lower it to hand over often). */
export const TALLY = { keys: 65_536 };
/** Keys a statement hands over (addCounterRows' batch), the slice of a step's handing. */
const HAND_KEYS = 200;
/**
 * What one write step does at most, rows deleted or keys written, whatever the pace: its commit
 * (not in the pace) writes every page it changed (a 25,000-row delete step held the writer 60 ms;
 * 4,096 keys spread over the counters, a small sweep's, 80 ms). Learnt from whole steps, commit
 * included: halved after a step over twice its budget, grown by a quarter after one within it.
 */
const stepCap = { write: 512, delete: 1_024 };
/** A new sweep's write steps start from this cap again: how its keys spread over the counters (their pages) is its own. */
const FIRST_WRITE_CAP = 512;
const MAX_STEP_ROWS = 8_192;
function learnCap(kind: "write" | "delete", ms: number, budgetMs: number): void {
  if (ms > 2 * budgetMs) stepCap[kind] = Math.max(FIRST_SLICE, stepCap[kind] >> 1);
  else if (ms <= budgetMs) stepCap[kind] = Math.min(MAX_STEP_ROWS, Math.ceil(stepCap[kind] * 1.25));
}

/** Connections whose temporary tally tables exist (made once per connection, not per step). */
const withTables = new WeakSet<Db>();
function tallyTables(db: Db): void {
  if (withTables.has(db)) return;
  db.run("CREATE TEMP TABLE IF NOT EXISTS sweep_grams (tenant_id TEXT NOT NULL, gram TEXT NOT NULL, stage TEXT NOT NULL, assignee TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (tenant_id, gram, stage, assignee)) WITHOUT ROWID");
  db.run("CREATE TEMP TABLE IF NOT EXISTS sweep_keys (tenant_id TEXT NOT NULL, ord TEXT NOT NULL, gram TEXT NOT NULL, bucket TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (tenant_id, ord, gram, bucket)) WITHOUT ROWID");
  withTables.add(db);
}

const sweepOf = (db: Db, tenantId: string) => db.query("SELECT * FROM deal_search_sweeps WHERE tenant_id = ?1").get(tenantId) as Sweep | null;

/** Whether the organization's fold sweeps: a sweep under way, or a burst of pending rows. */
export function sweeping(db: Db, tenantId: string): boolean {
  if (sweepOf(db, tenantId)) return true;
  const n = db.query("SELECT count(*) AS n FROM (SELECT 1 FROM deal_search_pending WHERE tenant_id = ?1 LIMIT ?2)").get(tenantId, SWEEP_FROM_ROWS) as { n: number };
  return n.n >= SWEEP_FROM_ROWS;
}

/** A slice's next size: what is left of the budget at the pace so far, at most doubling, within bounds (0: the step is over). */
function nextSlice(done: number, spentMs: number, budgetMs: number): number {
  const byPace = Math.floor(((budgetMs - spentMs) * done) / Math.max(spentMs, 0.001));
  return byPace < 1 ? 0 : Math.min(MAX_SLICE, done, byPace);
}

/**
 * One step of the organization's sweep (begun here when there is none), about `budgetMs` long.
 * Answers the rows or keys it went through (at least 1).
 */
export function sweepStep(db: Db, tenantId: string, budgetMs: number): number {
  tallyTables(db);
  const sweep = sweepOf(db, tenantId);
  if (!sweep) return begin(db, tenantId);
  let tallies = talliesOf.get(db);
  if (!tallies) talliesOf.set(db, (tallies = new Map()));
  let tallied = tallies.get(tenantId);
  if (!tallied || tallied.upto !== sweep.upto_id) {
    // A new sweep, or one begun before this process (or connection) started: added up from its first row.
    forget(db, tenantId);
    tallies.set(tenantId, (tallied = { upto: sweep.upto_id, readThrough: 0, read: false, tally: new FoldTally(), handing: null, complete: false }));
  }
  if (!(sweep.grams_done && sweep.keys_done) && !tallied.complete) return tallyStep(db, tenantId, tallied, budgetMs);
  const started = performance.now();
  if (!sweep.grams_done || !sweep.keys_done) {
    const keys = writeStep(db, tenantId, sweep.upto_id, budgetMs);
    learnCap("write", performance.now() - started, budgetMs);
    return keys;
  }
  const n = deleteStep(db, tenantId, sweep.upto_id, budgetMs);
  learnCap("delete", performance.now() - started, budgetMs);
  if (!sweepOf(db, tenantId)) {
    // Over: what is left of the tally (keys whose changes added up to 0) goes too.
    forget(db, tenantId);
    tallies.delete(tenantId);
  }
  return n;
}

/** Phase 1: the sweep covers the organization's oldest pending rows, SWEEP_ROWS at most (ids are distinct integers). */
function begin(db: Db, tenantId: string): number {
  return writeTx(db, () => {
    // A seek each (one SELECT of both reads every pending row: search-fold.ts, pendingSpan).
    const r = db
      .query("SELECT (SELECT min(id) FROM deal_search_pending WHERE tenant_id = ?1) AS lo, (SELECT max(id) FROM deal_search_pending WHERE tenant_id = ?1) AS hi")
      .get(tenantId) as { lo: number | null; hi: number | null };
    if (r.lo === null || r.hi === null) return 0;
    db.run("INSERT INTO deal_search_sweeps (tenant_id, upto_id) VALUES (?1, ?2)", [tenantId, Math.min(r.hi, r.lo + SWEEP_ROWS - 1)]);
    stepCap.write = FIRST_WRITE_CAP;
    return 1;
  });
}

/**
 * Phase 2: the next covered rows added up in memory, or the Map's rows handed to the temporary
 * tables (a transaction of the temporary database alone: no lock on the database's writer).
 */
function tallyStep(db: Db, tenantId: string, tallied: Tallied, budgetMs: number): number {
  const started = performance.now();
  if (tallied.handing) {
    const h = tallied.handing;
    let done = 0;
    while (h.at < h.grams.length + h.keys.length && (done === 0 || performance.now() - started < budgetMs)) {
      const inGrams = h.at < h.grams.length;
      const from = inGrams ? h.at : h.at - h.grams.length;
      const rows = (inGrams ? h.grams : h.keys).slice(from, from + HAND_KEYS * 4);
      db.transaction(() => addCounterRows(db, inGrams ? "temp.sweep_grams" : "temp.sweep_keys", inGrams ? ["gram", "stage", "assignee"] : ["ord", "gram", "bucket"], tenantId, rows))();
      h.at += rows.length;
      done += rows.length / 4;
    }
    if (h.at >= h.grams.length + h.keys.length) {
      tallied.handing = null;
      tallied.complete = tallied.read;
    }
    return Math.max(1, done);
  }
  const read = db.query("SELECT id, sign, stage, assigned_to, search_text, title_key, account_key, contact_key FROM deal_search_pending WHERE tenant_id = ?1 AND id > ?2 AND id <= ?3 ORDER BY id LIMIT ?4");
  let done = 0;
  for (let size = FIRST_TALLY_SLICE; size > 0 && tallied.tally.size < TALLY.keys; size = nextSlice(done, performance.now() - started, budgetMs)) {
    const rows = read.all(tenantId, tallied.readThrough, tallied.upto, size) as Pending[];
    tallied.tally.addAll(rows);
    done += rows.length;
    if (rows.length > 0) tallied.readThrough = rows[rows.length - 1]!.id;
    if (rows.length < size) {
      tallied.read = true;
      break;
    }
  }
  if (tallied.read || tallied.tally.size >= TALLY.keys) {
    tallied.handing = { ...tallied.tally.flat(), at: 0 };
    tallied.tally = new FoldTally();
  }
  return Math.max(1, done);
}

/**
 * Phase 3: the tally's next keys added to the counters in key order (deal_gram_counts, then
 * deal_key_grams), the cursor moved in the same transaction, and those keys dropped from the tally.
 */
function writeStep(db: Db, tenantId: string, upto: number, budgetMs: number): number {
  return writeTx(db, () => {
    const started = performance.now();
    // Read again inside the transaction: another connection may have swept on meanwhile.
    const sweep = sweepOf(db, tenantId);
    if (!sweep || sweep.upto_id !== upto) return 1;
    const grams = !sweep.grams_done;
    const [table, cols, cursor] = grams
      ? (["sweep_grams", ["gram", "stage", "assignee"], [sweep.gram, sweep.gram_stage, sweep.gram_assignee]] as const)
      : (["sweep_keys", ["ord", "gram", "bucket"], [sweep.key_ord, sweep.key_gram, sweep.key_bucket]] as const);
    const key = cols.join(", ");
    const next = db.query(`SELECT ${key}, n FROM temp.${table} WHERE tenant_id = ?1 AND (${key}) > (?2, ?3, ?4) AND n <> 0 ORDER BY ${key} LIMIT ?5`);
    let at: [string, string, string] = [cursor[0], cursor[1], cursor[2]];
    let done = 0;
    let finished = false;
    for (let size = Math.min(FIRST_SLICE, stepCap.write); size > 0; size = Math.min(stepCap.write - done, nextSlice(done, performance.now() - started, budgetMs))) {
      const rows = next.values(tenantId, at[0], at[1], at[2], size) as Array<[string, string, string, number]>;
      if (rows.length > 0) {
        const flat = rows.flat();
        if (grams) writeGramRows(db, tenantId, flat);
        else writeKeyGramRows(db, tenantId, flat);
        const last = rows[rows.length - 1]!;
        db.run(`DELETE FROM temp.${table} WHERE tenant_id = ?1 AND (${key}) > (?2, ?3, ?4) AND (${key}) <= (?5, ?6, ?7)`, [tenantId, ...at, last[0], last[1], last[2]]);
        at = [last[0], last[1], last[2]];
        done += rows.length;
      }
      if (rows.length < size) {
        finished = true;
        break;
      }
    }
    if (grams) db.run("UPDATE deal_search_sweeps SET gram = ?2, gram_stage = ?3, gram_assignee = ?4, grams_done = ?5 WHERE tenant_id = ?1", [tenantId, ...at, finished ? 1 : 0]);
    else db.run("UPDATE deal_search_sweeps SET key_ord = ?2, key_gram = ?3, key_bucket = ?4, keys_done = ?5 WHERE tenant_id = ?1", [tenantId, ...at, finished ? 1 : 0]);
    return Math.max(1, done);
  });
}

/** Phase 4: the covered rows deleted, oldest first; the transaction that deletes the last ends the sweep. */
function deleteStep(db: Db, tenantId: string, upto: number, budgetMs: number): number {
  return writeTx(db, () => {
    const started = performance.now();
    let done = 0;
    for (let size = Math.min(FIRST_SLICE, stepCap.delete); size > 0; size = Math.min(stepCap.delete - done, nextSlice(done, performance.now() - started, budgetMs))) {
      const { dropped, more } = dropOldestPending(db, tenantId, upto, size);
      done += dropped;
      if (!more) {
        db.run("DELETE FROM deal_search_sweeps WHERE tenant_id = ?1", [tenantId]);
        break;
      }
    }
    return Math.max(1, done);
  });
}

/**
 * The organization's oldest pending rows up to id `upto`, `rows` of them at most, deleted in the
 * caller's transaction (a sweep's last phase, and a deleted organization's rows). `more`: rows up
 * to `upto` may be left (the slice was full).
 */
export function dropOldestPending(db: Db, tenantId: string, upto: number, rows: number): { dropped: number; more: boolean } {
  const last = db.query("SELECT id FROM deal_search_pending WHERE tenant_id = ?1 AND id <= ?2 ORDER BY id LIMIT 1 OFFSET ?3").get(tenantId, upto, rows - 1) as { id: number } | null;
  const dropped = db.query("DELETE FROM deal_search_pending WHERE tenant_id = ?1 AND id <= ?2").run(tenantId, last?.id ?? upto).changes;
  return { dropped, more: last !== null };
}

/** Drops what this connection added up for a deleted organization's sweep (its row went with it). */
export function forgetSweep(db: Db, tenantId: string): void {
  if (!talliesOf.get(db)?.delete(tenantId)) return;
  tallyTables(db);
  forget(db, tenantId);
}

/** Drops this connection's tally of the organization (a sweep it no longer matches). */
function forget(db: Db, tenantId: string): void {
  db.transaction(() => {
    db.run("DELETE FROM temp.sweep_grams WHERE tenant_id = ?1", [tenantId]);
    db.run("DELETE FROM temp.sweep_keys WHERE tenant_id = ?1", [tenantId]);
  })();
}
