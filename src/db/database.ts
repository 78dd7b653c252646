import { Database } from "bun:sqlite";
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readdirSync, rmSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { noteWriteHold } from "./stall-monitor";

export type Db = Database;

/** Pages of WAL after which a commit runs a checkpoint itself: the fallback should the checkpointer's thread fall behind. */
export const WAL_AUTOCHECKPOINT = 8192;

/**
 * The pragmas every connection runs with. synchronous=FULL: with WAL, NORMAL already survives
 * a killed process, FULL also survives a power cut. The server keeps FULL's promise another way,
 * off its event loop (see group-commit.ts). One connection writes: in WAL mode a commit from any
 * other connection makes this one drop its whole page cache before its next read (rate-limit
 * counters on a second connection cost about 2,400 page reads a second under a login flood).
 */
const PRAGMAS: Array<[name: string, value: string | number, expect: string | number]> = [
  // First, so that the others (switching a new file to WAL takes a lock) wait for a busy peer
  // instead of failing at once with "database is locked".
  ["busy_timeout", 5000, 5000],
  ["journal_mode", "WAL", "wal"],
  ["foreign_keys", "ON", 1],
  ["synchronous", "FULL", 2],
  // A WAL file grown past 64 MiB (a burst no checkpoint could keep up with) is cut back to that by
  // the commit that restarts it; the checkpointer's thread truncates it to nothing when idle.
  ["journal_size_limit", 64 * 1024 * 1024, 64 * 1024 * 1024],
  // 32 MiB of page cache (the default is 2 MiB): a search over a million deals looks rows up at
  // random, and each miss is a read; measured in the bench, and well inside the 200 MB budget.
  ["cache_size", -32768, -32768],
  // The automatic checkpoint inside a commit (the default is every 1,000 pages) only past 32 MiB:
  // the checkpointer's thread copies the WAL, and jobs wait for it between batches (checkpointer.ts).
  ["wal_autocheckpoint", WAL_AUTOCHECKPOINT, WAL_AUTOCHECKPOINT],
  // Temporary files in memory: a write of several statements in one transaction (a deal create:
  // its insert with triggers, its event, its timeline entry) needs a statement journal, which
  // SQLite otherwise opens as a temporary file each time (an open, a directory fsync and a close
  // a write: 0.6-0.7 → 0.5 ms of CPU a deal create at a million deals, bench/probes/deal-write-pages.ts).
  // Big sorts that spill (index builds of migrations and of the bulk seed) switch back to files
  // for their work: withTempFiles below.
  ["temp_store", 2, 2],
];

/**
 * Makes the database's folder (0700 when created here) and file (0600) before SQLite does, and
 * tightens files an earlier release left readable to others (0644). SQLite creates -wal, -shm and
 * -journal with the database file's own mode, so they are private too. Beside them: the
 * `<db>.v<N>.bak` copies of migrations and the key file.
 */
function privateFiles(path: string): void {
  const dir = dirname(path);
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (!existsSync(path)) {
    try {
      closeSync(openSync(path, "wx", 0o600));
    } catch (e) {
      // Another process made it first: it is tightened below like any existing file.
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    }
  }
  const name = basename(path);
  const siblings = new Set([`${name}-wal`, `${name}-shm`, `${name}-journal`]);
  for (const f of readdirSync(dir)) {
    if (f === name || siblings.has(f) || f.startsWith(`${name}.keys`) || (f.startsWith(`${name}.v`) && f.includes(".bak"))) tightenFile(join(dir, f));
  }
}

/** A file others can read or write becomes its owner's alone. */
export function tightenFile(file: string): void {
  try {
    if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
  } catch {
    // Gone meanwhile, or not ours to change.
  }
}

/**
 * Runs `step` again while SQLite answers SQLITE_BUSY, for up to about 5 s. Switching a new file to
 * WAL needs the exclusive lock, and SQLite refuses at once, without the busy handler, a connection
 * that would deadlock waiting for it (several processes starting together on a new database, seen
 * as a 1-in-many failure of tests/security/key-file.test.ts).
 */
export function retryWhileBusy<T>(step: () => T): T {
  for (let attempt = 0; ; attempt++) {
    try {
      return step();
    } catch (e) {
      if ((e as { code?: unknown }).code !== "SQLITE_BUSY" || attempt >= 250) throw e;
      Bun.sleepSync(20);
    }
  }
}

/**
 * Runs `work` with SQLite's temporary files on disk: an index build over a million deals sorts
 * in pieces that would otherwise be held in memory (hundreds of MB at 1M deals).
 */
export function withTempFiles<T>(db: Db, work: () => T): T {
  db.run("PRAGMA temp_store = FILE");
  try {
    return work();
  } finally {
    db.run("PRAGMA temp_store = MEMORY");
  }
}

/** Opens (creating if needed) the database file and sets and checks its pragmas. */
export function openDatabase(path: string): Db {
  if (path !== ":memory:") privateFiles(path);
  const db = new Database(path, { create: true, strict: true });
  for (const [name, value] of PRAGMAS) retryWhileBusy(() => db.run(`PRAGMA ${name} = ${value}`));
  for (const [name, , expect] of PRAGMAS) {
    const row = retryWhileBusy(() => db.query(`PRAGMA ${name}`).get()) as Record<string, unknown>;
    const actual = Object.values(row)[0];
    // An in-memory database cannot be WAL; it answers "memory", which is all it can be.
    if (name === "journal_mode" && path === ":memory:" && actual === "memory") continue;
    if (String(actual).toLowerCase() !== String(expect).toLowerCase()) {
      db.close();
      throw new Error(`database ${path}: PRAGMA ${name} is ${String(actual)}, expected ${String(expect)}`);
    }
  }
  return db;
}

