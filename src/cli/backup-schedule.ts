import { chmodSync, existsSync, mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import { setPriority } from "node:os";
import { basename, join, resolve } from "node:path";
import type { Config } from "../config";
import { isTempOf } from "../db/backup-files";

type Log = (line: Record<string, unknown>) => void;

/**
 * Scheduled backups while serving (SUITE_BACKUP_DIR, _EVERY, _KEEP). Each one is `suite backup`
 * itself, run as a child process of this executable: the same consistent copy, integrity check,
 * key stripping and atomic write as the command, and none of its work (a VACUUM INTO of gigabytes,
 * an integrity check reading every page) on this process's event loop or its connection. In WAL
 * mode the child's read transaction does not hold up the server's writers.
 */

export interface BackupSchedule {
  /** Ends the timer, and a backup under way (its temp file is removed). */
  stop(): Promise<void>;
}

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

/** How to run this executable again: the compiled binary is its own command; from source, bun and main.ts. */
function selfCommand(): string[] {
  const main = Bun.main;
  const compiled = main.startsWith("/$bunfs/") || /^[A-Za-z]:[\\/]~BUN[\\/]/.test(main);
  return compiled ? [process.execPath] : [process.execPath, main];
}

export function startBackupSchedule(config: Config, log: Log): BackupSchedule | null {
  if (!config.backupDir) return null;
  const dir = resolve(config.backupDir);
  const everyMs = config.backupEvery * 3_600_000;
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
  // Backups hold every record and password hash: the folder is the owner's alone.
  if ((statSync(dir).mode & 0o077) !== 0) chmodSync(dir, 0o700);
  const base = basename(config.db).replace(/\.db$/, "");
  // Temp files of a backup that failed, or that a crash interrupted (any of this database's).
  const removeTemps = (name?: string) => {
    for (const f of readdirSync(dir)) {
      if (name ? isTempOf(f, name) : f.startsWith(`.${base}-`) && /\.tmp(-wal|-shm|-journal)?$/.test(f)) rmSync(join(dir, f), { force: true });
    }
  };
  removeTemps();

  let timer: ReturnType<typeof setTimeout> | null = null;
  let running: { proc: Bun.Subprocess; done: Promise<void> } | null = null;
  let stopped = false;

  const prune = (): string[] => {
    const all = listBackups(dir, config.db);
    const old = all.slice(0, Math.max(0, all.length - config.backupKeep)).map((b) => b.name);
    for (const name of old) rmSync(join(dir, name), { force: true });
    return old;
  };

  async function runOnce(): Promise<void> {
    const started = new Date();
    const name = backupName(config.db, started);
    const path = join(dir, name);
    log({ level: "info", msg: "backup started", path });
    const proc = Bun.spawn([...selfCommand(), "backup", path, "--db", config.db], { stdout: "pipe", stderr: "pipe", env: process.env });
    try {
      // Below the server's priority: on a small machine the copy takes the cores requests leave over.
      setPriority(proc.pid, 10);
    } catch {
      // Not allowed here (some containers); the copy still runs, at normal priority.
    }
    const done = (async () => {
      const [, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
      const ms = Date.now() - started.getTime();
      removeTemps(name);
      // The command gives the file its name only once it is checked and on disk: a child stopped
      // after that (the server stopping) still leaves a good backup.
      if (!existsSync(path)) {
        const why = stderr.trim().split("\n").pop()?.replace(/^suite: /, "") ?? "";
        log({ level: "error", msg: "backup failed", path, exit: code, error: stopped ? "stopped with the server" : why, ms });
        return;
      }
      const removed = prune();
      log({ level: "info", msg: "backup written", path, bytes: statSync(path).size, ms, integrity: "ok", removed });
    })();
    running = { proc, done };
    await done.catch((e: unknown) => log({ level: "error", msg: "backup failed", path, error: e instanceof Error ? e.message : String(e) }));
    running = null;
  }

  // Timers take at most 2^31-1 ms (24.8 days; SUITE_BACKUP_EVERY goes to a year): a longer wait is
  // several timers in a row. Each period counts from the previous backup's start.
  const scheduleAt = (due: number) => {
    if (stopped) return;
    timer = setTimeout(async () => {
      if (stopped) return;
      if (Date.now() < due) return scheduleAt(due);
      const started = Date.now();
      await runOnce();
      scheduleAt(started + everyMs);
    }, Math.min(2 ** 31 - 1, Math.max(0, due - Date.now())));
    timer.unref();
  };
  // The next one is due a period after the newest already there: a server restarted daily still
  // backs up daily, and one that has none yet (or an overdue one) makes one now.
  const newest = listBackups(dir, config.db).at(-1);
  scheduleAt(newest ? Math.min(Date.now() + everyMs, newest.at + everyMs) : Date.now());
  log({ level: "info", msg: "scheduled backups", dir, every_hours: config.backupEvery, keep: config.backupKeep });

  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      const r = running as { proc: Bun.Subprocess; done: Promise<void> } | null;
      if (r) {
        r.proc.kill("SIGTERM");
        await r.done.catch(() => {});
      }
    },
  };
}
