import { type Db, WAL_AUTOCHECKPOINT, writeTx } from "../../db/database";
import { nextStepSize } from "../../kernel/step-size";
import { mergeStepInside } from "../../db/fts-merge";
import { holdFold, releaseFold } from "../../db/search-fold";
import { startCheckpointer, walCatchUp } from "../../db/checkpointer";
import type { SeedResult, SeedTenant } from "../../crm/seed-store";
import { setDemoPassword, startSeed } from "./bulk-load";

/** Deals in the first transaction on the live path; the next ones are sized by what it took. */
const FIRST_BATCH = 50;
/**
 * The writer hold a transaction aims at (a running server's requests wait for it; the rule is 50
 * ms). A deal costs more or less through the live indexes as the file and the machine's load go
 * (0.3 to 3 ms), so the batch follows the measured time, as the import's batches do.
 */
const TARGET_MS = 15;
/** Deals a statement within a batch: the batch may stop after any piece. */
const PIECE = 10;
/** Batches' bounds: a few deals at least (progress), a few thousand at most. */
const MIN_BATCH = 5;
const MAX_BATCH = 5_000;
/**
 * The pause between two transactions: at least as long as the last one held the writer (and 10
 * ms). The server's writer that waits for the lock polls it with SQLite's busy handler, which
 * sleeps 1, 2, 5, 10, 15, 20, 25 ... ms between tries: a 2 ms gap after a long batch was mostly
 * missed, and the seed took the lock again (a neighbour's sign-in waited 977 ms). A gap as long as
 * the hold lets a poll land in it within a few tries; the seed beside a server takes about twice
 * its CPU time in wall time.
 */
const MIN_GAP_MS = 10;

/**
 * How long the seed's hold on the server's search counters' fold lasts (holdFold), renewed at half
 * of it from inside a batch: a seed that is killed stops renewing, and the organization's rows are
 * folded again within a minute.
 */
const FOLD_HOLD_MS = 60_000;

/** The pause after a transaction that held the writer `ms`. */
const gapAfter = (ms: number) => Math.max(MIN_GAP_MS, Math.min(ms, 50));

/** Runs write transactions sized by their measured time, with the pause after each; keeps the longest hold. */
export function pacer(db: Db) {
  let size = FIRST_BATCH;
  let longestMs = 0;
  let longestWhat = "";
  /**
   * One write transaction of `fn`, its hold timed from inside BEGIN IMMEDIATE (its wait for the
   * server's writes is not its cost: a merge step timed from outside once "held" 541 ms that were
   * mostly that wait) to after COMMIT (its sync of the journal holds the writer too), kept if longest.
   */
  const timed = <T>(what: string, fn: () => T): { out: T; ms: number } => {
    let held = performance.now();
    const keep = () => {
      const ms = performance.now() - held;
      if (ms > longestMs) [longestMs, longestWhat] = [ms, what];
      return ms;
    };
    try {
      const out = writeTx(db, () => {
        held = performance.now();
        return fn();
      });
      return { out, ms: keep() };
    } catch (e) {
      keep();
      throw e;
    }
  };
  return {
    get size() {
      return size;
    },
    /** The longest hold, and what held it. */
    get longest() {
      return { ms: longestMs, what: longestWhat };
    },
    /** One transaction of `fn(size)`, then the WAL caught up (liveSeed) and the pause. */
    async step<T>(fn: (size: number) => T): Promise<T> {
      const { out, ms } = timed(`a batch of ${size}`, () => fn(size));
      size = nextStepSize(size, ms, { min: MIN_BATCH, max: MAX_BATCH, targetMs: TARGET_MS });
      await walCatchUp(db.filename);
      // A batch that waited long for the lock already let the server's writes go first: the pause follows the hold alone.
      await Bun.sleep(gapAfter(ms));
      return out;
    },
    /**
     * One step of the search index's merge (src/db/fts-merge.ts) when it has work, then the pause:
     * a batch's deal writes leave their full-text segments for such steps, which a server beside
     * the seed runs too, but a seed alone would otherwise leave to FTS5's crisis merges.
     */
    async merge(): Promise<void> {
      const { out: pages, ms } = timed("a merge step of the search index", () => mergeStepInside(db));
      if (pages > 0) await Bun.sleep(gapAfter(ms));
    },
    /** One transaction of work outside the batches, its hold timed into the longest. */
    once<T>(what: string, fn: () => T): T {
      return timed(what, fn).out;
    },
  };
}

