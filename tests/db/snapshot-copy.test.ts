import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../src/db/database";
import { copySnapshot, zeroFreePages } from "../../src/db/snapshot-copy";

/**
 * Issue 28: a backup's byte copy of a snapshot (src/db/snapshot-copy.ts) is the database as of its
 * read transaction, including commits still in the WAL; and its free pages, which hold what
 * deleted rows left behind, are zeroed, as VACUUM INTO never copied them.
 */

const dir = mkdtempSync(join(tmpdir(), "suite-snapshot-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("the copy holds every commit, WAL included, and its free pages zeroed (deleted rows' bytes left only in live pages' unused space)", () => {
  const file = join(dir, "live.db");
  const db = openDatabase(file);
  db.run("PRAGMA wal_autocheckpoint = 0");
  db.run("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
  const insert = db.prepare("INSERT INTO t (v) VALUES (?1)");
  db.transaction(() => {
    for (let i = 0; i < 2000; i++) insert.run(`kept ${i} ${"k".repeat(300)}`);
    for (let i = 0; i < 2000; i++) insert.run(`DELETED-SECRET-${i} ${"s".repeat(300)}`);
  })();
  db.run("DELETE FROM t WHERE v LIKE 'DELETED-SECRET-%'");
  // Still in the WAL only (no checkpoint has run): the copy must see them.
  db.transaction(() => {
    for (let i = 0; i < 50; i++) insert.run(`late ${i}`);
  })();
  insert.finalize();

  const copy = join(dir, "copy.db");
  closeSync(openSync(copy, "wx", 0o600));
  expect(copySnapshot(db, file, copy)).toBe(true);
  db.close();
  const count = (b: Buffer) => b.toString("latin1").split("DELETED-SECRET-").length - 1;
  // The byte copy carries the deleted rows in its free pages...
  const before = count(readFileSync(copy));
  expect(before).toBeGreaterThan(1900);
  const cleared = zeroFreePages(copy);
  expect(cleared).toBeGreaterThan(50);
  // ...until they are zeroed: what is left sits in the unused space of live pages (the page the
  // last kept rows share with the first deleted ones), which secure_delete would have cleared.
  const after = count(readFileSync(copy));
  process.stdout.write(`snapshot-copy: deleted rows' text ${before} times in the copy, ${after} after zeroing ${cleared} free pages\n`);
  expect(after).toBeLessThan(20);

  const check = new Database(copy, { readonly: true });
  try {
    expect(check.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
    expect(check.query("SELECT count(*) AS n FROM t").get()).toEqual({ n: 2050 });
    expect(check.query("SELECT count(*) AS n FROM t WHERE v LIKE 'late %'").get()).toEqual({ n: 50 });
    expect((check.query("PRAGMA freelist_count").get() as { freelist_count: number }).freelist_count).toBeGreaterThan(50);
  } finally {
    check.close();
  }
});
