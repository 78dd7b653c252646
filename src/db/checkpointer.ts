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
    return;
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
}
self.onmessage = (event) => {
  const m = event.data;
  if (m.open) {
    db = new Database(m.open);
    // PASSIVE never waits; TRUNCATE must not either: it holds the writer's lock while it waits.
    db.run("PRAGMA busy_timeout = 0");
    timer = setInterval(() => tick(m.open, m.idleTicks), m.everyMs);
    // The first figures at once, not a period later: a short-lived server reports its WAL too.
    tick(m.open, m.idleTicks);
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

export function startCheckpointer(file: string, everyMs = 200, idleTicks = IDLE_TICKS): Checkpointer {
  const url = URL.createObjectURL(new Blob([WORKER_SOURCE], { type: "application/javascript" }));
  const worker = new Worker(url);
  worker.unref();
  let stopped: (() => void) | null = null;
  worker.onmessage = (event: MessageEvent<{ figures?: WalFigures; closed?: boolean }>) => {
    if (event.data.figures) noteWal(event.data.figures);
    if (event.data.closed) stopped?.();
  };
  worker.postMessage({ open: file, everyMs, idleTicks });
  return {
    stop: () =>
      new Promise<void>((resolve) => {
        const done = () => {
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
