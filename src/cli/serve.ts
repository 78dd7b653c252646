import { createApp } from "../app";
import { type Config, maskDatabaseUrl } from "../config";
import { createContext } from "../context";
import { startCheckpointer } from "../db/checkpointer";
import { diskRoom } from "../db/disk-room";
import { runAs, setStallLog, stallFigures, startLoopMonitor } from "../db/stall-monitor";
import { startSearchFold } from "../db/search-fold";
import { walDatasync } from "../db/group-commit";
import { threadedPasswordHasher } from "../security/passwords";
import pkg from "../../package.json";
import { firstRunLines } from "./first-run";
import { unavailable } from "./open";
import { whenPipeBreaks } from "../kernel/broken-pipe";

const HOUSEKEEPING_MS = 5 * 60_000;
const STOP_DEADLINE_MS = 10_000;
/** sysexits EX_UNAVAILABLE: the port this server was told to serve is not available to it. */
export const EXIT_PORT_IN_USE = 69;

/** One line on stderr, and the exit code the CLI documents. */
export class PortInUse extends Error {
  readonly exitCode = EXIT_PORT_IN_USE;
  constructor(readonly port: number) {
    super(`port ${port} is already in use (another suite serve?)`);
  }
}

/**
 * Serves until SIGTERM or SIGINT, then stops taking connections, lets the requests in flight
 * finish, closes the database (checkpointing the WAL), and exits 0 within 10 seconds.
 */
