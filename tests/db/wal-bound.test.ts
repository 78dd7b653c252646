import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startCheckpointer } from "../../src/db/checkpointer";
import { openDatabase, writeTx } from "../../src/db/database";
import { migrate } from "../../src/db/migrate";
import { stallFigures } from "../../src/db/stall-monitor";
import { runSuite } from "../cli/kit";

/**
 * Issue 28, item 2: a bounded WAL. After a burst of writes (small commits, and one large one as
 * an import makes), and after a backup taken while writes go on, the -wal file is back under
 * WAL_BOUND within two seconds of idleness, and the stall monitor's figures say so.
 */

const WAL_BOUND = 4 * 1024 * 1024;
const dir = mkdtempSync(join(tmpdir(), "suite-wal-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const walSize = (file: string) => {
  try {
    return statSync(`${file}-wal`).size;
  } catch {
    return 0;
  }
};

/** Milliseconds until the WAL is under the bound (or -1 after `withinMs`). */
async function backUnder(file: string, withinMs: number): Promise<number> {
  const start = performance.now();
  while (performance.now() - start < withinMs) {
    if (walSize(file) <= WAL_BOUND) return Math.round(performance.now() - start);
    await Bun.sleep(25);
  }
  return -1;
}

test("after a burst and after one large transaction the WAL file shrinks back under 4 MiB within 2 s of idleness", async () => {
  const file = join(dir, "burst.db");
  const db = openDatabase(file);
  db.run("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
  const checkpointer = startCheckpointer(file);
  const insert = db.prepare("INSERT INTO t (v) VALUES (?1)");
  try {
    // One transaction of 24 MB: nothing can be checkpointed before its commit.
    writeTx(db, () => {
      for (let i = 0; i < 6000; i++) insert.run(`${i} ${"x".repeat(4000)}`);
    });
    const large = walSize(file);
    expect(large).toBeGreaterThan(20 * 1024 * 1024);
    const afterLarge = await backUnder(file, 2000);
    expect(afterLarge).toBeGreaterThanOrEqual(0);

    // A burst of small commits (20 rows each, 24 MB in all) between two checkpoints' ticks.
    for (let i = 0; i < 300; i++) writeTx(db, () => {
      for (let j = 0; j < 20; j++) insert.run(`${i} ${"y".repeat(4000)}`);
    });
    const burst = walSize(file);
    const afterBurst = await backUnder(file, 2000);
    expect(afterBurst).toBeGreaterThanOrEqual(0);
    await Bun.sleep(300);
    const wal = stallFigures().wal!;
    expect(wal.walBytes).toBeLessThanOrEqual(WAL_BOUND);
    expect(wal.checkpointLagFrames).toBe(0);
    expect(wal.maxWalBytes).toBeGreaterThanOrEqual(Math.min(large, burst) - 1);
    process.stdout.write(`wal-bound: ${(large / 1048576).toFixed(1)} MB after one transaction, under 4 MiB ${afterLarge} ms later; ${(burst / 1048576).toFixed(1)} MB after a burst, under ${afterBurst} ms later\n`);
  } finally {
    insert.finalize();
    await checkpointer.stop();
    db.close();
  }
  const check = new Database(file, { readonly: true });
  expect(check.query("SELECT count(*) AS n FROM t").get()).toEqual({ n: 12000 });
  check.close();
}, 60_000);

test("a backup taken while writes go on leaves the WAL under 16 MiB, and under 4 MiB right after it", async () => {
  const file = join(dir, "backup.db");
  const db = openDatabase(file);
  // A suite database (the backup checks its tables), with a table of this test's beside.
  migrate(db);
  db.run("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT, k TEXT)");
  db.run("CREATE INDEX t_k ON t (k)");
  const insert = db.prepare("INSERT INTO t (v, k) VALUES (?1, ?2)");
  writeTx(db, () => {
    for (let i = 0; i < 120_000; i++) insert.run(`${i} ${"z".repeat(800)}`, `${(i * 7919) % 120_000}`);
  });
  const checkpointer = startCheckpointer(file);
  // The 110 MB of the table's own transaction leave the WAL first.
  expect(await backUnder(file, 3000)).toBeGreaterThanOrEqual(0);
  let writes = 0;
  let maxWal = 0;
  let maxLagMs = 0;
  // 4 KB every 5 ms, about 0.8 MB a second, all through the backup.
  const writer = setInterval(() => {
    insert.run(`w ${writes++} ${"w".repeat(4000)}`, "w");
    maxWal = Math.max(maxWal, walSize(file));
    maxLagMs = Math.max(maxLagMs, stallFigures().wal?.checkpointLagMs ?? 0);
  }, 5);
  try {
    await Bun.sleep(300);
    const started = performance.now();
    const r = await runSuite(["backup", join(dir, "copy.db")], { cwd: dir, env: { SUITE_DB: file } });
    const took = performance.now() - started;
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    expect(r.stdout).toContain("integrity ok");
    await Bun.sleep(300);
    clearInterval(writer);
    const after = await backUnder(file, 2000);
    expect(after).toBeGreaterThanOrEqual(0);
    // Writes went on through the backup (about 0.8 MB a second), yet the WAL stayed small.
    expect(writes).toBeGreaterThan(took / 20);
    expect(maxWal).toBeLessThanOrEqual(16 * 1024 * 1024);
    // The checkpoint lag (no checkpoint can finish while the copy's snapshot is read) is printed, not
    // asserted: on this shared 2-core machine the 120 MB copy itself took 0.6 s quiet and 2.4 s at
    // load 16, as long as VACUUM INTO of this simple table, so no bound tells them apart reliably.
    process.stdout.write(`wal-bound: backup of ${(statSync(file).size / 1048576).toFixed(1)} MB in ${Math.round(took)} ms beside ${writes} writes; WAL at most ${(maxWal / 1048576).toFixed(1)} MB, checkpoint lag at most ${maxLagMs} ms, under 4 MiB ${after} ms after\n`);
  } finally {
    clearInterval(writer);
    insert.finalize();
    await checkpointer.stop();
    db.close();
  }
  const copy = new Database(join(dir, "copy.db"), { readonly: true });
  expect((copy.query("SELECT count(*) AS n FROM t").get() as { n: number }).n).toBeGreaterThanOrEqual(120_000);
  expect(copy.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
  expect(copy.query("PRAGMA journal_mode").get()).toEqual({ journal_mode: "delete" });
  copy.close();
}, 120_000);
