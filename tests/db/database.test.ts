import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { backupTo, openDatabase, retryWhileBusy, withTempFiles, writeTx, writeTxAsync } from "../../src/db/database";
import { migrate } from "../../src/db/migrate";

const dir = mkdtempSync(join(tmpdir(), "suite-db-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const freshFile = () => join(dir, `db-${++n}.sqlite`);

const pragma = (db: Database, name: string): unknown => Object.values(db.query(`PRAGMA ${name}`).get() as Record<string, unknown>)[0];

function withTable(file: string) {
  const db = openDatabase(file);
  db.run("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE) STRICT");
  return db;
}

describe("openDatabase", () => {
  test("a file database runs with WAL, foreign keys, busy_timeout 5000 and synchronous FULL", () => {
    const file = freshFile();
    const db = openDatabase(file);
    try {
      expect(pragma(db, "journal_mode")).toBe("wal");
      expect(pragma(db, "foreign_keys")).toBe(1);
      expect(pragma(db, "busy_timeout")).toBe(5000);
      expect(pragma(db, "synchronous")).toBe(2);
    } finally {
      db.close();
    }
    // WAL is a property of the file: another plain connection sees it too.
    const other = new Database(file);
    expect(pragma(other, "journal_mode")).toBe("wal");
    other.close();
  });

  test("temporary files are kept in memory (a deal write's statement journal), and on disk inside withTempFiles (big sorts), then in memory again", () => {
    const db = openDatabase(freshFile());
    try {
      expect(pragma(db, "temp_store")).toBe(2);
      const inside = withTempFiles(db, () => pragma(db, "temp_store"));
      expect(inside).toBe(1);
      expect(pragma(db, "temp_store")).toBe(2);
      // Given back when the work throws too.
      expect(() => withTempFiles(db, () => { throw new Error("boom"); })).toThrow("boom");
      expect(pragma(db, "temp_store")).toBe(2);
      // A migration's index builds run on files, and the connection is back in memory after it.
      migrate(db);
      expect(pragma(db, "temp_store")).toBe(2);
    } finally {
      db.close();
    }
  });

  test("creates missing parent directories", () => {
    const file = join(dir, "nested", "deeper", "suite.db");
    const db = openDatabase(file);
    db.close();
    expect(existsSync(file)).toBe(true);
  });

  test("foreign keys are enforced", () => {
    const db = openDatabase(freshFile());
    db.run("CREATE TABLE parent (id INTEGER PRIMARY KEY)");
    db.run("CREATE TABLE child (id INTEGER PRIMARY KEY, parent_id INTEGER NOT NULL REFERENCES parent(id))");
    expect(() => db.run("INSERT INTO child (parent_id) VALUES (42)")).toThrow(/FOREIGN KEY/);
    db.close();
  });

  test("an in-memory database opens with the same pragmas (journal mode memory)", () => {
    const db = openDatabase(":memory:");
    expect(pragma(db, "journal_mode")).toBe("memory");
    expect(pragma(db, "foreign_keys")).toBe(1);
    expect(pragma(db, "busy_timeout")).toBe(5000);
    db.close();
  });
});

describe("writeTx", () => {
  test("takes the write lock at BEGIN (IMMEDIATE): another connection cannot start writing meanwhile", () => {
    const file = freshFile();
    const db = withTable(file);
    const other = new Database(file);
    other.run("PRAGMA busy_timeout = 0");
    let inside: unknown = null;
    const result = writeTx(db, () => {
      // Nothing written yet: only an IMMEDIATE (or EXCLUSIVE) BEGIN holds the lock at this point.
      try {
        other.run("BEGIN IMMEDIATE");
        other.run("ROLLBACK");
        inside = "acquired";
      } catch (e) {
        inside = e;
      }
      return "done";
    });
    expect(result).toBe("done");
    expect(inside).toBeInstanceOf(Error);
    expect((inside as { code?: string }).code).toBe("SQLITE_BUSY");
    // Once the transaction is over the lock is free again.
    expect(() => {
      other.run("BEGIN IMMEDIATE");
      other.run("ROLLBACK");
    }).not.toThrow();
    other.close();
    db.close();
  });

  test("control: a deferred transaction that has not written does not hold the write lock", () => {
    const file = freshFile();
    const db = withTable(file);
    const other = new Database(file);
    other.run("PRAGMA busy_timeout = 0");
    let acquired = false;
    db.transaction(() => {
      other.run("BEGIN IMMEDIATE");
      other.run("ROLLBACK");
      acquired = true;
    })();
    expect(acquired).toBe(true);
    other.close();
    db.close();
  });

  test("commits what fn wrote and returns its value", () => {
    const file = freshFile();
    const db = withTable(file);
    const id = writeTx(db, () => db.query("INSERT INTO items (name) VALUES ('a') RETURNING id").get() as { id: number });
    expect(id.id).toBe(1);
    const other = new Database(file);
    expect(other.query("SELECT name FROM items").all()).toEqual([{ name: "a" }]);
    other.close();
    db.close();
  });

  test("rolls back everything on a throw, and the error reaches the caller", () => {
    const file = freshFile();
    const db = withTable(file);
    db.run("INSERT INTO items (name) VALUES ('kept')");
    expect(() =>
      writeTx(db, () => {
        db.run("INSERT INTO items (name) VALUES ('one')");
        db.run("INSERT INTO items (name) VALUES ('two')");
        db.run("UPDATE items SET name = 'changed' WHERE name = 'kept'");
        throw new Error("boom");
      }),
    ).toThrow("boom");
    expect(db.query("SELECT name FROM items ORDER BY id").all()).toEqual([{ name: "kept" }]);
    expect(db.inTransaction).toBe(false);
    // A failing statement (a constraint) rolls back the statements before it as well.
    expect(() =>
      writeTx(db, () => {
        db.run("INSERT INTO items (name) VALUES ('three')");
        db.run("INSERT INTO items (name) VALUES ('kept')");
      }),
    ).toThrow(/UNIQUE/);
    expect(db.query("SELECT name FROM items ORDER BY id").all()).toEqual([{ name: "kept" }]);
    // And the connection is usable afterwards.
    writeTx(db, () => db.run("INSERT INTO items (name) VALUES ('after')"));
    expect(db.query("SELECT count(*) AS n FROM items").get()).toEqual({ n: 2 });
    db.close();
  });
});

/**
 * What writeTx and writeTxAsync share: they wait as long as busy_timeout says, polling (0: one
 * try), and give the connection its busy_timeout back, inside the transaction and after it.
 */
async function waitsItsBusyTimeout(write: <T>(db: Database, fn: () => T) => Promise<T>) {
  const file = freshFile();
  const db = withTable(file);
  const other = new Database(file);
  other.run("BEGIN IMMEDIATE");
  try {
    db.run("PRAGMA busy_timeout = 0");
    const once = performance.now();
    await expect(write(db, () => db.run("INSERT INTO items (name) VALUES ('a')"))).rejects.toThrow(/locked|busy/i);
    expect(performance.now() - once).toBeLessThan(40);
    expect(pragma(db, "busy_timeout")).toBe(0);
    db.run("PRAGMA busy_timeout = 60");
    const waited = performance.now();
    await expect(write(db, () => db.run("INSERT INTO items (name) VALUES ('a')"))).rejects.toThrow(/locked|busy/i);
    expect(performance.now() - waited).toBeGreaterThanOrEqual(60);
    expect(pragma(db, "busy_timeout")).toBe(60);
  } finally {
    other.run("COMMIT");
    other.close();
  }
  // Free again: the write goes through, inside it and after it the connection's own busy_timeout.
  db.run("PRAGMA busy_timeout = 5000");
  expect(await write(db, () => pragma(db, "busy_timeout"))).toBe(5000);
  expect(pragma(db, "busy_timeout")).toBe(5000);
  expect(db.query("SELECT name FROM items").all()).toEqual([]);
  db.close();
}

describe("writeTx waiting for another connection's writer", () => {
  test("waits as long as busy_timeout says, polling (0: one try), and gives the connection its busy_timeout back", async () => {
    await waitsItsBusyTimeout(async (db, fn) => writeTx(db, fn));
  });

  test("beside a writer that holds the lock in short cycles with short gaps, a write gets one of the first gaps", async () => {
    // SQLite's own busy handler sleeps up to 25-100 ms between its tries once it has waited a while,
    // so it slept through 10 ms gaps for several cycles (a sign-in waited 168 ms beside `suite seed`).
    const file = freshFile();
    const db = withTable(file);
    const shared = new SharedArrayBuffer(12);
    const state = new Int32Array(shared);
    const worker = new Worker(new URL("./fixtures/lock-cycler.ts", import.meta.url).href);
    worker.postMessage({ file, hold: 40, gap: 8, shared });
    try {
      for (let i = 0; i < 500 && Atomics.load(state, 0) < 3; i++) await Bun.sleep(5);
      const waits: number[] = [];
      for (let round = 0; round < 8; round++) {
        // Ask while the other holds the lock, so each write has to wait for a gap.
        while (Atomics.load(state, 2) !== 1) Bun.sleepSync(1);
        const before = Atomics.load(state, 0);
        writeTx(db, () => db.run("INSERT INTO items (name) VALUES (?)", [`mine ${round}`]));
        waits.push(Atomics.load(state, 0) - before);
        await Bun.sleep(15);
      }
      // Polled every millisecond, a write gets in at the gap after the cycle it asked in (one
      // cycle), now and then the next one on a loaded machine.
      expect(Math.max(...waits)).toBeLessThanOrEqual(2);
    } finally {
      Atomics.store(state, 1, 1);
      await new Promise((r) => (worker.onmessage = r));
      worker.terminate();
    }
    expect(db.query("SELECT count(*) AS n FROM items WHERE name LIKE 'mine %'").get()).toEqual({ n: 8 });
    db.close();
  });
});

describe("writeTxAsync (a request's writes)", () => {
  test("while another connection holds the writer, the event loop keeps turning; the write lands once it is free, fn run once", async () => {
    const file = freshFile();
    const db = withTable(file);
    const other = new Database(file);
    other.run("BEGIN IMMEDIATE");
    let turns = 0;
    const ticker = setInterval(() => turns++, 2);
    let runs = 0;
    try {
      const write = writeTxAsync(db, () => {
        runs++;
        db.run("INSERT INTO items (name) VALUES ('waited')");
        return "done";
      });
      await Bun.sleep(60);
      // Still waiting, and other work ran meanwhile (writeTx would have held the thread the whole time).
      expect(runs).toBe(0);
      expect(turns).toBeGreaterThan(5);
      // Nothing of it is in a transaction on the connection while it waits: another write goes first.
      expect(db.inTransaction).toBe(false);
      other.run("COMMIT");
      expect(await write).toBe("done");
      expect(runs).toBe(1);
    } finally {
      clearInterval(ticker);
      if (other.inTransaction) other.run("COMMIT");
      other.close();
    }
    expect(db.query("SELECT name FROM items").all()).toEqual([{ name: "waited" }]);
    expect(pragma(db, "busy_timeout")).toBe(5000);
    db.close();
  });

  test("waits as long as busy_timeout says, as writeTx does", async () => {
    await waitsItsBusyTimeout(writeTxAsync);
  });

  test("rolls back on a throw, and refuses to run inside an open transaction", async () => {
    const db = withTable(freshFile());
    await expect(
      writeTxAsync(db, () => {
        db.run("INSERT INTO items (name) VALUES ('b')");
        throw new Error("no");
      }),
    ).rejects.toThrow("no");
    expect(() => writeTx(db, () => writeTxAsync(db, () => 1))).toThrow(/inside an open transaction/);
    expect(db.query("SELECT count(*) AS n FROM items").get()).toEqual({ n: 0 });
    db.close();
  });
});

describe("backupTo", () => {
  test("writes a consistent copy that passes integrity_check and holds the rows", () => {
    const file = freshFile();
    const db = withTable(file);
    writeTx(db, () => {
      for (let i = 0; i < 200; i++) db.run("INSERT INTO items (name) VALUES (?)", [`item ${i}`]);
    });
    const copy = join(dir, "backup.sqlite");
    backupTo(db, copy);
    // The live database keeps working after the copy.
    db.run("INSERT INTO items (name) VALUES ('after backup')");
    db.close();

    expect(existsSync(copy)).toBe(true);
    const b = new Database(copy, { readonly: true });
    expect(b.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
    expect(b.query("SELECT count(*) AS n FROM items").get()).toEqual({ n: 200 });
    expect(b.query("SELECT name FROM items WHERE id = 200").get()).toEqual({ name: "item 199" });
    b.close();
    expect(existsSync(`${copy}-wal`)).toBe(false);
  });

  test("copies rows committed by another connection, and refuses to overwrite an existing file", () => {
    const file = freshFile();
    const db = withTable(file);
    const writer = new Database(file);
    writer.run("INSERT INTO items (name) VALUES ('from the other connection')");
    writer.close();
    const copy = join(dir, "backup-2.sqlite");
    backupTo(db, copy);
    const b = new Database(copy, { readonly: true });
    expect(b.query("SELECT name FROM items").all()).toEqual([{ name: "from the other connection" }]);
    b.close();
    expect(() => backupTo(db, copy)).toThrow();
    db.close();
  });
});

describe("retryWhileBusy (opening a new database while other processes do too)", () => {
  test("runs a step again while SQLite answers SQLITE_BUSY, and rethrows anything else at once", () => {
    let calls = 0;
    const busy = Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY" });
    expect(
      retryWhileBusy(() => {
        calls++;
        if (calls < 3) throw busy;
        return "done";
      }),
    ).toBe("done");
    expect(calls).toBe(3);
    let other = 0;
    const boom = Object.assign(new Error("disk I/O error"), { code: "SQLITE_IOERR" });
    expect(() =>
      retryWhileBusy(() => {
        other++;
        throw boom;
      }),
    ).toThrow("disk I/O error");
    expect(other).toBe(1);
  });
});
