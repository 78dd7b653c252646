import { Database } from "bun:sqlite";
import { chmodSync, closeSync, copyFileSync, existsSync, linkSync, mkdirSync, openSync, renameSync, rmSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { Config } from "../config";
import { fsyncDir, fsyncPath, tempBeside } from "../db/backup-files";
import { CURRENT_PLAN, targetVersion } from "../db/migrate";
import { KEY_NAMES, adoptKeys, keyFileOf, readKeyFile } from "../security/key-file";
import { refuseOnPostgres } from "./open";
import { UsageError } from "./args";

type Out = (line: string) => void;

/** Tables every schema version has had; a SQLite file without them is someone else's data. */
const REQUIRED_TABLES = ["tenants", "users", "settings"];

/** What a checked copy holds, for the answer. */
interface Checked {
  version: number;
  tenants: number;
  users: number;
  /** Keys a release before the key file kept in `settings`, by name (none in this release's backups). */
  keys: Record<string, string>;
}

const sqliteMessage = (e: unknown) => (e instanceof Error ? e.message : String(e));

/**
 * Checks the copy about to be put in place: SQLite's integrity check, then that it is a Workspace
 * Suite database of a version this binary can run. Leaves it a single self-contained file
 * (rollback journal mode: no -wal beside it; the server turns WAL back on when it opens it).
 */
function checkCopy(tmp: string, file: string): Checked {
  const refuse = (why: string) => new Error(`cannot restore ${file}: ${why}`);
  let db: Database;
  try {
    db = new Database(tmp, { strict: true });
  } catch (e) {
    throw refuse(`SQLite cannot open it (${sqliteMessage(e)})`);
  }
  try {
    let problems: string[];
    try {
      // Mapped, not read page by page through the cache: several times faster on a large file (cli/admin.ts).
      db.run(`PRAGMA mmap_size = ${statSync(tmp).size}`);
      problems = (db.query("PRAGMA integrity_check").all() as { integrity_check: string }[]).map((r) => r.integrity_check);
    } catch (e) {
      const m = sqliteMessage(e);
      throw refuse(/not a database/i.test(m) ? "it is not a SQLite database" : `it fails SQLite's integrity check (${m})`);
    }
    if (problems.length !== 1 || problems[0] !== "ok") throw refuse(`it fails SQLite's integrity check (${problems[0]}${problems.length > 1 ? `, and ${problems.length - 1} more` : ""})`);
    const version = (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
    const tables = new Set((db.query("SELECT name FROM sqlite_schema WHERE type = 'table'").all() as { name: string }[]).map((r) => r.name));
    const missing = REQUIRED_TABLES.filter((t) => !tables.has(t));
    if (version === 0 || missing.length > 0) {
      throw refuse(`a SQLite database, but not a Workspace Suite one (${version === 0 ? "no schema version" : `no ${missing.join(", ")} table`})`);
    }
    const target = targetVersion(CURRENT_PLAN);
    if (version > target) throw refuse(`its schema version ${version} is newer than this release understands (${target}); use a newer release`);
    const count = (table: string) => (db.query(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
    const rows = db.query(`SELECT key, value FROM settings WHERE key IN (${KEY_NAMES.map((k) => `'${k}'`).join(", ")})`).all() as { key: string; value: string }[];
    const checked = { version, tenants: count("tenants"), users: count("users"), keys: Object.fromEntries(rows.map((r) => [r.key, r.value])) };
    db.run("PRAGMA journal_mode = DELETE");
    return checked;
  } finally {
    db.close();
  }
}

/**
 * Takes the current database's lock the way SQLite itself would for exclusive use. A serving
 * `suite serve` (its connections in WAL mode hold a shared lock on the file for as long as they
 * are open, and its checkpointer thread another) makes this fail with "database is locked", as
 * does any other `suite` command working on it; a server that crashed holds nothing (the kernel
 * drops its locks). Under the lock the WAL is folded into the file and WAL mode left, so the file
 * kept aside is complete on its own. Answers false when the file is too damaged to open: then it
 * is kept aside as it is, with its -wal and -journal.
 */
function quiesce(dbFile: string): boolean {
  let db: Database;
  try {
    db = new Database(dbFile);
  } catch {
    return false;
  }
  try {
    db.run("PRAGMA busy_timeout = 1000");
    db.run("PRAGMA locking_mode = EXCLUSIVE");
    try {
      db.run("BEGIN EXCLUSIVE");
      db.run("COMMIT");
    } catch (e) {
      const m = sqliteMessage(e);
      if (/locked|busy/i.test(m)) throw new Error(`cannot restore over ${dbFile}: a server (or another suite command) has it open; stop it first`);
      return false;
    }
    db.run("PRAGMA wal_checkpoint(TRUNCATE)");
    const mode = (db.query("PRAGMA journal_mode = DELETE").get() as { journal_mode: string }).journal_mode;
    return mode.toLowerCase() === "delete";
  } finally {
    db.close();
  }
}

/** `2026-11-23T21-45-00Z`: sorts by time, and is a file name on every platform. */
const stamp = (d: Date) => d.toISOString().replace(/\.\d+Z$/, "Z").replace(/:/g, "-");

const shellWord = (s: string) => (/^[\w./@%+=:,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/** Keeps the current database (and what SQLite left beside it) under a new name; answers that name. */
function keepAside(dbFile: string, clean: boolean, now: Date): string {
  let aside = `${dbFile}.before-restore-${stamp(now)}`;
  for (let n = 2; existsSync(aside); n++) aside = `${dbFile}.before-restore-${stamp(now)}-${n}`;
  // A hard link: the database stays under its own name until the new one replaces it in one rename.
  try {
    linkSync(dbFile, aside);
  } catch {
    renameSync(dbFile, aside);
  }
  chmodSync(aside, 0o600);
  // A -wal or -journal left here belongs to the old file (a crash, or a file too damaged to open):
  // beside the restored one SQLite would replay it into the wrong data. It goes with the old file.
  for (const side of ["-wal", "-journal"]) {
    if (existsSync(dbFile + side)) {
      if (clean) rmSync(dbFile + side, { force: true });
      else renameSync(dbFile + side, aside + side);
    }
  }
  // The -shm is only an index of the -wal, rebuilt from it when needed.
  rmSync(`${dbFile}-shm`, { force: true });
  return aside;
}

/**
 * Whether the backup's own keys (rows of a release before the key file) would replace the key
 * file, and how: rows that differ from it, or rows and no file. Rows equal to the file change nothing.
 */
function keysWouldChange(keys: Record<string, string>, keyFile: string): string | null {
  if (Object.keys(keys).length === 0) return null;
  const current = readKeyFile(keyFile);
  if (!current) return `and there is no key file at ${keyFile}`;
  return Object.entries(keys).some(([k, v]) => current[k as keyof typeof current] !== v) ? `that differ from ${keyFile}` : null;
}

/**
 * `suite restore FILE`, with the server stopped: checks a copy of FILE, keeps the current database
 * aside, and puts the copy in place in one rename. The keys file is not part of a backup: the
 * current one stays. A backup of a release before the key file holds its keys in `settings`: it
 * is refused unless `adoptKeys` (--adopt-keys), which makes them the key file's (issue 29).
 */
export function restoreCommand(config: Config, file: string | undefined, out: Out, now = new Date(), opts: { adoptKeys?: boolean } = {}): void {
  if (!file) throw new UsageError("usage: suite restore FILE");
  refuseOnPostgres(config, "restore");
  const dbFile = config.db;
  if (dbFile === ":memory:") throw new UsageError("an in-memory database cannot be restored into; set --db to a file");
  if (resolve(file) === resolve(dbFile)) throw new UsageError(`${file} is the database itself; name a backup file`);
  if (!existsSync(file)) throw new Error(`cannot restore ${file}: no such file`);
  if (statSync(file).isDirectory()) throw new Error(`cannot restore ${file}: it is a folder, not a backup file`);
  if (existsSync(`${file}-wal`)) throw new Error(`cannot restore ${file}: ${file}-wal lies beside it, so it is a live database, not a backup; make one with suite backup`);
  const dir = dirname(resolve(dbFile));
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });

  // Copied first, beside the database: what is checked is exactly what goes in place.
  const tmp = tempBeside(dbFile);
  let aside: string | null = null;
  let checked: Checked;
  let adopting = false;
  try {
    closeSync(openSync(tmp, "wx", 0o600));
    copyFileSync(file, tmp);
    chmodSync(tmp, 0o600);
    checked = checkCopy(tmp, file);
    const change = keysWouldChange(checked.keys, keyFileOf(dbFile));
    adopting = change !== null;
    if (change && !opts.adoptKeys) {
      throw new Error(
        `cannot restore ${file}: it holds server keys in its settings table (a backup of a release before the key file) ${change}; nothing was changed. ` +
          `--adopt-keys restores it and makes its keys the key file's (the current file kept aside: sessions signed with it end, and 2FA secrets sealed under it no longer open)`,
      );
    }
    fsyncPath(tmp);
    if (existsSync(dbFile)) aside = keepAside(dbFile, quiesce(dbFile), now);
    renameSync(tmp, dbFile);
    fsyncDir(dir);
  } finally {
    for (const f of [tmp, `${tmp}-wal`, `${tmp}-shm`, `${tmp}-journal`]) rmSync(f, { force: true });
  }

  const target = targetVersion(CURRENT_PLAN);
  out(`restored ${file} to ${dbFile}: schema version ${checked.version}, ${checked.tenants} organizations, ${checked.users} users, integrity ok`);
  if (checked.version < target) out(`it is from an earlier release: the next start upgrades it to schema version ${target} (keeping a copy as ${dbFile}.v${checked.version}.bak)`);
  out(
    aside
      ? `the previous database is kept at ${aside} (0600); to undo, with the server stopped: mv ${shellWord(aside)} ${shellWord(dbFile)}`
      : `there was no database at ${dbFile} before`,
  );
  const keyFile = keyFileOf(dbFile);
  if (adopting) {
    // After the rename: a crash before this line leaves rows the next start refuses (exit 78) and a restore with --adopt-keys finishes.
    const replaced = adoptKeys(keyFile, checked.keys);
    out(`adopted the backup's keys into ${keyFile}${replaced ? `; the previous key file is kept at ${replaced} (sessions signed with it end; 2FA secrets sealed under it no longer open)` : ""}`);
  } else if (existsSync(keyFile)) {
    out(`the keys stay as they were in ${keyFile} (backups hold no keys): they must be the keys in use when the backup was taken, or sessions end and 2FA secrets cannot be opened`);
  } else if (checked.users > 0) {
    out(
      `no key file at ${keyFile}: put the one kept with your backups there (0600) before starting; without it the server refuses to start, since sign-in tokens and 2FA secrets depend on it (to start over with new keys, write {} into it: everyone signs in again, and users with 2FA need an admin to reset it)`,
    );
  } else {
    out(`no key file at ${keyFile}: the restored database holds no accounts, so the server makes new keys on its first start`);
  }
}