/**
 * Seeds a database that other connections have open (a running server): through the live indexes
 * and triggers, in short transactions with a pause between them, printing progress. When a batch
 * fails, everything this seed wrote is taken out again before the error is passed on. Answers the
 * longest transaction too (the writer hold a server saw at worst).
 */
export async function liveSeed(db: Db, t: SeedTenant, now: number, progress: (done: number, total: number) => void): Promise<SeedResult & { longest: { ms: number; what: string } }> {
  db.run("PRAGMA analysis_limit = 2000");
  const pace = pacer(db);
  // Commits are not synced one by one (WAL at NORMAL: a killed process loses nothing committed,
  // a power cut the last batches of demo data, the file stays whole): a sync inside the commit
  // held the server's writes back as long as the disk took (1.5 s seen on a busy machine).
  db.run("PRAGMA synchronous = NORMAL");
  // The server's fold leaves this organization's pending rows while the seed writes (its steps beside
  // the seed read pages the seed's commits had just made cold: event-loop turns of 67-145 ms), and
  // sweeps them together once the hold is released.
  let holdUntil = Date.now() + FOLD_HOLD_MS;
  const plan = pace.once("the accounts, contacts and users", () => {
    const p = startSeed(db, t, now, undefined, true);
    setDemoPassword(db, t);
    holdFold(db, t.tenantId, holdUntil);
    return p;
  });
  const renewHold = () => {
    if (Date.now() < holdUntil - FOLD_HOLD_MS / 2) return;
    holdUntil = Date.now() + FOLD_HOLD_MS;
    holdFold(db, t.tenantId, holdUntil);
  };
  let done = 0;
  // Progress at every tenth (at least every 1,000 deals): a batch ends there.
  const every = Math.max(1_000, Math.ceil(t.deals / 10));
  let mark = Math.min(t.deals, every);
  // No checkpoint inside this connection's commits (SQLite's automatic one): a checkpointer thread
  // of the seed's own copies the WAL, caught up between batches as a job's is (walCatchUp in
  // pacer.step), so that the seed's next batch starts the WAL over before it is WAL_AUTOCHECKPOINT
  // long. Left to the server's checkpointer (a tick every 200 ms; the seed's batches come every
  // 25), the WAL stayed longer, and then every commit of the server ran SQLite's automatic
  // checkpoint inside itself, copying and fsyncing on its event loop: 122 sign-ins held the writer
  // or the event loop over 50 ms beside a seed of 100,000 deals. One PASSIVE checkpoint at the end.
  db.run("PRAGMA wal_autocheckpoint = 0");
  const checkpointer = startCheckpointer(db.filename);
  try {
    try {
      while (done < t.deals) {
        await pace.step((size) => {
          // In pieces, the batch ending once it has held the writer TARGET_MS: sized by the batches
          // before it, a batch whose deals cost more (the cache cold after the server's commits, the
          // cores busy) held the writer 61-101 ms, and a neighbour's write waited through it.
          const started = performance.now();
          const end = Math.min(mark, done + size);
          while (done < end) {
            const to = Math.min(end, done + PIECE);
            plan.insertDeals(done, to);
            done = to;
            if (performance.now() - started >= TARGET_MS) break;
          }
          renewHold();
        });
        await pace.merge();
        if (done === mark) {
          progress(done, t.deals);
          mark = Math.min(t.deals, mark + every);
        }
      }
    } catch (e) {
      db.run(`PRAGMA wal_autocheckpoint = ${WAL_AUTOCHECKPOINT}`);
      await unseed(db, t.tenantId, plan.range[0], plan.range[0] + done, plan.added);
      // The hold ends with the seed, failed or not (a tenant the seed created is removed, its hold with it).
      writeTx(db, () => releaseFold(db, t.tenantId));
      throw e;
    }
    // The deals are written: the server may sweep their pending rows (the statistics below are a few short steps).
    pace.once("the search counters' fold released", () => releaseFold(db, t.tenantId));
    // The planner's statistics of the deals, one index a transaction: `ANALYZE deals` held the
    // writer 209 ms beside a server (19 indexes sampled at once), each index alone a tenth of that.
    // Only the indexes whose statistics are missing or were taken on fewer rows than this seed
    // added (the table more than doubled since): at 1.1M deals each took up to 188 ms, and a
    // server's writes waiting through them back to back waited 430 ms (its busy handler sleeps on
    // its event loop); statistics of at least half the rows still describe the table.
    for (const name of staleIndexes(db, "deals", t.deals)) {
      pace.once(`ANALYZE ${name}`, () => db.run(`ANALYZE "${name!.replace(/"/g, '""')}"`));
      // A gap between them, as between batches: the server's waiting writer polls for the lock.
      await Bun.sleep(10);
    }
    db.run(`PRAGMA wal_autocheckpoint = ${WAL_AUTOCHECKPOINT}`);
    db.query("PRAGMA wal_checkpoint(PASSIVE)").get();
    return { ...plan.result, longest: pace.longest };
  } finally {
    await checkpointer.stop();
  }
}