export async function serve(config: Config): Promise<void> {
  const ctx = createContext({ config, hasher: threadedPasswordHasher(config.hashConcurrency), walSync: walDatasync });
  // PostgreSQL opens behind a gate (its migration, the key check): listen only once it answers, or
  // exit with why it does not (unreachable, login refused, another release's schema).
  try {
    await ctx.ping();
  } catch (e) {
    await Promise.resolve(ctx.close()).catch(() => {});
    throw unavailable(config, e);
  }
  ctx.hasher.warm();
  const app = createApp(ctx);
  try {
    // The 1 MiB bound is ours (a JSON 413); Bun's own limit only backs it up. Elysia asks for
    // SO_REUSEPORT, under which a second server on the same port starts and silently takes half
    // the connections: one port, one server.
    app.listen({ port: config.port, hostname: config.host, maxRequestBodySize: 64 * 1024 * 1024, reusePort: false });
  } catch (e) {
    await ctx.close();
    if ((e as { code?: string }).code === "EADDRINUSE") throw new PortInUse(config.port);
    throw e;
  }
  ctx.metrics.gauge("suite_http_requests_in_flight", "Requests this instance is answering now", [], (set) => set({}, app.server?.pendingRequests ?? 0));
  // SQLite's WAL checkpoints and file backups; PostgreSQL has its own (pg_dump, base backups).
  const checkpointer = config.databaseUrl ? null : startCheckpointer(config.db);
  // SQLite's deal search counters follow deal writes through a pending table, folded here in short steps.
  // PostgreSQL's gram counters too, one organization's fold after another (stores/postgres/search-fold.ts).
  const warn = (message: string) => ctx.log({ level: "warn", msg: message });
  const fold = config.databaseUrl ? null : startSearchFold(ctx.db, undefined, warn);
  const pgFold = ctx.startSearchFold?.(warn) ?? null;
  lastLineOfDefence(ctx.log);
  // Always on: a held event loop or SQLite writer over 50 ms is one warning line naming its work.
  setStallLog(ctx.log);
  const stopLoopMonitor = startLoopMonitor();
  const timer = setInterval(() => void runAs("job housekeeping", () => ctx.housekeep()).catch(() => {}), HOUSEKEEPING_MS);
  timer.unref();
  const where = config.databaseUrl ? { database: maskDatabaseUrl(config.databaseUrl) } : { db: config.db };
  ctx.log({ level: "info", msg: "listening", version: pkg.version, url: `http://${config.host}:${app.server?.port}`, ...where });
  for (const room of diskRoom().filter((r) => r.low)) {
    ctx.log({ level: "warn", msg: "storage low: imports are refused until space is freed", dir: room.dir, free_mb: Math.floor(room.freeBytes / 1048576), reserve_mb: config.diskReserveMb });
  }

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    ctx.log({ level: "info", msg: "stopping", signal });
    const deadline = setTimeout(() => {
      ctx.log({ level: "error", msg: "stop deadline passed; exiting" });
      process.exit(1);
    }, STOP_DEADLINE_MS);
    clearInterval(timer);
    stopLoopMonitor();
    await ctx.backups.stop();
    await app.server?.stop(false);
    // Links asked for just before the stop are committed, and the send under way finishes.
    await ctx.magicLinks.settled();
    await ctx.mail.stop();
    await ctx.webhookSender.stop();
    fold?.stop();
    await pgFold?.stop();
    await checkpointer?.stop();
    await ctx.close();
    // The run's stall figures, for whoever reads the log (the bench, until a metrics endpoint does).
    ctx.log({ level: "info", msg: "stall figures", ...stallFigures() });
    clearTimeout(deadline);
    ctx.log({ level: "info", msg: "stopped" });
    process.exit(0);
  };
  // Installed before anything else is awaited: a SIGTERM just after /health first answers (a
  // process manager's quick restart) is a clean stop, not a kill by the default handler (exit 143).
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
  // The log's reader gone (a closed pipe): stop as on SIGTERM, quietly (src/kernel/broken-pipe.ts).
  whenPipeBreaks(() => void stop("EPIPE"));

  const hasOrganization = await ctx.repos.tenants.any();
  if (stopping) return;
  for (const line of firstRunLines(config, hasOrganization)) ctx.log(line);
  // Mail left pending by an earlier run (or leased by one that crashed) goes out now.
  runAs("job mail", () => ctx.mail.start());
  // Webhook deliveries left pending (or leased by a run that died: their lease runs out) go out now.
  runAs("job webhooks", () => ctx.webhookSender.start());
  // Imports an earlier run was writing when it died are undone (a file lands whole or not at
  // all). SQLite has one server, so every running job is orphaned; on PostgreSQL only those whose
  // lease ran out (their server stopped renewing it), here and at each housekeeping round.
  const recoverJobs = (t: number) => void ctx.jobs.recover(t).catch((e) => ctx.log({ level: "error", msg: "import job recovery failed", message: (e as Error).message }));
  recoverJobs(config.databaseUrl ? ctx.now() : Number.MAX_SAFE_INTEGER);
  if (config.databaseUrl) setInterval(() => recoverJobs(ctx.now()), HOUSEKEEPING_MS).unref();
  // Organization deletions a stopped process left half-done (suite tenant delete, killed) finish now.
  void runAs("job organization deletion", () => ctx.organizationDeletion.resumeAll()).catch((e) =>
    ctx.log({ level: "error", msg: "organization deletion failed", message: (e as Error).message }),
  );
  if (config.databaseUrl && config.backupDir) {
    ctx.log({ level: "warn", msg: "SUITE_BACKUP_DIR is ignored on PostgreSQL: back it up with pg_dump or base backups and WAL archiving" });
  }
  // The schedule in effect: the console's saved one, else SUITE_BACKUP_DIR's (none on PostgreSQL).
  await runAs("job backup schedule", () => ctx.backups.startSchedule()).catch((e: unknown) =>
    ctx.log({ level: "error", msg: "backup schedule failed", error: (e as Error).message }),
  );
}

/**
 * A failure no request caught (a promise someone forgot, a timer's callback) is logged, not
 * fatal: one organization's odd request must not stop every organization's service, and each
 * request's own failures are already answered and logged where they happen (http/core.ts). The
 * database stays consistent whatever a request left undone: every write is one transaction.
 */
export function lastLineOfDefence(log: (line: Record<string, unknown>) => void): void {
  const report = (kind: string) => (e: unknown) => {
    const err = e as Error | undefined;
    try {
      log({ level: "error", msg: kind, error: err?.name, message: err?.message, stack: err?.stack });
    } catch {
      // Nowhere left to report it.
    }
  };
  process.on("unhandledRejection", report("unhandled rejection"));
  process.on("uncaughtException", report("uncaught exception"));
}
