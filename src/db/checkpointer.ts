import { closeSync, openSync, readSync } from "node:fs";
import { resolve as absolute } from "node:path";
import { type WalFigures, noteWal } from "./stall-monitor";

/**
 * WAL checkpoints on a thread of their own. SQLite's automatic checkpoint runs inside whichever
 * commit crosses 1,000 WAL pages, so under a stream of small writes (a login flood: rate-limit
 * counters, sessions, audit rows) every second or so one request's event-loop turn copies megabytes
 * and fsyncs the file, and every request queued behind it waits. A PASSIVE checkpoint from another
 * connection never blocks the writer or the readers, so doing it here, often, keeps the WAL short
 * (short WALs also keep page lookups fast) and the event loop free. The automatic checkpoint
 * stays on as the fallback should this thread fall behind.
 *
 * A PASSIVE checkpoint copies the WAL into the database but never shrinks the file: SQLite reuses
 * it from the start, so after an import or a backup it stayed at its largest (1.2 and 2.5 GB
 * measured) until shutdown. Once the WAL is wholly copied and no frame was added for IDLE_TICKS
 * ticks (the writer is idle), this thread runs a TRUNCATE checkpoint, without waiting for any
 * lock (busy_timeout 0): with nothing left to copy it only cuts the file to zero bytes, here, off
 * the event loop; a writer or an old reader in the way just means the next idle tick tries again.
 * Each tick reports the WAL's size and checkpoint lag to the stall monitor's figures.
 */
const WORKER_SOURCE = `
const { Database } = require("bun:sqlite");
const { statSync } = require("node:fs");
let db = null;
let timer = null;
let opened = null;
let lastLog = -1, idle = 0, fullAt = Date.now(), maxWal = 0, last = "", lagFrames = 0;
const walBytes = (file) => { try { return statSync(file + "-wal").size; } catch { return 0; } };
function report(figures) {
  const key = JSON.stringify(figures);
  if (key !== last) { last = key; postMessage({ figures }); }
}
function tick(file, idleTicks) {
  let r;
  try { r = db.query("PRAGMA wal_checkpoint(PASSIVE)").get(); } catch {
    // A checkpoint that fails (a full disk) still reports the WAL: that is when it matters most.
    const size = walBytes(file);
    if (size > maxWal) maxWal = size;
    report({ walBytes: size, checkpointLagFrames: lagFrames, checkpointLagMs: Date.now() - fullAt, maxWalBytes: maxWal });
    return false;
  }
  const copied = r.busy === 0 && r.checkpointed >= r.log;
  idle = r.log === lastLog ? idle + 1 : 0;
  lastLog = r.log;
  let size = walBytes(file);
  if (copied && idle >= idleTicks && size > 0) {
    try {
      const t = db.query("PRAGMA wal_checkpoint(TRUNCATE)").get();
      if (t.busy === 0) { size = walBytes(file); lastLog = 0; }
    } catch {}
  }
  if (copied) fullAt = Date.now();
  if (size > maxWal) maxWal = size;
  lagFrames = Math.max(0, r.log - r.checkpointed);
  report({ walBytes: size, checkpointLagFrames: lagFrames, checkpointLagMs: copied ? 0 : Date.now() - fullAt, maxWalBytes: maxWal });
  return copied;
}
self.onmessage = (event) => {
  const m = event.data;
  if (m.open) {
    db = new Database(m.open);
    opened = m;
    // PASSIVE never waits; TRUNCATE must not either: it holds the writer's lock while it waits.
    db.run("PRAGMA busy_timeout = 0");
    timer = setInterval(() => tick(m.open, m.idleTicks), m.everyMs);
    // The first figures at once, not a period later: a short-lived server reports its WAL too.
    tick(m.open, m.idleTicks);
  } else if (m.catchUp !== undefined) {
    // A job between its batches: copy the WAL now, so that its next batch starts it over.
    postMessage({ caughtUp: m.catchUp, copied: db ? tick(opened.open, opened.idleTicks) : false });
  } else if (m.close) {
    clearInterval(timer);
    try { db && db.close(); } catch {}
    postMessage({ closed: true });
  }
};`;

export interface Checkpointer {
  /** Stops checkpointing and closes this thread's connection (before the main one closes). */
  stop(): Promise<void>;
}

/** Ticks with no new WAL frame before the file is truncated: 2 × 200 ms of an idle writer. */
export const IDLE_TICKS = 2;

/**
 * A job's batches write the WAL faster than this thread's ticks copy it, and SQLite starts the WAL
 * over only when a write begins with every frame copied, which never happens while batches run
 * back to back: the WAL grew until the writer's own automatic checkpoint copied and fsynced it
 * inside a batch, on the event loop. So between its batches a job calls walCatchUp. Past
 * CATCH_UP_FRAMES (4 MiB of 4 KiB pages) not copied, it asks this thread to copy them and goes
 * on writing meanwhile (the copy and its fsyncs run beside the job's next batches, on the other
 * core and the disk); once the WAL is RESTART_FRAMES long it waits, off the event loop, for the
 * rest to be copied, and its next batch starts the WAL over. A bulk stage change of 100,158 deals
 * at a million (bench/bulk.ts, quiet machine): 64-67 s with batches held up to 203-228 ms → 50 s
 * waiting for a copy at every 4,096 frames. An import of 30,000 deals into 1.1M (bench/probes/
 * import-batch-cost.ts) waited that way 102 times, 6.9 s of its 14.3 (68 ms a copy of 16 MiB,
 * half of it the fsyncs); copying ahead, 71 times, 3.1 s of 11.0. The writer's own automatic
 * checkpoint (WAL_AUTOCHECKPOINT, database.ts) stays above RESTART_FRAMES, the fallback only.
 */
