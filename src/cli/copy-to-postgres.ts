import { existsSync } from "node:fs";
import { dealCountersAfterCopy } from "../stores/postgres/deal-counters";
import { numberingAfterCopy } from "../stores/postgres/deals";
import { unnamedLinksAfterCopy } from "../stores/postgres/unnamed-links";
import { userDirectoryAfterCopy } from "../stores/postgres/user-directory";
import { resolve } from "node:path";
import { type Config, maskDatabaseUrl } from "../config";
import { type Db, openDatabase } from "../db/database";
import { CURRENT_PLAN, targetVersion } from "../db/migrate";
import { KEY_NAMES, keyFileOf } from "../security/key-file";
import { openPostgres, type Pg, type PgTx } from "../stores/postgres/database";
import { migratePostgres } from "../stores/postgres/migrate";
import { schemaFiles } from "../stores/postgres/schema";
import { UsageError } from "./args";

type Out = (line: string) => void;

/**
 * `suite copy-to-postgres --database-url …`: copies the SQLite database (--db) into an EMPTY
 * PostgreSQL database, in one transaction, checks every table's count, and prints what to change
 * to switch. Generic: each table's columns are SQLite's (PRAGMA table_info) that PostgreSQL's
 * table also has, so a new column needs no change here.
 */

/** A step that rebuilds data PostgreSQL derives (not copied), inside the copy's transaction. */
export interface AfterCopyStep {
  name: string;
  run(tx: PgTx): Promise<void>;
}

/**
 * Derived PostgreSQL-only data to rebuild once every row is in (e.g. the deal list's counters):
 * each store that keeps such data adds its step here. They run in order, in the copy's
 * transaction, before the counts are checked; a failing step rolls the whole copy back.
 */
export const AFTER_COPY: AfterCopyStep[] = [dealCountersAfterCopy, userDirectoryAfterCopy, numberingAfterCopy, unnamedLinksAfterCopy];

/** Runs the AFTER_COPY steps (exported for the stores that want to test their step). */
export async function afterCopy(tx: PgTx, out: Out = () => {}): Promise<void> {
  for (const step of AFTER_COPY) {
    await step.run(tx);
    out(`  rebuilt: ${step.name}`);
  }
}

/**
 * SQLite tables that are never copied, and why. Any other SQLite table must exist on PostgreSQL
 * (else the copy is refused: its rows would be lost).
 * - sqlite_*: SQLite's own bookkeeping.
 * - deals_fts*: the FTS5 search index; PostgreSQL searches the deals' own columns (pg_trgm).
 * - deal_counts: counts SQLite's triggers derive from deals; PostgreSQL's counters are rebuilt
 *   from the copied deals by an AFTER_COPY step, never taken from SQLite.
 */
export function skippedBecause(table: string): string | null {
  if (table.startsWith("sqlite_")) return "SQLite's own";
  if (table === "deals_fts" || table.startsWith("deals_fts_")) return "SQLite's search index (PostgreSQL indexes the deals themselves)";
  if (table === "deal_counts") return "derived from deals (PostgreSQL rebuilds its counters after the copy)";
  if (table === "deal_sums") return "derived from deals (PostgreSQL rebuilds the board's sums after the copy)";
  // SQLite counts 1-2 character grams (schema version 11); PostgreSQL's own triggers count 1-3 from the copied deals.
  if (table === "deal_gram_counts") return "derived from deals (PostgreSQL's counters are its own)";
  // Where along the text orders each 3-character piece occurs (schema version 13): SQLite's search alone uses it.
  if (table === "deal_key_grams") return "derived from deals (SQLite's search plan only)";
  // Deal changes not yet folded into those two (schema version 15): derived from deals like them.
  if (table === "deal_search_pending") return "derived from deals (SQLite's search counters' pending changes)";
  // Where a sweep of those pending changes stands (schema version 34): SQLite's fold's own bookkeeping.
  if (table === "deal_search_sweeps") return "derived from deals (SQLite's search counters' sweep under way)";
  // A seed beside the server holding the fold off its organization (schema version 35): a few minutes' bookkeeping.
  if (table === "deal_search_holds") return "SQLite's search counters' fold, held off an organization while a seed writes it";
  return null;
}

/**
 * PostgreSQL tables derived from another table's rows (not copied; an AFTER_COPY step rebuilds
 * them): the copy fails if one is empty while its source has rows. Add a derived table here.
 */
