import { statfsSync } from "node:fs";
import { dirname } from "node:path";
import type { Config } from "../config";
import type { MailStore } from "../mail/repo";
import type { JobsStore } from "../crm/export-import/jobs-repo";
import type { WebhooksStore } from "../webhooks/repo";
import type { Metrics } from "./recorder";
import { stallFigures } from "../db/stall-monitor";

/**
 * The gauges read from the stores and the machine when Prometheus scrapes: the mail backlog, the
 * stall monitor's counts and, on SQLite, the longest write hold, the WAL and the free space beside
 * the database (what the disk alert watches). Each read is one
 * small query or system call, made per scrape, never per request.
 */
export function registerServerGauges(
  metrics: Metrics,
  d: { config: Config; mail: MailStore; jobs: JobsStore; webhooks: Pick<WebhooksStore, "backlog">; now: () => number; pgPool?: () => { inFlight: number; max: number } },
): void {
  metrics.gauge("suite_mail_outbox", "Mail in the outbox by status (pending, sending, failed; sent mail is not counted)", ["status"], async (set) => {
    const b = await d.mail.backlog();
    for (const status of ["pending", "sending", "failed"] as const) set({ status }, b[status]);
  });
  metrics.gauge("suite_mail_oldest_pending_seconds", "Age of the oldest mail waiting to be sent; 0 when none waits", [], async (set) => {
    const b = await d.mail.backlog();
    set({}, b.oldestPendingAt === null ? 0 : Math.max(0, (d.now() - b.oldestPendingAt) / 1000));
  });
  metrics.gauge("suite_jobs_running", "Jobs running now in every organization, by kind (one row an organization at most: a small index)", ["kind"], async (set) => {
    for (const r of await d.jobs.runningByKind()) set({ kind: r.kind }, r.n);
  });
  metrics.gauge("suite_webhook_deliveries", "Webhook deliveries waiting in every organization: pending (all), failing (pending whose last attempt failed)", ["status"], async (set) => {
    const b = await d.webhooks.backlog();
    set({ status: "pending" }, b.pending);
    set({ status: "failing" }, b.failing);
  });
  const pgPool = d.pgPool;
  if (pgPool) {
    metrics.gauge("suite_pg_pool_in_use", "PostgreSQL statements and transactions of this instance running or waiting for a connection", [], (set) => set({}, pgPool().inFlight));
    metrics.gauge("suite_pg_pool_max", "Connections this instance's PostgreSQL pool may open", [], (set) => set({}, pgPool().max));
  }
  // The stall monitor's figures (db/stall-monitor.ts): limits passed, the longest write hold, the WAL.
  metrics.gauge("suite_stalls", "Times the event loop or a SQLite write transaction was held past 50 ms since start, by kind", ["kind"], (set) => {
    const f = stallFigures();
    set({ kind: "event_loop" }, f.loopStalls);
    set({ kind: "write_hold" }, f.writeStalls);
  });
  if (d.config.databaseUrl !== null || d.config.db === ":memory:") return;
  metrics.gauge("suite_sqlite_write_hold_max_seconds", "The longest SQLite write transaction since start (BEGIN IMMEDIATE, its wait included, to COMMIT)", [], (set) => set({}, stallFigures().maxWriteHoldMs / 1000));
  metrics.gauge("suite_sqlite_wal_bytes", "Size of the SQLite -wal file at the checkpointer's last look", [], (set) => set({}, stallFigures().wal?.walBytes ?? 0));
  metrics.gauge("suite_sqlite_checkpoint_lag_seconds", "Time since the WAL was last wholly copied into the database", [], (set) => set({}, (stallFigures().wal?.checkpointLagMs ?? 0) / 1000));
  const folder = dirname(d.config.db);
  metrics.gauge("suite_disk_free_bytes", "Free space (for this user) on the file system of the SQLite database", [], (set) => {
    const s = statfsSync(folder);
    set({}, s.bavail * s.bsize);
  });
  metrics.gauge("suite_disk_size_bytes", "Size of the file system of the SQLite database", [], (set) => {
    const s = statfsSync(folder);
    set({}, s.blocks * s.bsize);
  });
}
