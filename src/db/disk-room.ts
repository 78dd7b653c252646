import { statfsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { errors } from "../kernel/errors";

/**
 * Disk pressure, answered clearly (issue 28). Two halves:
 * - Room is kept for what must always succeed (the WAL's checkpoint growing the database, a
 *   sign-in's session row): large writes (imports, jobs) are refused while the free space of the
 *   database's filesystem is under the reserve (SUITE_DISK_RESERVE_MB), small ones are not.
 * - Any write that still fails for lack of space is `507 storage_full`, never 500: isStorageFull
 *   recognises SQLite's SQLITE_FULL, an I/O error while space is short, the OS's ENOSPC/EDQUOT
 *   and PostgreSQL's 53100, and http/core.ts maps it in the one error path.
 *
 * The folders watched are those of the SQLite files this process serves (openSqliteStores adds
 * them); on PostgreSQL none is, and only the error mapping applies.
 */

/** The default reserve, MB: room for a checkpoint of a bounded WAL and many small writes. */
export const DEFAULT_RESERVE_MB = 64;

/** What asks for room: an import or job (refused below the reserve), or a small write (only below 0). */
export type RoomKind = "import" | "job" | "write";

const watched = new Map<string, { reserve: number; uses: number }>();

/** Starts watching the filesystem of `dbFile` with a reserve of `reserveMb`; the answer stops it. */
export function watchDisk(dbFile: string, reserveMb: number): () => void {
  const dir = dirname(resolve(dbFile));
  const w = watched.get(dir) ?? { reserve: reserveMb * 1024 * 1024, uses: 0 };
  w.reserve = reserveMb * 1024 * 1024;
  w.uses++;
  watched.set(dir, w);
  let done = false;
  return () => {
    if (done) return;
    done = true;
    if (--w.uses <= 0) watched.delete(dir);
  };
}

/** Bytes an unprivileged writer may still use in `dir` (statfs: available blocks × block size). */
export function freeBytes(dir: string): number {
  const s = statfsSync(dir);
  return Number(s.bavail) * Number(s.bsize);
}

export interface DiskRoom {
  dir: string;
  freeBytes: number;
  reserveBytes: number;
  /** Free space under the reserve: large writes are refused, small ones eat into the reserve. */
  low: boolean;
}

/** Each watched filesystem's free space against its reserve (a folder that cannot be read counts as full). */
export function diskRoom(): DiskRoom[] {
  return [...watched].map(([dir, w]) => {
    let free = 0;
    try {
      free = freeBytes(dir);
    } catch {
      // Gone or unreadable: nothing can be written there either.
    }
    return { dir, freeBytes: free, reserveBytes: w.reserve, low: free < w.reserve };
  });
}

export const storageFull = errors.storageFull;

/**
 * Refuses (507 storage_full) a large write while a watched filesystem is under its reserve, or
 * any write when `bytes` more would not fit. One statfs call (a few µs): meant for imports and
 * jobs, not for every request. `bytes`: what the work is expected to add, when known.
 */
export function assertDiskRoom(kind: RoomKind, bytes = 0): void {
  for (const room of diskRoom()) {
    const needed = (kind === "write" ? 0 : room.reserveBytes) + bytes;
    if (room.freeBytes < needed || room.freeBytes <= 0) {
      throw storageFull(
        kind === "write"
          ? undefined
          : `The server is low on storage space (${mb(room.freeBytes)} MB free), so it takes no ${kind === "import" ? "imports" : "large jobs"} now. Try again later; the server's operator must free space.`,
      );
    }
  }
}

const mb = (bytes: number) => Math.floor(bytes / (1024 * 1024));

const FULL_CODES = new Set(["SQLITE_FULL", "ENOSPC", "EDQUOT", "53100"]);

/**
 * Whether `e` (or an error it was caused by) failed for lack of space. An SQLITE_IOERR counts
 * when a watched filesystem is under its reserve: SQLite reports a failed fsync, truncate or
 * shared-memory growth on a full disk as an I/O error, not as SQLITE_FULL.
 */
export function isStorageFull(e: unknown): boolean {
  for (let err = e as { code?: unknown; errno?: unknown; message?: unknown; cause?: unknown } | undefined, depth = 0; err && depth < 5; err = err.cause as typeof err, depth++) {
    if (typeof err !== "object") return false;
    if (FULL_CODES.has(String(err.code)) || FULL_CODES.has(String(err.errno))) return true;
    if (typeof err.message === "string" && /database or disk is full|no space left on device|disk quota exceeded/i.test(err.message)) return true;
    if (typeof err.code === "string" && err.code.startsWith("SQLITE_IOERR") && diskRoom().some((r) => r.low)) return true;
  }
  return false;
}
