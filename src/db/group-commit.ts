import { closeSync, fdatasync, open } from "node:fs";
import type { Db } from "./database";

/**
 * Group commit, off the event loop (the server's choice). At synchronous=FULL every commit
 * fsyncs the WAL on the thread that commits: under a login flood the event loop sat in fsync
 * 2–3 % of the time, and any request that arrived then waited (measured with strace, up to 7 ms).
 * Here the connection commits at synchronous=NORMAL, which survives a killed process, and an
 * answer that tells a caller their write is done first awaits `durable()`: one fdatasync of the
 * WAL, on Bun's I/O threads, covers every commit made before it started. The caller gets FULL's
 * promise (nothing acknowledged is lost to a power cut) without the event loop ever waiting.
 */
export interface GroupCommit {
  /** Resolves once every commit made so far on this connection is on disk. */
  durable(): Promise<void>;
  /** Lets the WAL go; closing the database then checkpoints it. */
  close(): void;
}

/** How the WAL reaches the disk; tests pass one they can hold back or fail. */
export interface WalSync {
  sync(): Promise<void>;
  close(): void;
}

/**
 * fdatasync of `<file>-wal` through node:fs's callbacks, which Bun runs on its I/O threads. The
 * WAL keeps its inode while a connection holds the database open, so one descriptor serves.
 */
export function walDatasync(file: string): WalSync {
  let fd: number | null = null;
  const drop = () => {
    if (fd !== null) closeSync(fd);
    fd = null;
  };
  const opened = () =>
    new Promise<number>((resolve, reject) => {
      if (fd !== null) return resolve(fd);
      open(`${file}-wal`, "r", (e, got) => (e ? reject(e) : resolve((fd = got))));
    });
  return {
    async sync() {
      const at = await opened();
      await new Promise<void>((resolve, reject) =>
        fdatasync(at, (e) => {
          if (!e) return resolve();
          // Opened again next time: an error must not pin a dead descriptor.
          drop();
          reject(e);
        }),
      );
    },
    close: drop,
  };
}

export function startGroupCommit(db: Db, wal: WalSync): GroupCommit {
  db.run("PRAGMA synchronous = NORMAL");
  // total_changes() only grows, and every commit that matters changed at least one row.
  const changes = db.prepare<{ n: number }, []>("SELECT total_changes() AS n");
  const changesNow = () => changes.get()!.n;
  let synced = changesNow();
  let running: Promise<void> | null = null;
  const waiters: Array<{ upTo: number; resolve: () => void; reject: (e: unknown) => void }> = [];

  function pump(): void {
    if (running || waiters.length === 0) return;
    // Read before the sync starts: what was committed by then is in the WAL the sync flushes.
    const upTo = changesNow();
    running = wal
      .sync()
      .then(
        () => {
          synced = upTo;
          // Waiters queue in the order of their marks (total_changes() only grows): the covered
          // ones are the front of the queue.
          while (waiters.length > 0 && waiters[0]!.upTo <= synced) waiters.shift()!.resolve();
        },
        (e) => {
          for (const w of waiters.splice(0)) w.reject(e);
        },
      )
      .finally(() => {
        running = null;
        pump();
      });
  }

  return {
    durable() {
      const upTo = changesNow();
      if (upTo <= synced) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        waiters.push({ upTo, resolve, reject });
        pump();
      });
    },
    close: () => wal.close(),
  };
}