export const DERIVED_FROM: Record<string, string> = { deal_counts: "deals", deal_gram_counts: "deals", deal_sums: "deals", user_directory: "users" };

/**
 * Values SQLite keeps as NULL that PostgreSQL keeps otherwise: the audit rows of no organization
 * are under tenant_id '' there (schema 53: the audit log's key starts with tenant_id).
 */
const NULL_AS: Record<string, Record<string, unknown>> = { audit_log: { tenant_id: "" } };

/** Rows a batch: a few MB of JSON at most for the widest table (deals). */
const BATCH_ROWS = 5_000;

interface PgColumn { name: string; type: string }
interface TablePlan { table: string; columns: PgColumn[] }

const q = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** Tables in the order the schema files create them (foreign keys point backwards), then any other. */
function schemaOrder(): string[] {
  return schemaFiles().flatMap((f) => [...f.sql.matchAll(/CREATE\s+(?:UNLOGGED\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?"?([A-Za-z_][A-Za-z0-9_]*)"?/gi)].map((m) => m[1]!.toLowerCase()));
}

async function pgTables(pg: Pg): Promise<Map<string, PgColumn[]>> {
  const rows = await pg.all<{ t: string; c: string; type: string }>`
    SELECT c.relname AS t, a.attname AS c, format_type(a.atttypid, a.atttypmod) AS type
    FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
    WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p')
      AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
    ORDER BY c.relname, a.attnum`;
  const tables = new Map<string, PgColumn[]>();
  for (const r of rows) {
    if (r.t === "schema_version") continue;
    if (!tables.has(r.t)) tables.set(r.t, []);
    tables.get(r.t)!.push({ name: r.c, type: r.type });
  }
  return tables;
}

/** SQLite's value as the PostgreSQL column's type takes it (SQLite is dynamically typed). */
function convert(v: unknown, type: string): unknown {
  if (v === null || v === undefined) return null;
  if (type === "boolean") return typeof v === "string" ? v !== "0" && v.toLowerCase() !== "false" : Boolean(Number(v));
  if (type === "bytea") return typeof v === "string" ? Buffer.from(v, "utf8") : Buffer.from(v as Uint8Array);
  if (/^(text|character|json|jsonb|uuid)/.test(type)) {
    if (v instanceof Uint8Array) return new TextDecoder().decode(v);
    return typeof v === "string" ? v : String(v);
  }
  if (/^(double precision|real|numeric)/.test(type) && typeof v === "bigint") return Number(v);
  return v;
}

/** What each table copies: SQLite's columns that PostgreSQL also has; refuses a table or column PostgreSQL lacks. */
function plan(db: Db, pgTablesByName: Map<string, PgColumn[]>): { copy: TablePlan[]; skipped: Array<{ table: string; why: string }>; derived: string[] } {
  const sqliteTables = (db.query("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name").all() as Array<{ name: string }>).map((r) => r.name);
  const order = schemaOrder();
  const rank = (t: string) => (order.indexOf(t) === -1 ? order.length : order.indexOf(t));
  const copy: TablePlan[] = [];
  const skipped: Array<{ table: string; why: string }> = [];
  for (const table of sqliteTables) {
    const why = skippedBecause(table);
    if (why) {
      skipped.push({ table, why });
      continue;
    }
    const pgColumns = pgTablesByName.get(table);
    if (!pgColumns) throw new Error(`the SQLite table ${table} has no PostgreSQL counterpart: its rows would be lost (is this suite older than the database?)`);
    const sqliteColumns = (db.query(`PRAGMA table_info(${q(table)})`).all() as Array<{ name: string }>).map((r) => r.name);
    const missing = sqliteColumns.filter((c) => !pgColumns.some((p) => p.name === c));
    if (missing.length > 0) throw new Error(`PostgreSQL's ${table} lacks ${missing.join(", ")}: those values would be lost`);
    copy.push({ table, columns: pgColumns.filter((p) => sqliteColumns.includes(p.name)) });
  }
  copy.sort((a, b) => rank(a.table) - rank(b.table));
  const derived = [...pgTablesByName.keys()].filter((t) => !sqliteTables.includes(t) || skippedBecause(t) !== null);
  return { copy, skipped, derived };
}

async function countPg(tx: PgTx, table: string): Promise<number> {
  return (await tx.unsafe<{ n: number }>(`SELECT count(*)::bigint AS n FROM ${q(table)}`))[0]!.n;
}

/** A value as JSON carries it to json_populate_recordset (which parses it with the column type's input). */
function jsonValue(v: unknown): unknown {
  if (typeof v === "bigint") return v.toString();
  if (v instanceof Uint8Array) return `\\x${Buffer.from(v).toString("hex")}`;
  return v;
}

/**
 * Inserts one table's rows in batches: each batch is ONE parameter, a JSON array of the rows, that
 * json_populate_recordset turns into the table's row type, each column parsed by its own type's
 * input (ten times faster than a bound parameter per value: 25,000 of them per batch of deals).
 * Answers how many rows went in.
 */
async function copyTable(db: Db, tx: PgTx, p: TablePlan): Promise<number> {
  const cols = p.columns.map((c) => q(c.name)).join(", ");
  // Exact integers: a 64-bit value past 2^53 must not round on its way through a JS number.
  const read = db.query(`SELECT ${cols} FROM ${q(p.table)}`).safeIntegers(true);
  // OVERRIDING SYSTEM VALUE: identity columns (audit_log.id) keep SQLite's ids.
  const insert = `INSERT INTO ${q(p.table)} (${cols}) OVERRIDING SYSTEM VALUE SELECT ${cols} FROM json_populate_recordset(NULL::${q(p.table)}, $1::text::json)`;
  let batch: Array<Record<string, unknown>> = [];
  let copied = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    await tx.unsafe(insert, [JSON.stringify(batch)]);
    copied += batch.length;
    batch = [];
  };
  for (const row of read.iterate() as IterableIterator<Record<string, unknown>>) {
    const out: Record<string, unknown> = {};
    for (const c of p.columns) out[c.name] = jsonValue(convert(row[c.name] ?? NULL_AS[p.table]?.[c.name] ?? null, c.type));
    batch.push(out);
    if (batch.length === BATCH_ROWS) await flush();
  }
  await flush();
  // Identity and serial columns continue after the highest copied id.
  for (const c of p.columns) {
    const seq = (await tx.unsafe<{ s: string | null }>("SELECT pg_get_serial_sequence($1, $2) AS s", [p.table, c.name]))[0]?.s;
    if (seq) await tx.unsafe(`SELECT setval($1::regclass, coalesce((SELECT max(${q(c.name)}) FROM ${q(p.table)}), 0) + 1, false)`, [seq]);
  }
  return copied;
}

