import { expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { SQLITE_ONLY, SQLITE_ONLY_REASONS } from "./backend-files";

const ROOT = join(import.meta.dir, "..", "..");

test("every SQLite-only file exists, is a test file, and says why", () => {
  expect(SQLITE_ONLY.length).toBeGreaterThan(0);
  for (const f of SQLITE_ONLY) {
    expect({ f, exists: existsSync(join(ROOT, f)), test: f.endsWith(".test.ts") }).toEqual({ f, exists: true, test: true });
    expect(SQLITE_ONLY_REASONS[f]!.length).toBeGreaterThan(10);
  }
});

/** Files that name SQLite yet run on both: why each may. */
const NAMES_SQLITE_BUT_RUNS_ON_BOTH: Record<string, string> = {
  "tests/config.test.ts": "parses SUITE_DB; opens no database",
  "tests/team/manage.test.ts": "its one SQLite catalogue test is skipped on PostgreSQL",
  "tests/support/backend-files.test.ts": "this file",
  "tests/support/slow-files.test.ts": "names the spawning patterns it looks for; opens no database",
  "tests/cli/copy-to-postgres.test.ts": "copies a SQLite file into PostgreSQL: it runs (unskipped) in the PostgreSQL run",
  "tests/security-log/audit-stream.test.ts": "its one EXPLAIN QUERY PLAN test is skipped on PostgreSQL",
  "tests/crm/deals.test.ts": "reaches ctx.db only in its SQLite branch (ctx.pg on PostgreSQL)",
  "tests/crm/search.test.ts": "its strategies block (SQLite's own FTS5 query) is skipped on PostgreSQL",
  "tests/http/storage-full-errors.test.ts": "reaches ctx.db only in its SQLite branch (PostgreSQL raises 53100 in its own)",
  "tests/http/csv-delimiters.test.ts": "compares SQLite's SQL cell guard with csvCell on an in-memory SQLite; its downloads run on either backend",
  "tests/http/health.test.ts": "its key-file and disk-space test on a database file is skipped on PostgreSQL",
  "tests/crm/deal-notes-search.test.ts": "reaches ctx.db only in its SQLite branch (folds and recounts the gram counters; ctx.pg on PostgreSQL)",
  "tests/crm/deal-notes-migration.test.ts": "takes ctx.db back to version 32 in its SQLite branch, ctx.pg to version 21 in its PostgreSQL one, and migrates",
  "tests/crm/export-import/import-jobs.test.ts": "reaches ctx.db only in its SQLite-only test of the import's write transactions (the search index's levels after each batch)",
  "tests/organization/delete.test.ts": "reaches ctx.db only in its SQLite branch (the full-text index's integrity check); its walk of every table reads PostgreSQL's catalog there",
};

test("a test file that opens SQLite by itself or runs a server on a file is listed", async () => {
  // Files that would silently test SQLite twice (or fail) in the PostgreSQL run.
  const glob = new Bun.Glob("tests/**/*.test.ts");
  const unlisted: string[] = [];
  for await (const f of glob.scan({ cwd: ROOT })) {
    if (f.startsWith("tests/stores/") || f.startsWith("tests/multi-instance/") || SQLITE_ONLY.includes(f) || f in NAMES_SQLITE_BUT_RUNS_ON_BOTH) continue;
    const text = await Bun.file(join(ROOT, f)).text();
    if (/from "bun:sqlite"|openDatabase\(|startServer\(|startSuite\(|SUITE_DB|sqlite_master|sqlite_schema|ctx\.db\b|stores\/sqlite\//.test(text)) unlisted.push(f);
  }
  expect(unlisted).toEqual([]);
});
