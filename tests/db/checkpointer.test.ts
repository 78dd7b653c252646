import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CATCH_UP_FRAMES, RESTART_FRAMES, startCheckpointer, walCatchUp } from "../../src/db/checkpointer";
import { openDatabase, writeTx } from "../../src/db/database";

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

test("a job that calls walCatchUp between its batches keeps the WAL under RESTART_FRAMES and a few batches; without it the WAL grows", async () => {
  const file = join(dir, "batches.db");
  const db = openDatabase(file);
  // Neither the writer's automatic checkpoint nor the thread's ticks (one a minute): only the catch-ups.
  db.run("PRAGMA wal_autocheckpoint = 0");
  db.run("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
  const insert = db.prepare("INSERT INTO t (v) VALUES (?1)");
  const walBytes = () => (existsSync(`${file}-wal`) ? statSync(`${file}-wal`).size : 0);
  // 80 batches of 250 rows of a page each: about 80 MB of WAL in all.
  const batches = async (between: () => Promise<void>) => {
    let largest = 0;
    for (let b = 0; b < 80; b++) {
      writeTx(db, () => {
        for (let i = 0; i < 250; i++) insert.run(`${b} ${i} ${"x".repeat(3900)}`);
      });
      largest = Math.max(largest, walBytes());
      await between();
    }
    return largest;
  };
  // No checkpointer for this file: nothing to wait for, at once.
  const started = performance.now();
  await walCatchUp(file);
  expect(performance.now() - started).toBeLessThan(50);

  const checkpointer = startCheckpointer(file, 60_000);
  try {
    const paced = await batches(() => walCatchUp(file));
    const page = 4096 + 24;
    // The WAL's length at which the job waits, plus a batch written before the wait and the one after the restart.
    expect(paced).toBeLessThan((RESTART_FRAMES + 2 * 300) * page);
    expect(paced).toBeGreaterThan(RESTART_FRAMES * page * 0.5);
    const unpaced = await batches(async () => {});
    expect(unpaced).toBeGreaterThan(70 * 1024 * 1024);
  } finally {
    await checkpointer.stop();
    insert.finalize();
    db.close();
  }
  const check = new Database(file, { readonly: true });
  expect(check.query("SELECT count(*) AS n FROM t").get()).toEqual({ n: 40_000 });
  check.close();
});

test("past CATCH_UP_FRAMES walCatchUp has the WAL copied while the job goes on; it waits only once the WAL is RESTART_FRAMES long", async () => {
  const file = join(dir, "ahead.db");
  const db = openDatabase(file);
  db.run("PRAGMA wal_autocheckpoint = 0");
  db.run("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
  const insert = db.prepare("INSERT INTO t (v) VALUES (?1)");
  // The wal-index header (-shm): the WAL's frames at 16, those copied into the database at 96.
  const frames = () => {
    const h = readFileSync(`${file}-shm`).subarray(0, 100);
    return { frames: h.readUInt32LE(16), copied: h.readUInt32LE(96) };
  };
  const batch = () =>
    writeTx(db, () => {
      for (let i = 0; i < 200; i++) insert.run(`${i} ${"x".repeat(3900)}`);
    });
  const checkpointer = startCheckpointer(file, 60_000);
  try {
    // (The thread's first tick, at its start, may have copied some.)
    for (let f = frames(); f.frames - f.copied < CATCH_UP_FRAMES; f = frames()) batch();
    await walCatchUp(file);
    // It returned with the copy under way, not done (a copy of 4 MiB and its fsyncs take milliseconds).
    const asked = frames();
    expect(asked.copied).toBeLessThan(asked.frames);
    // The job writes on meanwhile (the WAL grows: it starts over only once every frame is copied).
    batch();
    expect(frames().frames).toBeGreaterThan(asked.frames);
    for (let i = 0; i < 200 && frames().copied < asked.frames; i++) await Bun.sleep(10);
    expect(frames().copied).toBeGreaterThanOrEqual(asked.frames);
    // Once it is RESTART_FRAMES long the call waits for every frame, and the next batch starts the WAL over.
    while (frames().frames < RESTART_FRAMES) batch();
    await walCatchUp(file);
    const waited = frames();
    expect(waited.copied).toBe(waited.frames);
    batch();
    expect(frames().frames).toBeLessThan(CATCH_UP_FRAMES);
  } finally {
    await checkpointer.stop();
    insert.finalize();
    db.close();
  }
});

test("a process with nothing else to wait for (the seed beside a server) lives through a catch-up's wait for the thread", async () => {
  // Before, the thread never kept the process alive: `suite seed` awaiting the copy at RESTART_FRAMES
  // exited at once, code 0, a few hundred deals into a seed of 30,000.
  const file = join(dir, "alone.db");
  const script = `
    const { openDatabase, writeTx } = require(${JSON.stringify(join(import.meta.dir, "../../src/db/database.ts"))});
    const { startCheckpointer, walCatchUp } = require(${JSON.stringify(join(import.meta.dir, "../../src/db/checkpointer.ts"))});
    const db = openDatabase(${JSON.stringify(file)});
    db.run("PRAGMA wal_autocheckpoint = 0");
    db.run("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
    const checkpointer = startCheckpointer(${JSON.stringify(file)}, 60_000);
    const insert = db.prepare("INSERT INTO t (v) VALUES (?1)");
    (async () => {
      for (let b = 0; b < 40; b++) {
        writeTx(db, () => { for (let i = 0; i < 250; i++) insert.run(b + " " + i + " " + "x".repeat(3900)); });
        await walCatchUp(${JSON.stringify(file)});
      }
      console.log("all 40 batches");
      await checkpointer.stop();
      insert.finalize();
      db.close();
    })();
  `;
  const p = Bun.spawn([process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  expect(err).toBe("");
  expect(out).toContain("all 40 batches");
  expect(code).toBe(0);
  const check = new Database(file, { readonly: true });
  expect(check.query("SELECT count(*) AS n FROM t").get()).toEqual({ n: 10_000 });
  check.close();
}, 60_000);