/**
 * Runs `fn` in a BEGIN IMMEDIATE transaction, so that a writer takes the lock up front instead of
 * failing half-way with SQLITE_BUSY. `fn` must be synchronous: no `await` may sit inside an open
 * transaction, or other requests' statements would land in it.
 *
 * The lock is waited for here, a try every millisecond, not by SQLite's busy handler: that one
 * sleeps 1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100 ms between tries, so beside another process
 * that writes in short transactions with short gaps (`suite seed` beside the server: 15 ms batches,
 * 10 ms gaps) it slept through gaps and waited for batch after batch on the event loop (a sign-in
 * held it 168-205 ms). Polled each millisecond, a write gets the first gap. It waits as long as
 * the connection's busy_timeout says (0: one try, as the upkeep's steps ask). Nested calls (a
 * savepoint inside the caller's transaction) hold the lock already.
 */
export function writeTx<T>(db: Db, fn: () => T): T {
  // Timed from BEGIN IMMEDIATE (its wait for the lock included: it waits on the event loop) to
  // COMMIT: the stall monitor's write hold. Two clock reads, about 0.1 µs.
  const started = performance.now();
  try {
    if (db.inTransaction) return db.transaction(fn).immediate();
    const attempt = lockAttempt(db, fn);
    for (;;) {
      const out = attempt.once(started);
      if (out !== BUSY) return out;
      Bun.sleepSync(1);
    }
  } finally {
    noteWriteHold(performance.now() - started);
  }
}

/**
 * writeTx for a request's own writes: while another process holds the writer (`suite seed` beside
 * the server, a command-line tool), the wait is a try every millisecond between which the event
 * loop serves other requests, where writeTx's wait held every request of every organization (beside
 * a seed of 30,000 deals: 22 event-loop turns over 50 ms in sign-ins and creates with writeTx's
 * wait, 10 with this one; the writes themselves waited as long).
 * `fn` still runs whole between two turns of the event loop: BEGIN IMMEDIATE, fn and COMMIT are one
 * synchronous call, so no other request's statement lands inside the transaction. Its write hold is
 * timed from the lock taken. Not for a nested call (a transaction already open: use writeTx).
 */
export function writeTxAsync<T>(db: Db, fn: () => T): Promise<T> {
  // Thrown, not a rejection: a caller inside a transaction is a mistake to see at once.
  if (db.inTransaction) throw new Error("writeTxAsync inside an open transaction: use writeTx");
  const attempt = lockAttempt(db, fn);
  const asked = performance.now();
  const tryNow = (): T | typeof BUSY => {
    const took = performance.now();
    const out = attempt.once(asked);
    if (out !== BUSY) noteWriteHold(performance.now() - took);
    return out;
  };
  // The first try in the caller's turn, as writeTx's: a free writer costs no extra turn.
  let first: T | typeof BUSY;
  try {
    first = tryNow();
  } catch (e) {
    return Promise.reject(e);
  }
  if (first !== BUSY) return Promise.resolve(first);
  return (async () => {
    for (;;) {
      await Bun.sleep(1);
      const out = tryNow();
      if (out !== BUSY) return out;
    }
  })();
}

/** What lockAttempt's `once` answers when the writer was busy and the wait may go on. */
const BUSY: unique symbol = Symbol("busy");

/**
 * One try at `fn` in a BEGIN IMMEDIATE transaction without SQLite's busy handler: its answer, or
 * BUSY when another connection holds the writer and less than the connection's busy_timeout has
 * passed since `started` (0: one try, as the upkeep's steps ask). SQLITE_BUSY (and its extended
 * codes: SQLITE_BUSY_RECOVERY, another connection rebuilding the WAL index) is retried only
 * before `fn` began: `fn` never runs twice. `fn` and COMMIT keep the connection's busy_timeout.
 */
function lockAttempt<T>(db: Db, fn: () => T): { once(started: number): T | typeof BUSY } {
  const patience = (db.query("PRAGMA busy_timeout").get() as { timeout: number }).timeout;
  // Cached statements (db.query): three PRAGMAs a write, no difference measured on a 15-23 µs writeTx.
  let began = false;
  const tx = db.transaction(() => {
    began = true;
    db.query(`PRAGMA busy_timeout = ${patience}`).run();
    return fn();
  });
  return {
    once(started) {
      db.query("PRAGMA busy_timeout = 0").run();
      try {
        return tx.immediate();
      } catch (e) {
        if (began || !String((e as { code?: unknown }).code).startsWith("SQLITE_BUSY") || performance.now() - started >= patience) throw e;
        return BUSY;
      } finally {
        if (!began) db.query(`PRAGMA busy_timeout = ${patience}`).run();
      }
    },
  };
}

/** Copies the live database, consistently, into a new file (works while the server runs). */
export function backupTo(db: Db, file: string): void {
  // Created here, empty, exclusively and private (VACUUM INTO accepts an empty file).
  closeSync(openSync(file, "wx", 0o600));
  try {
    db.run("VACUUM INTO ?", [file]);
  } catch (e) {
    rmSync(file, { force: true });
    throw e;
  }
  tightenFile(file);
}
