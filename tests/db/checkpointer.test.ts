import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startCheckpointer } from "../../src/db/checkpointer";
import { openDatabase } from "../../src/db/database";

const dir = mkdtempSync(join(tmpdir(), "suite-checkpoint-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("the server's checkpoint thread copies the WAL into the file while the writer goes on, and stops cleanly", async () => {
  const file = join(dir, "suite.db");
  const db = openDatabase(file);
  // No automatic checkpoint: only the thread can bring the frames into the file.
  db.run("PRAGMA wal_autocheckpoint = 0");
  db.run("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
  const before = statSync(file).size;
  const checkpointer = startCheckpointer(file, 20);
  const insert = db.prepare("INSERT INTO t (v) VALUES (?1)");
  for (let i = 0; i < 2000; i++) insert.run(`row ${i} ${"x".repeat(200)}`);
  insert.finalize();

  // The rows (about 420 KB) reach the database file itself, which only a checkpoint writes.
  for (let i = 0; i < 150 && statSync(file).size < 400_000; i++) await Bun.sleep(20);
  expect(before).toBeLessThan(100_000);
  expect(statSync(file).size).toBeGreaterThan(400_000);

  await checkpointer.stop();
  db.close();
  // The last connection closed: its WAL is checkpointed and gone, and the file is whole.
  expect(!existsSync(`${file}-wal`) || statSync(`${file}-wal`).size === 0).toBe(true);
  const check = new Database(file, { readonly: true });
  expect(check.query("SELECT count(*) AS n FROM t").get()).toEqual({ n: 2000 });
  expect(check.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
  check.close();
});
