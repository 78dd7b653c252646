import schemaSql from "../../schema.sql" with { type: "text" };
import { closeSync, existsSync, openSync, readSync, renameSync } from "node:fs";
import pkg from "../../package.json";
import type { Db } from "./database";
import { backupTo, withTempFiles, writeTx } from "./database";
import { MIGRATIONS, type Migration } from "./migrations";

export interface MigrationPlan {
  schema: string;
  migrations: Migration[];
}

export const CURRENT_PLAN: MigrationPlan = { schema: schemaSql, migrations: MIGRATIONS };

export const targetVersion = (plan: MigrationPlan): number =>
  plan.migrations.length === 0 ? 1 : plan.migrations[plan.migrations.length - 1]!.version;

export interface MigrateResult {
  from: number;
  to: number;
  backup: string | null;
}

/**
 * A database written by a newer release: this one refuses it before changing anything, since
 * it cannot know what the newer schema means (an older binary started by mistake after an upgrade).
 */
export class NewerDatabase extends Error {
  constructor(file: string | undefined, found: number, known: number) {
    super(`${file ? `database ${file}` : "the database"} is at schema version ${found}, this suite (${pkg.version}) knows up to ${known}: use a newer suite`);
  }
}

/**
 * Refuses a database file written by a newer release before anything opens it: SQLite keeps
 * user_version in the file's header (bytes 60-63), so not even a -wal or -shm file appears. A
 * version still in the WAL of a crashed newer server is caught by `migrate` instead.
 */
export function refuseNewerFile(file: string, plan: MigrationPlan = CURRENT_PLAN): void {
  if (file === ":memory:" || !existsSync(file)) return;
  const header = Buffer.alloc(100);
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch {
    return; // Unreadable: opening it reports why.
  }
  try {
    if (readSync(fd, header, 0, 100, 0) < 100) return;
  } finally {
    closeSync(fd);
  }
  if (header.toString("latin1", 0, 16) !== "SQLite format 3\0") return;
  const found = header.readUInt32BE(60);
  if (found > targetVersion(plan)) throw new NewerDatabase(file, found, targetVersion(plan));
}

const userVersion = (db: Db): number => (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;

/**
 * Brings the database to the plan's version, recording it in PRAGMA user_version. Each step runs
 * in one IMMEDIATE transaction together with its version bump, so a failed step leaves the
 * database exactly as it was. Before upgrading a file that holds data, a copy is kept beside it.
 */
export function migrate(db: Db, plan: MigrationPlan = CURRENT_PLAN, file?: string, beforeCopy?: () => void): MigrateResult {
  const target = targetVersion(plan);
  const from = userVersion(db);
  if (from > target) throw new NewerDatabase(file, from, target);
  if (from === target) return { from, to: target, backup: null };

  if (from === 0) {
    // Checked again under the write lock: another process (a second server, `suite migrate`)
    // may have created the schema since the version was read above.
    const created = writeTx(db, () => {
      if (userVersion(db) !== 0) return false;
      const existing = db.query("SELECT count(*) AS n FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%'").get() as { n: number };
      if (existing.n > 0) throw new Error("the database has tables but no schema version: it is not a Workspace Suite database");
      db.run(plan.schema);
      db.run(`PRAGMA user_version = ${target}`);
      return true;
    });
    if (!created) return migrate(db, plan, file, beforeCopy);
    return { from, to: target, backup: null };
  }

  let backup: string | null = null;
  if (file && file !== ":memory:" && existsSync(file)) {
    backup = `${file}.v${from}.bak`;
    if (existsSync(backup)) renameSync(backup, `${backup}.${Date.now()}`);
    // The caller takes what must not be copied out first (an earlier release's keys: security/key-file.ts).
    beforeCopy?.();
    backupTo(db, backup);
  }
  // A step may build an index over every deal: its sort spills to files, not memory.
  withTempFiles(db, () => {
    for (const step of plan.migrations) {
      if (step.version <= from) continue;
      writeTx(db, () => {
        // Another process may have run this step meanwhile; each step runs once.
        if (userVersion(db) >= step.version) return;
        db.run(step.sql);
        step.after?.(db);
        db.run(`PRAGMA user_version = ${step.version}`);
      });
    }
  });
  return { from, to: target, backup };
}