/** The indexes of `table` without statistics, or with statistics of fewer rows than `added`. */
export function staleIndexes(db: Db, table: string, added: number): string[] {
  const names = (db.query("SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = ?1").values(table) as string[][]).map(([n]) => n!);
  if (!db.query("SELECT 1 AS x FROM sqlite_schema WHERE name = 'sqlite_stat1'").get()) return names;
  const rows = new Map<string, number>();
  for (const r of db.query("SELECT idx, stat FROM sqlite_stat1 WHERE tbl = ?1").all(table) as Array<{ idx: string | null; stat: string }>) {
    if (r.idx !== null) rows.set(r.idx, Number.parseInt(r.stat, 10));
  }
  return names.filter((n) => !((rows.get(n) ?? -1) >= added));
}

/** Deletes, in short transactions, the deals of [from, to) of the seed's range and the rows it added. */
async function unseed(db: Db, tenantId: string, from: number, to: number, added: { users: string[]; accounts: string[]; contacts: string[] }): Promise<void> {
  const deals = db.prepare("DELETE FROM deals WHERE tenant_id = ?1 AND seq >= ?2 AND seq < ?3");
  const pace = pacer(db);
  for (let lo = from; lo < to; ) {
    await pace.step((size) => {
      const hi = Math.min(to, lo + size);
      deals.run(tenantId, lo, hi);
      lo = hi;
    });
  }
  const byId = (table: string, ids: string[]) => {
    const del = db.prepare(`DELETE FROM ${table} WHERE tenant_id = ?1 AND id = ?2`);
    writeTx(db, () => {
      for (const id of ids) del.run(tenantId, id);
    });
  };
  byId("contacts", added.contacts);
  byId("accounts", added.accounts);
  byId("users", added.users);
}

/**
 * Removes an organization the seed created, with everything in it (its rows cascade), and its
 * audit rows: a seed that fails leaves no organization behind. Deals first, in short transactions.
 */
export async function removeSeededTenant(db: Db, tenantId: string): Promise<void> {
  const del = db.prepare("DELETE FROM deals WHERE seq IN (SELECT seq FROM deals WHERE tenant_id = ?1 LIMIT ?2)");
  const pace = pacer(db);
  while ((await pace.step((size) => del.run(tenantId, size).changes)) > 0);
  writeTx(db, () => {
    db.run("DELETE FROM audit_log WHERE tenant_id = ?1", [tenantId]);
    db.run("DELETE FROM tenants WHERE id = ?1", [tenantId]);
  });
}