export const CATCH_UP_FRAMES = 1024;
/**
 * The WAL's length (24 MiB of 4 KiB pages) at which a job waits for the copy to end, so that the
 * WAL starts over: under WAL_AUTOCHECKPOINT by a few batches' frames, so that no commit of the
 * job's runs the automatic checkpoint on the event loop.
 */
export const RESTART_FRAMES = 6144;
/** Tries of a catch-up before the job goes on anyway (a reader can keep frames from being copied). */
const CATCH_UP_TRIES = 20;

interface Running {
  catchUp(): Promise<boolean>;
  /** The copy asked for ahead of need, while it runs. */
  ahead: Promise<boolean> | null;
  shm: string;
  fd: number | null;
}
/** The running checkpointers by database file. */
const running = new Map<string, Running>();
const header = Buffer.alloc(100);

/**
 * The WAL's frames (mxFrame) and how many of them are copied (nBackfill), read from the wal-index
 * (`-shm`: https://www.sqlite.org/walformat.html, native byte order, at offsets 16 and 96).
 */
function walFrames(r: Running): { frames: number; copied: number } | null {
  try {
    r.fd ??= openSync(r.shm, "r");
    if (readSync(r.fd, header, 0, 100, 0) < 100) return null;
    return { frames: header.readUInt32LE(16), copied: header.readUInt32LE(96) };
  } catch {
    return null;
  }
}

/**
 * Between a job's batches (SQLite): when the WAL holds CATCH_UP_FRAMES or more frames not copied
 * yet, has the checkpointer's thread copy them while the job goes on; when it is RESTART_FRAMES
 * long, waits for every frame to be copied (the event loop serves others meanwhile). Nothing to
 * wait for without a checkpointer (tests, the command line).
 */
export async function walCatchUp(file: string): Promise<void> {
  const key = absolute(file);
  const r = running.get(key);
  if (!r) return;
  for (let i = 0; i < CATCH_UP_TRIES && running.get(key) === r; i++) {
    const f = walFrames(r);
    if (!f || f.copied >= f.frames) return;
    if (f.frames < RESTART_FRAMES) {
      if (f.frames - f.copied >= CATCH_UP_FRAMES && !r.ahead) r.ahead = r.catchUp().finally(() => (r.ahead = null));
      return;
    }
    if (r.ahead) await r.ahead;
    else if (await r.catchUp()) return;
    else await Bun.sleep(5);
  }
}

export function startCheckpointer(file: string, everyMs = 200, idleTicks = IDLE_TICKS): Checkpointer {
  const url = URL.createObjectURL(new Blob([WORKER_SOURCE], { type: "application/javascript" }));
  const worker = new Worker(url);
  worker.unref();
  let stopped: (() => void) | null = null;
  let asked = 0;
  const waiting = new Map<number, (copied: boolean) => void>();
  worker.onmessage = (event: MessageEvent<{ figures?: WalFigures; closed?: boolean; caughtUp?: number; copied?: boolean }>) => {
    if (event.data.figures) noteWal(event.data.figures);
    if (event.data.caughtUp !== undefined) {
      waiting.get(event.data.caughtUp)?.(event.data.copied === true);
      waiting.delete(event.data.caughtUp);
      if (waiting.size === 0) worker.unref();
    }
    if (event.data.closed) stopped?.();
  };
  worker.postMessage({ open: file, everyMs, idleTicks });
  const entry: Running = {
    shm: `${file}-shm`,
    fd: null,
    ahead: null,
    // While a catch-up is asked, the thread keeps the process alive: a process with nothing else
    // to wait for (`suite seed`, which has no server) exited at once, code 0, in the middle of its work.
    catchUp: () =>
      new Promise<boolean>((resolve) => {
        const id = ++asked;
        if (waiting.size === 0) worker.ref();
        waiting.set(id, resolve);
        worker.postMessage({ catchUp: id });
      }),
  };
  const key = absolute(file);
  running.set(key, entry);
  return {
    stop: () =>
      new Promise<void>((resolve) => {
        const done = () => {
          if (running.get(key) === entry) running.delete(key);
          if (entry.fd !== null) closeSync(entry.fd);
          entry.fd = null;
          for (const w of waiting.values()) w(false);
          waiting.clear();
          worker.terminate();
          resolve();
        };
        const timeout = setTimeout(done, 2000);
        stopped = () => {
          clearTimeout(timeout);
          done();
        };
        worker.postMessage({ close: true });
      }),
  };
}