export async function copyToPostgresCommand(config: Config, out: Out): Promise<void> {
  if (!config.databaseUrl) throw new UsageError("suite copy-to-postgres needs --database-url postgres://… (or SUITE_DATABASE_URL): the EMPTY PostgreSQL database to copy into");
  if (config.db === ":memory:" || !existsSync(config.db)) throw new UsageError(`no SQLite database at ${config.db} (--db or SUITE_DB names the one to copy)`);
  const shown = maskDatabaseUrl(config.databaseUrl);
  const db = openDatabase(config.db);
  const pg = openPostgres(config.databaseUrl, { max: 2 });
  try {
    const version = (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
    if (version !== targetVersion(CURRENT_PLAN)) {
      throw new UsageError(`${config.db} is at schema version ${version}, this suite's is ${targetVersion(CURRENT_PLAN)}: run suite migrate --db ${config.db} first`);
    }
    const keyRows = db.query(`SELECT count(*) AS n FROM settings WHERE key IN (${KEY_NAMES.map(() => "?").join(", ")})`).get(...KEY_NAMES) as { n: number };
    // Keys never go into a database (security/key-file.ts); an earlier release's are moved out first.
    if (keyRows.n > 0) throw new UsageError(`${config.db} still holds an earlier release's keys: run suite migrate --db ${config.db} first (it moves them to ${keyFileOf(config.db)})`);

    const migrated = await migratePostgres(pg);
    out(`${shown}: PostgreSQL schema version ${migrated.to}${migrated.from === migrated.to ? "" : ` (was ${migrated.from})`}`);
    const tables = await pgTables(pg);
    const { copy, skipped, derived } = plan(db, tables);
    const started = performance.now();

    // One snapshot of SQLite (a read transaction: a server writing meanwhile changes nothing seen
    // here) and one PostgreSQL transaction: the target gets every row or none.
    db.run("BEGIN");
    let report: Array<{ table: string; n: number }> = [];
    try {
      report = await pg.begin(async (tx) => {
        // Nobody writes the target while it fills: instances started early wait for the commit.
        await tx.unsafe(`LOCK TABLE ${[...tables.keys()].map(q).join(", ")} IN EXCLUSIVE MODE`);
        const filled: string[] = [];
        for (const t of tables.keys()) {
          if ((await tx.unsafe<{ any: boolean }>(`SELECT EXISTS (SELECT 1 FROM ${q(t)}) AS any`))[0]!.any) filled.push(t);
        }
        if (filled.length > 0) {
          throw new UsageError(`${shown} is not empty (rows in ${filled.slice(0, 5).join(", ")}${filled.length > 5 ? ", …" : ""}): copy into a new, empty database`);
        }
        const done: Array<{ table: string; n: number }> = [];
        for (const p of copy) {
          const n = await copyTable(db, tx, p);
          out(`  ${p.table}: ${n.toLocaleString("en-US")} rows`);
          done.push({ table: p.table, n });
        }
        await afterCopy(tx, out);
        // Every table's count on both sides, before anything is committed.
        for (const d of done) {
          const sqlite = Number((db.query(`SELECT count(*) AS n FROM ${q(d.table)}`).get() as { n: number }).n);
          const target = await countPg(tx, d.table);
          if (sqlite !== target || d.n !== sqlite) throw new Error(`count mismatch in ${d.table}: SQLite ${sqlite}, PostgreSQL ${target}; nothing was copied`);
        }
        // Derived data must have been rebuilt when its source holds rows.
        for (const t of derived) {
          const source = DERIVED_FROM[t];
          if (source && (await countPg(tx, source)) > 0 && (await countPg(tx, t)) === 0) {
            throw new Error(`${t} is empty after the copy though ${source} has rows: no AFTER_COPY step rebuilt it (src/cli/copy-to-postgres.ts); nothing was copied`);
          }
        }
        return done;
      });
    } finally {
      db.run("COMMIT");
    }
    const rows = report.reduce((s, r) => s + r.n, 0);
    out(`copied ${config.db} into ${shown}: ${report.length} tables, ${rows.toLocaleString("en-US")} rows in ${((performance.now() - started) / 1000).toFixed(1)} s; every table's count equals SQLite's`);
    if (skipped.length > 0) {
      const byReason = new Map<string, string[]>();
      for (const { table, why } of skipped) byReason.set(why, [...(byReason.get(why) ?? []), table]);
      out(`not copied: ${[...byReason].map(([why, t]) => `${t.join(", ")}: ${why}`).join("; ")}`);
    }
    for (const line of switchInstructions(config, shown)) out(line);
  } finally {
    db.close();
    await pg.close();
  }
}

/** What the operator changes to run on PostgreSQL, keys included: sessions and 2FA depend on them. */
function switchInstructions(config: Config, shown: string): string[] {
  const keys = resolve(keyFileOf(config.db));
  return [
    "",
    "To switch to PostgreSQL:",
    `  1. Writes made on ${config.db} after this copy are not in PostgreSQL: for the final copy, stop the server first (into a new, empty database).`,
    `  2. Set SUITE_DATABASE_URL=${shown} (with its real password) on every instance, or pass --database-url.`,
    `  3. Carry the keys over. ${keys}${existsSync(keys) ? "" : " (NOT FOUND: look for it where the database used to be)"} holds three:`,
    "     jwt_secret signs access tokens, refresh_key keys the hash of every session's refresh token, and",
    "     encryption_key seals TOTP secrets and keys backup-code hashes. Every instance needs the same",
    "     three: keep SUITE_DB naming a file whose <db>.keys is this file (copied with mode 0600), so the",
    "     suite reads it there. Without it everyone signs in again, and users with 2FA cannot pass it.",
    config.jwtSecret || config.encryptionKey
      ? `     ${[config.jwtSecret ? "SUITE_JWT_SECRET" : "", config.encryptionKey ? "SUITE_ENCRYPTION_KEY" : ""].filter(Boolean).join(" and ")} ${config.jwtSecret && config.encryptionKey ? "are" : "is"} set here: set the same value(s) on every instance (they win over the file's); refresh_key comes only from the file.`
      : "     (SUITE_JWT_SECRET and SUITE_ENCRYPTION_KEY, when you set them instead, must be the file's values; refresh_key comes only from the file.)",
    "  4. Keep the SQLite file and its keys until the PostgreSQL side has served for a while: it is your way back.",
  ];
}
