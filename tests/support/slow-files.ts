/**
 * Test files `npm run test:fast` leaves out. SLOW_REASONS: each spawns a process (`suite` from the
 * source or the built binary, a browser, Prometheus, openssl, another Bun), the multi-instance ones
 * on a PostgreSQL server. HEAVY_IN_PROCESS: the few in-process files that cost most of the lane's
 * minute alone. The fast lane runs every other test file, in-process on SQLite
 * (`bun scripts/test.ts --fast`); `npm test` runs them all, on both backends.
 * tests/support/slow-files.test.ts fails when a file that spawns (itself or through a helper it
 * imports) is not in SLOW_REASONS, when one there no longer spawns, and when HEAVY_IN_PROCESS grows
 * past three files, so the lane stays fast and keeps every other test.
 *
 * Paths are relative to the repository's root.
 */
const SUITE = "runs `suite` from the source in a process of its own";
const SERVER = "spawns `suite serve` (tests/server.ts)";
const BROWSER = "the built binary in Chromium (playwright-core)";

export const SLOW_REASONS: Record<string, string> = {
  // `suite …` from the source, or a spawned server.
  "tests/cli/backup-schedule.test.ts": SERVER,
  "tests/cli/cli.test.ts": SUITE,
  "tests/cli/copy-to-postgres.test.ts": `${SUITE} (copy-to-postgres; PostgreSQL only)`,
  "tests/cli/crash-test.test.ts": "the crash test: servers killed and restarted",
  "tests/cli/first-run.test.ts": SERVER,
  "tests/cli/graceful-stop.test.ts": SERVER,
  "tests/cli/import-crash.test.ts": SERVER,
  "tests/cli/webhook-crash.test.ts": SERVER,
  "tests/cli/last-line.test.ts": SUITE,
  "tests/cli/operator.test.ts": SUITE,
  "tests/cli/operator-accounts.test.ts": SUITE,
  "tests/cli/port-in-use.test.ts": SUITE,
  "tests/cli/restore-keys.test.ts": `${SUITE} (tests/cli/backup-kit.ts)`,
  "tests/cli/restore.test.ts": SERVER,
  "tests/cli/storage-full.test.ts": `${SUITE}, on a small tmpfs`,
  "tests/cli/tenant-commands.test.ts": SERVER,
  "tests/cli/mail-settings.test.ts": SUITE,
  "tests/cli/tenant-delete.test.ts": `${SUITE}, and ${SERVER}`,
  "tests/cli/tenant-create-password.test.ts": SUITE,
  "tests/cli/tenant-disabled-flows.test.ts": `${SUITE} (tests/cli/user-tenant-kit.ts)`,
  "tests/cli/upgrade.test.ts": SERVER,
  "tests/cli/user-commands.test.ts": `${SUITE} (tests/cli/user-tenant-kit.ts), at a terminal through script(1)`,
  "tests/operator/console-backups-files.test.ts": "the console's \"Back up now\" runs `suite backup` from the source in a process of its own",
  "tests/crm/seed.test.ts": "`suite seed` in a process of its own, beside a spawned server",
  "tests/db/checkpointer.test.ts": "a Bun process with nothing but catch-ups to wait for (the live seed's case)",
  "tests/db/search-fold.test.ts": "a second Bun process folding the search counters, killed mid-way",
  "tests/db/wal-bound.test.ts": "`suite backup` in a process of its own",
  "tests/deploy/release.test.ts": "builds the release binary and runs it",
  "tests/mail/cli.test.ts": SUITE,
  "tests/metrics/prometheus.test.ts": "a real Prometheus scraping a spawned server",
  "tests/security/http-fuzz.test.ts": SERVER,
  "tests/security/key-file.test.ts": SUITE,
  "tests/security/races.test.ts": "two spawned servers on one file",
  "tests/security/secrets-in-logs.test.ts": SUITE,
  "tests/web/bad-host.test.ts": SERVER,
  // Other programs.
  "tests/http/openapi-tools.test.ts": "Redocly's CLI and the OpenAPI validator, each in a Bun process of its own",
  "tests/outbound/guard.test.ts": "openssl makes its test certificate authority",
  "tests/stores/postgres-open.test.ts": `${SUITE} against PostgreSQL`,
  // Several instances on one PostgreSQL database.
  "tests/multi-instance/crash-test.test.ts": "servers on PostgreSQL killed and restarted",
  "tests/multi-instance/events.test.ts": "spawned servers on one PostgreSQL database",
  "tests/multi-instance/instances.test.ts": "spawned servers on one PostgreSQL database",
  "tests/multi-instance/limits.test.ts": "spawned servers on one PostgreSQL database",
  "tests/multi-instance/mail.test.ts": "spawned servers on one PostgreSQL database",
  "tests/multi-instance/migrations.test.ts": "spawned servers on one PostgreSQL database",
  "tests/multi-instance/refresh.test.ts": "spawned servers on one PostgreSQL database",
  "tests/multi-instance/sessions.test.ts": "spawned servers on one PostgreSQL database",
  "tests/multi-instance/webhooks.test.ts": "spawned servers on one PostgreSQL database",
  // The web app in a browser.
  "tests/web/e2e/board.test.ts": BROWSER,
  "tests/web/e2e/bulk-changes.test.ts": BROWSER,
  "tests/web/e2e/saved-views.test.ts": BROWSER,
  "tests/web/e2e/webhooks.test.ts": BROWSER,
  "tests/web/e2e/create-once.test.ts": BROWSER,
  "tests/web/e2e/crm.test.ts": BROWSER,
  "tests/web/e2e/deal-page.test.ts": BROWSER,
  "tests/web/e2e/record-pages.test.ts": BROWSER,
  "tests/web/e2e/first-deal.test.ts": BROWSER,
  "tests/web/e2e/handoff.test.ts": BROWSER,
  "tests/web/e2e/members.test.ts": BROWSER,
  "tests/web/e2e/new-device.test.ts": BROWSER,
  "tests/web/e2e/operator.test.ts": BROWSER,
  "tests/web/e2e/oidc-providers.test.ts": BROWSER,
  "tests/web/e2e/passkeys.test.ts": BROWSER,
  "tests/web/e2e/sign-in-policy.test.ts": BROWSER,
  "tests/web/e2e/oidc-sign-in.test.ts": BROWSER,
  "tests/web/e2e/password.test.ts": BROWSER,
  "tests/web/e2e/security-log-cli.test.ts": `${BROWSER}, and \`suite\``,
  "tests/web/e2e/security-log.test.ts": BROWSER,
  "tests/web/e2e/security.test.ts": BROWSER,
  "tests/web/e2e/sign-in.test.ts": BROWSER,
  "tests/web/e2e/live-updates.test.ts": BROWSER,
  "tests/web/e2e/stages.test.ts": BROWSER,
  "tests/web/e2e/step-up.test.ts": BROWSER,
  "tests/web/e2e/team.test.ts": BROWSER,
  "tests/web/e2e/transfer.test.ts": BROWSER,
};

/** In-process, but too heavy for a lane of about a minute on 2 cores: each with its CPU time alone. */
export const HEAVY_IN_PROCESS: Record<string, string> = {
  "tests/security/bad-input.test.ts":
    "the property-based fuzz of every operation (180 generated requests each, about 14,000): 54 s of CPU alone, more than the rest of the lane on one core, and its 120 s limit is reached beside another worker on a loaded machine",
};

export const SLOW: string[] = [...Object.keys(SLOW_REASONS), ...Object.keys(HEAVY_IN_PROCESS)];
