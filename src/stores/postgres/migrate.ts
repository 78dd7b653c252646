import { NewerDatabase } from "../../db/migrate";
import { maskDatabaseUrl } from "../../config";
import type { Pg, PgTx } from "./database";
import { LATER_FILES, schemaFiles } from "./schema";
import { backfillNoteTextInTx } from "./deal-activities";

/**
 * Versioned migrations for PostgreSQL, the counterpart of src/db/migrate.ts. Version 1 is the
 * whole schema as schema.ts applies it (its files, in order); a database made by an older release
 * runs each later step of PG_MIGRATIONS once. The version is kept in a table of its own,
 * `schema_version`, one row per step applied (when, and by which step name).
 *
 * Many `suite serve` instances start together against one database: every one of them runs
 * `migratePostgres`, and all of it happens in ONE transaction that first takes a transaction-level
 * advisory lock. The first to get the lock creates or upgrades the schema and commits; the others
 * wait on the lock, then find the version done and do nothing. A step that fails rolls the whole
 * transaction back: the database stays at its previous version, never half-migrated.
 */

/** A later schema step: `sql` brings a database at `version - 1` to `version`. */
export interface PgMigration {
  version: number;
  name: string;
  sql: string;
  /** Data work after the SQL, in the same transaction (as SQLite's Migration.after). */
  after?: (tx: PgTx) => Promise<void>;
}

/**
 * The later files' data steps, by file name. Schema 72's runs after 73: the note writes it makes
 * count their grams through 73's pending rows (deal-activities.ts).
 */
const AFTER: Record<string, PgMigration["after"]> = { "73-deal-search-pending.sql": backfillNoteTextInTx };

/**
 * Upgrades for PostgreSQL databases made by an older release, from version 2 on. To change the
 * PostgreSQL schema: edit the schema file (what a new database gets) AND add the same change here
 * with the next version (a database already at version N has the old file applied).
 */
export const PG_MIGRATIONS: PgMigration[] = LATER_FILES.map((f) => ({ ...f, after: AFTER[f.name] }));

/**
 * The advisory lock's key: one 64-bit constant of this suite's own ("suite-migrate" in hex, cut
 * to fit), so no other application's advisory lock on the same database collides with it.
 * Advisory locks belong to one database, so two suites on two databases never wait on each other.
 */
export const MIGRATION_LOCK = 0x73756974656d6967n;

export const pgTargetVersion = (migrations: readonly PgMigration[] = PG_MIGRATIONS): number =>
  migrations.length === 0 ? 1 : migrations[migrations.length - 1]!.version;

export interface PgMigrateResult {
  /** The version found (0: an empty database). */
  from: number;
  to: number;
}

/** The highest version recorded, 0 when none. Inside `tx`, after the lock. */
async function currentVersion(tx: PgTx): Promise<number> {
  const row = await tx.one<{ v: number | null }>`SELECT max(version) AS v FROM schema_version`;
  return row?.v ?? 0;
}

/**
 * Brings the database to the newest version this suite knows, once however many instances call it
 * at the same moment. Throws NewerDatabase (the same refusal as SQLite's) when the database was
 * made by a newer release, and refuses a database that holds other tables but no version.
 */
export async function migratePostgres(pg: Pg, migrations: readonly PgMigration[] = PG_MIGRATIONS): Promise<PgMigrateResult> {
  const target = pgTargetVersion(migrations);
  return pg.begin(async (tx) => {
    // Waits here while another instance migrates; released by its COMMIT or ROLLBACK.
    await tx.unsafe("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK]);
    const known = await tx.one<{ n: number }>`
      SELECT count(*)::int AS n FROM information_schema.tables
      WHERE table_schema = current_schema() AND table_name = 'schema_version'`;
    if (!known?.n) {
      const others = await tx.one<{ n: number }>`
        SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = current_schema()`;
      if ((others?.n ?? 0) > 0) {
        throw new Error(`${maskDatabaseUrl(pg.url)} has tables but no schema_version: it is not a Workspace Suite database (use an empty database)`);
      }
      await tx.unsafe(`CREATE TABLE schema_version (
        version    integer PRIMARY KEY,
        name       text    NOT NULL,
        applied_at bigint  NOT NULL
      )`);
    }
    const from = await currentVersion(tx);
    if (from > target) throw new NewerDatabase(maskDatabaseUrl(pg.url), from, target);
    if (from === target) return { from, to: target };
    const now = Date.now();
    if (from === 0) {
      for (const f of schemaFiles()) await tx.unsafe(f.sql);
      await tx.run`INSERT INTO schema_version (version, name, applied_at) VALUES (1, 'schema', ${now})`;
    }
    for (const step of migrations) {
      // A new database got the whole current schema files at version 1: the steps are for older ones.
      if (step.version <= Math.max(from, 1)) continue;
      if (from === 0) {
        await tx.run`INSERT INTO schema_version (version, name, applied_at) VALUES (${step.version}, ${step.name}, ${now})`;
        continue;
      }
      await tx.unsafe(step.sql);
      if (step.after) await step.after(tx);
      await tx.run`INSERT INTO schema_version (version, name, applied_at) VALUES (${step.version}, ${step.name}, ${now})`;
    }
    return { from, to: target };
  });
}

/** The version recorded in the database, 0 when it has none (an empty database). */
export async function postgresVersion(pg: Pg): Promise<number> {
  const t = await pg.one<{ n: number }>`
    SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 'schema_version'`;
  if (!t?.n) return 0;
  const row = await pg.one<{ v: number | null }>`SELECT max(version) AS v FROM schema_version`;
  return row?.v ?? 0;
}
