import { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";

export type Db = Database;

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
  // 32 MiB of page cache (the default is 2 MiB): a search over a million deals looks rows up at
  // random, and each miss is a read; measured in the bench, and well inside the 200 MB budget.
  ["cache_size", -32768, -32768],
];

/** Opens (creating if needed) the database file and sets and checks its pragmas. */
export function openDatabase(path: string): Db {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path, { create: true, strict: true });
  for (const [name, value] of PRAGMAS) db.run(`PRAGMA ${name} = ${value}`);
  for (const [name, , expect] of PRAGMAS) {
    const row = db.query(`PRAGMA ${name}`).get() as Record<string, unknown>;
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
 * Runs `fn` in a BEGIN IMMEDIATE transaction, so that a writer takes the lock up front and waits
 * on busy_timeout instead of failing half-way with SQLITE_BUSY. `fn` must be synchronous: no
 * `await` may sit inside an open transaction, or other requests' statements would land in it.
 */
export function writeTx<T>(db: Db, fn: () => T): T {
  return db.transaction(fn).immediate();
}

/** Copies the live database, consistently, into a new file (works while the server runs). */
export function backupTo(db: Db, file: string): void {
  db.run("VACUUM INTO ?", [file]);
}

/** Whether `e` is SQLite refusing a duplicate, on `column` ("table.column") when one is named. */
export const isUniqueViolation = (e: unknown, column?: string): boolean =>
  e instanceof Error && /UNIQUE constraint failed/.test(e.message) && (column === undefined || e.message.includes(column));
