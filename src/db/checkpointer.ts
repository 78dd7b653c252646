/**
 * WAL checkpoints on a thread of their own. SQLite's automatic checkpoint runs inside whichever
 * commit crosses 1,000 WAL pages, so under a stream of small writes (a login flood: rate-limit
 * counters, sessions, audit rows) every second or so one request's event-loop turn copies megabytes
 * and fsyncs the file, and every request queued behind it waits. A PASSIVE checkpoint from another
 * connection never blocks the writer or the readers, so doing it here, often, keeps the WAL short
 * (short WALs also keep page lookups fast) and the event loop free. The automatic checkpoint
 * stays on as the fallback should this thread fall behind.
 */
const WORKER_SOURCE = `
const { Database } = require("bun:sqlite");
let db = null;
let timer = null;
self.onmessage = (event) => {
  const m = event.data;
  if (m.open) {
    db = new Database(m.open);
    db.run("PRAGMA busy_timeout = 5000");
    timer = setInterval(() => {
      try { db.run("PRAGMA wal_checkpoint(PASSIVE)"); } catch {}
    }, m.everyMs);
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

export function startCheckpointer(file: string, everyMs = 200): Checkpointer {
  const url = URL.createObjectURL(new Blob([WORKER_SOURCE], { type: "application/javascript" }));
  const worker = new Worker(url);
  worker.unref();
  worker.postMessage({ open: file, everyMs });
  return {
    stop: () =>
      new Promise<void>((resolve) => {
        const done = () => {
          worker.terminate();
          resolve();
        };
        const timeout = setTimeout(done, 2000);
        worker.onmessage = () => {
          clearTimeout(timeout);
          done();
        };
        worker.postMessage({ close: true });
      }),
  };
}
