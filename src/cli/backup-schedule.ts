import { chmodSync, existsSync, mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import { setPriority } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import type { Config } from "../config";
import { isTempOf } from "../db/backup-files";

type Log = (line: Record<string, unknown>) => void;

/**
 * Backups while serving: the scheduled ones (SUITE_BACKUP_DIR, _EVERY, _KEEP, or the schedule the
 * operator console saved) and the console's "Back up now". Each one is `suite backup` itself, run
 * as a child process of this executable: the same consistent copy, integrity check, key stripping
 * (no key, no secret in clear, in a backup) and atomic write as the command, and none of its work
 * (a VACUUM INTO of gigabytes, an integrity check reading every page) on this process's event
 * loop or its connection. In WAL mode the child's read transaction does not hold up the writers.
 * SQLite only: one server per file, so one schedule runs; PostgreSQL has pg_dump and base backups.
 */

/** `suite-2026-11-23T21-45-00.123Z.db` for the database `suite.db`: sorts by time; the time is the backup's start. */
export const backupName = (dbFile: string, at: Date): string =>
  `${basename(dbFile).replace(/\.db$/, "")}-${at.toISOString().replace(/:/g, "-")}.db`;

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The backups of `dbFile` this suite wrote in `dir`, oldest first: only names it makes itself. */
export function listBackups(dir: string, dbFile: string): { name: string; at: number }[] {
  const re = new RegExp(`^${escape(basename(dbFile).replace(/\.db$/, ""))}-(\\d{4}-\\d{2}-\\d{2})T(\\d{2})-(\\d{2})-(\\d{2}\\.\\d{3})Z\\.db$`);
  const found: { name: string; at: number }[] = [];
  for (const name of existsSync(dir) ? readdirSync(dir) : []) {
    const m = re.exec(name);
    if (m) found.push({ name, at: Date.parse(`${m[1]}T${m[2]}:${m[3]}:${m[4]}Z`) });
  }
  return found.sort((a, b) => a.at - b.at);
}

/** How to run this executable again: the compiled binary is its own command; from source, bun and main.ts beside this folder. */
function selfCommand(): string[] {
  const main = Bun.main;
  const compiled = main.startsWith("/$bunfs/") || /^[A-Za-z]:[\\/]~BUN[\\/]/.test(main);
  return compiled ? [process.execPath] : [process.execPath, join(import.meta.dir, "..", "main.ts")];
}

/** The schedule the console saves (settings row `backup_schedule`): daily at a time (UTC), keeping the newest `keep`. */
export interface SavedBackupSchedule {
  enabled: boolean;
  /** `HH:MM`, UTC. */
  at_utc: string;
  keep: number;
}

/** The schedule in effect: the console's once saved, else the environment's, else none. */
export interface BackupScheduleInEffect {
  source: "console" | "environment" | "none";
  enabled: boolean;
  at_utc: string | null;
  every_hours: number | null;
  keep: number | null;
}

export interface BackupRun {
  name: string;
  by: string;
  started_at: number;
  /** Bytes of the copy written so far, and the database's size when it began (with its WAL). */
  bytes_done: number;
  bytes_total: number;
}

export interface BackupOutcome {
  name: string;
  by: string;
  ok: boolean;
  error: string | null;
  bytes: number | null;
  finished_at: number;
}

export interface BackupsDeps {
  config: Config;
  /** The stores in use are PostgreSQL's (tests open them without SUITE_DATABASE_URL). */
  postgres: boolean;
  log: Log;
  now?: () => number;
  /** The console's saved schedule (JSON), and saving it. */
  readSaved: () => Promise<string | null>;
  save: (json: string) => Promise<void>;
}

const DAY_MS = 24 * 3_600_000;

/** The last `HH:MM` UTC at or before `t`. */
function lastSlot(atUtc: string, t: number): number {
  const [h, m] = atUtc.split(":").map(Number) as [number, number];
  const d = new Date(t);
  const slot = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), h, m);
  return slot <= t ? slot : slot - DAY_MS;
}

/**
 * When the next scheduled backup is due. Every N hours (the environment's): a period after the
 * newest backup, now when none is there. Daily at a time (the console's): the next such time,
 * now when no backup was made since the last one (the server was down, or the schedule is new).
 */
