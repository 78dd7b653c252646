import { closeSync, openSync, readSync, statSync, writeSync } from "node:fs";
import type { Db } from "./database";

/**
 * A backup's consistent copy that does not pin the WAL for long (issue 28). `VACUUM INTO` reads
 * the whole database inside one read transaction and rebuilds every index as it writes: minutes
 * for gigabytes, and all that while no checkpoint can reset the WAL, so every write made meanwhile
 * piled up in it (2.5 GB measured during one backup of a 1M-deal file).
 *
 * Here the copy is of the file's bytes, under a read transaction that reads the database file
 * alone: a TRUNCATE checkpoint first empties the WAL, then a read transaction starts; if the WAL
 * is still empty once it has started, the transaction holds SQLite's read mark 0 (nothing in the
 * WAL to read), which no checkpoint may write the database file under. The file is then exactly
 * this snapshot and is copied sequentially, at the disk's speed (about a second a GB), not
 * VACUUM's. Writers go on meanwhile; their frames wait in the WAL for those seconds only.
 *
 * Returns false when no such moment came (a writer slipped in every time): the caller falls back
 * to VACUUM INTO.
 */
export function copySnapshot(db: Db, dbFile: string, target: string, attempts = 40): boolean {
  // A TRUNCATE checkpoint holds the writer's lock while it copies and waits for readers: the
  // copying is done first by a PASSIVE one (no lock), and the wait is short, so a serving
  // server's writes are held up for milliseconds at most.
  db.run("PRAGMA busy_timeout = 50");
  for (let attempt = 0; attempt < attempts; attempt++) {
    if (attempt > 0) Bun.sleepSync(Math.min(200, 10 * attempt));
    try {
      db.query("PRAGMA wal_checkpoint(PASSIVE)").get();
      db.query("PRAGMA wal_checkpoint(TRUNCATE)").get();
    } catch {
      continue;
    }
    db.run("BEGIN");
    try {
      // A deferred transaction reads nothing until its first statement: this one starts it.
      db.query("SELECT count(*) AS n FROM sqlite_master").get();
      if (walBytes(dbFile) > 0) continue;
      const pageSize = (db.query("PRAGMA page_size").get() as { page_size: number }).page_size;
      const pages = (db.query("PRAGMA page_count").get() as { page_count: number }).page_count;
      copyBytes(dbFile, target, pageSize * pages);
      return true;
    } finally {
      db.run("COMMIT");
    }
  }
  return false;
}

const walBytes = (dbFile: string): number => {
  try {
    return statSync(`${dbFile}-wal`).size;
  } catch {
    return 0;
  }
};

/** The first `length` bytes of `from` into the existing, empty `to`, 4 MiB at a time. */
function copyBytes(from: string, to: string, length: number): void {
  const src = openSync(from, "r");
  const dst = openSync(to, "r+");
  try {
    const buf = Buffer.allocUnsafe(4 * 1024 * 1024);
    for (let at = 0; at < length; ) {
      const n = readSync(src, buf, 0, Math.min(buf.length, length - at), at);
      if (n <= 0) throw new Error(`${from} ended at ${at} bytes, ${length} expected`);
      writeSync(dst, buf, 0, n, at);
      at += n;
    }
  } finally {
    closeSync(src);
    closeSync(dst);
  }
}

/**
 * Zeroes the free pages of a copied database file (no connection may have it open): a byte copy
 * carries whatever deleted rows left in them, where VACUUM INTO wrote none. Walks the freelist
 * from the header (trunk pages: next trunk, count, leaf page numbers) and clears each leaf page and
 * each trunk page's unused tail. Answers how many pages were cleared.
 */
export function zeroFreePages(file: string): number {
  const fd = openSync(file, "r+");
  try {
    const header = Buffer.alloc(100);
    readSync(fd, header, 0, 100, 0);
    const raw = header.readUInt16BE(16);
    const pageSize = raw === 1 ? 65536 : raw;
    const zero = Buffer.alloc(pageSize);
    const page = Buffer.alloc(pageSize);
    const pages = header.readUInt32BE(28);
    const inFile = (pgno: number) => pgno >= 2 && pgno <= pages;
    let trunk = header.readUInt32BE(32);
    let cleared = 0;
    // Bounded by the page count: a damaged list must not loop, or write past the file's end.
    for (let guard = 0; trunk !== 0 && guard <= pages; guard++) {
      if (!inFile(trunk)) throw new Error(`${file}: free-page list names page ${trunk} of ${pages}`);
      readSync(fd, page, 0, pageSize, (trunk - 1) * pageSize);
      const next = page.readUInt32BE(0);
      const leaves = page.readUInt32BE(4);
      if (leaves > pageSize / 4 - 2) throw new Error(`${file}: free-page trunk ${trunk} lists ${leaves} pages`);
      for (let i = 0; i < leaves; i++) {
        const leaf = page.readUInt32BE(8 + 4 * i);
        if (!inFile(leaf)) throw new Error(`${file}: free-page list names page ${leaf} of ${pages}`);
        writeSync(fd, zero, 0, pageSize, (leaf - 1) * pageSize);
      }
      writeSync(fd, zero, 0, pageSize - (8 + 4 * leaves), (trunk - 1) * pageSize + 8 + 4 * leaves);
      cleared += leaves;
      trunk = next;
    }
    return cleared;
  } finally {
    closeSync(fd);
  }
}
