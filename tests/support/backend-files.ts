/**
 * Test files that run on SQLite only: the PostgreSQL run (SUITE_TEST_BACKEND=postgres, chosen by
 * scripts/test.ts) takes every test file but these. Each is here for a property only SQLite has, or
 * because it runs `suite` (the CLI or a spawned server) on a SQLite file. Everything else talks to
 * the app through testApp() and reads rows through testSql(), on either backend; a single
 * SQLite-only test inside such a file uses `test.skipIf(ON_POSTGRES)` (tests/support/backend.ts)
 * with a comment saying what it checks.
 *
 * Paths are relative to the repository's root.
 */
export const SQLITE_ONLY_REASONS: Record<string, string> = {
  "tests/metrics/prometheus.test.ts": "a real Prometheus scraping a spawned `suite serve` on a SQLite file (the metrics themselves: tests/metrics/metrics.test.ts, both backends)",
  "tests/db/migrate-provider-verified.test.ts": "SQLite's migration 14 on a database of version 13 (PostgreSQL's file 55 runs in every PostgreSQL test database's migration)",
  // The SQLite database layer itself.
  "tests/db/database.test.ts": "SQLite connection settings (pragmas, WAL), writeTx and its busy handling",
  "tests/db/migrate.test.ts": "SQLite migrations, schema.sql drift, backups before a migration",
  "tests/db/checkpointer.test.ts": "the WAL checkpointer",
  "tests/db/snapshot-copy.test.ts": "the byte copy of a SQLite file's snapshot and its free pages",
  "tests/db/wal-bound.test.ts": "the WAL file's size after bursts and during a backup of the SQLite file",
  "tests/db/stall-monitor.test.ts": "SQLite write transactions timed in writeTx (a store hook wrapped on the SQLite stores)",
  "tests/db/group-commit.test.ts": "group commit of the WAL (walSync) on a database file",
  "tests/auth/session-upgrade.test.ts": "a SQLite database of an earlier version upgraded by its migration",
  "tests/security/key-file.test.ts": "keys moved out of SQLite's settings table into the key file beside the database file",
  "tests/security/backup-links.test.ts": "`suite backup` and the `.v<N>.bak` copy of a SQLite file searched byte by byte for mailed tokens",
  "tests/support/rewind.test.ts": "takes an in-memory SQLite database back to an older schema version and migrates it forward (the rewind helper of the upgrade tests)",
  "tests/security/rate-limit.test.ts": "the SQLite security store on its own in-memory database (the PostgreSQL one: tests/stores)",
  "tests/mail/lease.test.ts": "the outbox lease through the SQLite mail store on its own database (PostgreSQL's claim: tests/stores, tests/multi-instance)",
  "tests/mail/sender.test.ts": "the sender over the SQLite mail store on its own database (PostgreSQL's claim: tests/stores, tests/multi-instance)",
  // SQLite's deal search (FTS5) and seed internals.
  "tests/crm/search-paths.test.ts": "the SQLite deal query's FTS5 strategies (walk budget, rare terms) compared with each other",
  "tests/crm/search-unassigned.test.ts": "the SQLite deal query's FTS5 strategies for unassigned deals, and deals_fts integrity",
  "tests/crm/search-grams.test.ts": "SQLite's deal_gram_counts (migration 11): its triggers, the bulk seed's tally and the 1-2 letter strategies (PostgreSQL's counters: tests/stores/deals-list)",
  "tests/crm/search-buckets.test.ts": "SQLite's deal_key_grams (migration 13): its triggers, tally and recount, and the bucket walk of text orders compared with sorting",
  "tests/db/search-fold.test.ts": "SQLite's pending search counter rows (migration 15) and their fold, killed mid-way in a second process on the file",
  "tests/db/seed-tally.test.ts": "SQLite's bulk seed counting its gram tables on a thread of its own, into SQLite tables",
  "tests/crm/seed.test.ts": "bulkSeed into SQLite, deals_fts integrity, sqlite_schema unchanged, `suite seed` on a file",
  "tests/crm/csv.test.ts": "the CSV cell functions written in SQLite's SQL",
  "tests/security/bad-input.test.ts": "its fuzz harness opens SQLite and snapshots the whole database through sqlite_master",
  // `suite …` (the CLI, or a spawned server) on a SQLite file.
  "tests/cli/backup-schedule.test.ts": "scheduled backups of the SQLite file",
  "tests/cli/cli.test.ts": "the command line on a SQLite file (migrate, backup, serve)",
  "tests/cli/crash-test.test.ts": "the crash test of a server on a SQLite file (PostgreSQL's: tests/multi-instance)",
  "tests/cli/first-run.test.ts": "the first run creating the data folder and the SQLite file",
  "tests/cli/graceful-stop.test.ts": "a spawned server on a SQLite file, stopped by signals",
  "tests/cli/storage-full.test.ts": "a spawned server on a SQLite file on a small tmpfs filled to the last byte (PostgreSQL's disk is its server's)",
  "tests/cli/webhook-crash.test.ts": "a spawned server on a SQLite file killed with deliveries in flight (the lease on PostgreSQL: tests/stores/webhooks, tests/multi-instance)",
  "tests/cli/import-crash.test.ts": "a spawned server on a SQLite file killed mid-import (the jobs store's undo on PostgreSQL: tests/stores/crm-transfer)",
  "tests/cli/last-line.test.ts": "a spawned server on a SQLite file",
  "tests/cli/operator.test.ts": "operator commands on a SQLite file",
  "tests/cli/operator-accounts.test.ts": "`suite operator create|list|remove` on a SQLite file",
  "tests/cli/port-in-use.test.ts": "a spawned server on a SQLite file",
  "tests/cli/restore.test.ts": "restoring a SQLite backup",
  "tests/cli/restore-keys.test.ts": "restoring a SQLite backup that holds keys in its settings table",
  "tests/cli/tenant-create-password.test.ts": "`suite tenant create` and other commands on a SQLite file",
  "tests/cli/tenant-commands.test.ts": "`suite tenant …` on a SQLite file",
  "tests/cli/mail-settings.test.ts": "`suite tenant create` and `suite mail list` on a SQLite file, with and without --env-file",
  "tests/cli/tenant-delete.test.ts": "`suite tenant delete` on a SQLite file (the deletion on both backends: tests/organization/delete.test.ts)",
  "tests/cli/tenant-disabled-flows.test.ts": "`suite tenant disable` on the SQLite file an in-process app serves",
  "tests/cli/upgrade.test.ts": "upgrading a SQLite file of an earlier release",
  "tests/cli/user-commands.test.ts": "`suite user …` on the SQLite file an in-process app serves",
  "tests/mail/cli.test.ts": "`suite mail list` and `suite serve` on a SQLite file",
  "tests/security/races.test.ts": "two spawned servers on one SQLite file (PostgreSQL's: tests/multi-instance)",
  "tests/security/secrets-in-logs.test.ts": "a spawned server on a SQLite file whose audit table it reads",
  "tests/security/http-fuzz.test.ts": "a spawned server on a SQLite file",
  "tests/web/bad-host.test.ts": "a spawned server on a SQLite file",
  "tests/web/api-types-fresh.test.ts": "builds the OpenAPI document on an in-memory SQLite database (the routes alone decide it, whatever the backend)",
  "tests/deploy/release.test.ts": "builds the release binary and runs it on a SQLite file",
  "tests/web/e2e/crm.test.ts": "the built binary on a SQLite file, in a browser",
  "tests/web/e2e/create-once.test.ts": "the built binary on a SQLite file, in a browser",
  "tests/web/e2e/handoff.test.ts": "the built binary on a SQLite file, in a browser",
  "tests/web/e2e/operator.test.ts": "the built binary on a SQLite file, in a browser",
  "tests/web/e2e/step-up.test.ts": "the built binary on a SQLite file, in a browser",
  "tests/web/e2e/passkeys.test.ts": "the built binary on a SQLite file, in a browser",
  "tests/web/e2e/sign-in-policy.test.ts": "the built binary on a SQLite file, in a browser",
  "tests/web/e2e/members.test.ts": "the built binary on a SQLite file, in a browser",
  "tests/web/e2e/oidc-providers.test.ts": "the built binary on a SQLite file, in a browser",
  "tests/web/e2e/oidc-sign-in.test.ts": "the built binary on a SQLite file, in a browser",
  "tests/web/e2e/password.test.ts": "the built binary on a SQLite file, in a browser",
  "tests/web/e2e/new-device.test.ts": "the built binary on a SQLite file, in a browser",
  "tests/web/e2e/security-log-cli.test.ts": "the built binary and `suite` on a SQLite file, in a browser",
  "tests/web/e2e/security-log.test.ts": "the built binary on a SQLite file, in a browser",
  "tests/web/e2e/security.test.ts": "the built binary on a SQLite file, in a browser",
  "tests/web/e2e/sign-in.test.ts": "the built binary on a SQLite file, in a browser",
  "tests/web/e2e/stages.test.ts": "the built binary on a SQLite file, in a browser",
  "tests/web/e2e/team.test.ts": "the built binary on a SQLite file, in a browser",
  "tests/web/e2e/transfer.test.ts": "the built binary on a SQLite file, in a browser",
};

export const SQLITE_ONLY: string[] = Object.keys(SQLITE_ONLY_REASONS);