export function nextDue(s: BackupScheduleInEffect, newestAt: number | null, now: number): number | null {
  if (!s.enabled) return null;
  if (s.at_utc) {
    const slot = lastSlot(s.at_utc, now);
    return newestAt !== null && newestAt >= slot ? slot + DAY_MS : now;
  }
  const every = (s.every_hours ?? 24) * 3_600_000;
  return newestAt !== null ? Math.min(now + every, newestAt + every) : now;
}

export function createBackups(d: BackupsDeps) {
  const { config, log } = d;
  const now = d.now ?? Date.now;
  const unavailable: string | null = d.postgres || config.databaseUrl
    ? "On PostgreSQL the suite makes no backups itself: use pg_dump for a logical copy, or base backups with WAL archiving, and keep the key file apart from them."
    : config.db === ":memory:"
      ? "This server's database is in memory: there is nothing on disk to back up."
      : null;
  /** SUITE_BACKUP_DIR, else a `backups` folder beside the database. */
  const dir = unavailable ? null : resolve(config.backupDir ?? join(dirname(resolve(config.db)), "backups"));
  const base = basename(config.db).replace(/\.db$/, "");

  let running: (BackupRun & { proc: Bun.Subprocess; done: Promise<void> }) | null = null;
  let last: BackupOutcome | null = null;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let scheduling = false;
  let stopped = false;

  const ensureDir = (): string => {
    if (!dir) throw new Error(unavailable ?? "no backups here");
    if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
    // Backups hold every record and password hash: the folder is the owner's alone.
    if ((statSync(dir).mode & 0o077) !== 0) chmodSync(dir, 0o700);
    return dir;
  };
  // Temp files of a backup that failed, or that a crash interrupted (any of this database's).
  const removeTemps = (name?: string) => {
    if (!dir || !existsSync(dir)) return;
    for (const f of readdirSync(dir)) {
      if (name ? isTempOf(f, name) : f.startsWith(`.${base}-`) && /\.tmp(-wal|-shm|-journal)?$/.test(f)) rmSync(join(dir, f), { force: true });
    }
  };
  const sizeOr0 = (path: string) => {
    try {
      return statSync(path).size;
    } catch {
      return 0;
    }
  };

  async function scheduleInEffect(): Promise<BackupScheduleInEffect> {
    const saved = await d.readSaved();
    if (saved) {
      const s = JSON.parse(saved) as SavedBackupSchedule;
      return { source: "console", enabled: s.enabled, at_utc: s.at_utc, every_hours: null, keep: s.keep };
    }
    if (config.backupDir) return { source: "environment", enabled: true, at_utc: null, every_hours: config.backupEvery, keep: config.backupKeep };
    return { source: "none", enabled: false, at_utc: null, every_hours: null, keep: null };
  }

  const list = () => (dir ? listBackups(dir, config.db) : []);

  const prune = (keep: number | null): string[] => {
    if (!dir || keep === null) return [];
    const all = list();
    const old = all.slice(0, Math.max(0, all.length - keep)).map((b) => b.name);
    for (const name of old) rmSync(join(dir, name), { force: true });
    return old;
  };

  /** Starts one backup in a child process; null when one is under way already. `done` settles when it ends (never rejects). */
  function start(by: string): { run: BackupRun; done: Promise<void> } | null {
    if (running) return null;
    const folder = ensureDir();
    const started = new Date(now());
    const name = backupName(config.db, started);
    const path = join(folder, name);
    log({ level: "info", msg: "backup started", path, by });
    const proc = Bun.spawn([...selfCommand(), "backup", path, "--db", config.db], { stdout: "pipe", stderr: "pipe", env: process.env });
    try {
      // Below the server's priority: on a small machine the copy takes the cores requests leave over.
      setPriority(proc.pid, 10);
    } catch {
      // Not allowed here (some containers); the copy still runs, at normal priority.
    }
    const run: BackupRun = { name, by, started_at: started.getTime(), bytes_done: 0, bytes_total: sizeOr0(config.db) + sizeOr0(`${config.db}-wal`) };
    const done = (async () => {
      const [, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
      const ms = now() - started.getTime();
      removeTemps(name);
      // The command gives the file its name only once it is checked and on disk: a child stopped
      // after that (the server stopping) still leaves a good backup.
      if (!existsSync(path)) {
        const why = stopped ? "stopped with the server" : (stderr.trim().split("\n").pop()?.replace(/^suite: /, "") ?? "");
        log({ level: "error", msg: "backup failed", path, exit: code, error: why, ms });
        last = { name, by, ok: false, error: why || `the backup command ended with code ${code}`, bytes: null, finished_at: now() };
        return;
      }
      const removed = prune((await scheduleInEffect().catch(() => null))?.keep ?? null);
      const bytes = statSync(path).size;
      log({ level: "info", msg: "backup written", path, bytes, ms, integrity: "ok", removed });
      last = { name, by, ok: true, error: null, bytes, finished_at: now() };
    })()
      .catch((e: unknown) => {
        const error = e instanceof Error ? e.message : String(e);
        log({ level: "error", msg: "backup failed", path, error });
        last = { name, by, ok: false, error, bytes: null, finished_at: now() };
      })
      .finally(() => {
        running = null;
      });
    running = { ...run, proc, done };
    return { run, done };
  }

  /** The backup under way with its progress (the temp file's size against the database's), and the last one's outcome. */
  function state(): { running: BackupRun | null; last: BackupOutcome | null } {
    const r = running;
    if (!r || !dir) return { running: null, last };
    let written = 0;
    for (const f of existsSync(dir) ? readdirSync(dir) : []) if (isTempOf(f, r.name) && f.endsWith(".tmp")) written += sizeOr0(join(dir, f));
    return { running: { name: r.name, by: r.by, started_at: r.started_at, bytes_done: Math.min(written, r.bytes_total), bytes_total: r.bytes_total }, last };
  }

  /** A backup's path by its name, only for names this suite makes and files that exist. */
  function pathOf(name: string): string | null {
    if (!dir || !list().some((b) => b.name === name)) return null;
    return join(dir, name);
  }

  function remove(name: string): boolean {
    const path = pathOf(name);
    if (!path || running?.name === name) return false;
    rmSync(path, { force: true });
    return true;
  }

  // Timers take at most 2^31-1 ms (24.8 days; SUITE_BACKUP_EVERY goes to a year): a longer wait is
  // several timers in a row.
  async function scheduleNext(): Promise<void> {
    if (timer) clearTimeout(timer);
    timer = null;
    if (stopped || !scheduling || !dir) return;
    const s = await scheduleInEffect();
    const due = nextDue(s, list().at(-1)?.at ?? null, now());
    if (due === null) return;
    const wait = (ms: number) => {
      timer = setTimeout(async () => {
        if (stopped) return;
        if (now() < due) return wait(Math.min(2 ** 31 - 1, due - now()));
        // A backup the console started is under way: the schedule's waits for it, then looks again.
        const started = start("schedule") ?? { done: running?.done ?? Promise.resolve() };
        await started.done;
        await scheduleNext().catch((e: unknown) => log({ level: "error", msg: "backup schedule failed", error: (e as Error).message }));
      }, Math.min(2 ** 31 - 1, Math.max(0, ms)));
      timer.unref();
    };
    wait(due - now());
  }

  return {
    /** Why this server makes no backups (PostgreSQL, an in-memory database); null when it does. */
    unavailable,
    dir,
    /** Newest first, with sizes. */
    list: () =>
      list()
        .reverse()
        .map((b) => ({ name: b.name, at: b.at, bytes: sizeOr0(join(dir!, b.name)) })),
    start,
    state,
    pathOf,
    remove,
    schedule: async () => {
      const s = await scheduleInEffect();
      return { ...s, next_at: dir ? nextDue(s, list().at(-1)?.at ?? null, now()) : null };
    },
    /** Saves the console's schedule and, when the scheduler runs here, moves its timer. */
    async saveSchedule(s: SavedBackupSchedule): Promise<void> {
      await d.save(JSON.stringify(s));
      await scheduleNext();
    },
    /** Starts the schedule (the server does, once it listens). */
    async startSchedule(): Promise<void> {
      if (!dir) return;
      const s = await scheduleInEffect();
      if (s.source === "environment") ensureDir();
      removeTemps();
      scheduling = true;
      await scheduleNext();
      if (s.enabled) log({ level: "info", msg: "scheduled backups", dir, every_hours: s.every_hours, at_utc: s.at_utc, keep: s.keep, source: s.source });
    },
    /** Ends the timer, and a backup under way (its temp file is removed). */
    async stop(): Promise<void> {
      stopped = true;
      if (timer) clearTimeout(timer);
      const r = running;
      if (r) {
        r.proc.kill("SIGTERM");
        await r.done.catch(() => {});
      }
    },
  };
}

export type Backups = ReturnType<typeof createBackups>;
