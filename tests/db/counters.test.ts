import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config";
import { createContext } from "../../src/context";
import { openCountersConnection, openDatabase } from "../../src/db/database";

const dir = mkdtempSync(join(tmpdir(), "suite-counters-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const synchronous = (db: Database) => (db.query("PRAGMA synchronous").get() as { synchronous: number }).synchronous;

test("rate-limit counters get a connection of their own that skips the fsync; data keeps FULL; in memory they share", () => {
  const file = join(dir, "a.db");
  const main = openDatabase(file);
  const counters = openCountersConnection(file, main);
  expect(counters).not.toBe(main);
  expect(synchronous(main)).toBe(2);
  expect(synchronous(counters)).toBe(1);
  counters.close();
  main.close();
  const memory = openDatabase(":memory:");
  expect(openCountersConnection(":memory:", memory)).toBe(memory);
  memory.close();
});

test("the server's context counts on the second connection, the count is in the file, and closing leaves no WAL", async () => {
  const file = join(dir, "b.db");
  const ctx = createContext({ config: loadConfig({}, { SUITE_DB: file }), log: () => {}, counterConnection: true });
  const limit = { name: "test-limit", max: 2, windowMs: 60_000 };
  expect((await ctx.limiter.hit(limit, "someone")).allowed).toBe(true);
  expect((await ctx.limiter.hit(limit, "someone")).allowed).toBe(true);
  expect((await ctx.limiter.hit(limit, "someone")).allowed).toBe(false);
  // The main connection (and any other process) sees what the counters connection wrote.
  expect(ctx.db.query("SELECT count FROM rate_limits WHERE key = 'test-limit:someone'").get()).toEqual({ count: 3 });
  ctx.close();
  expect(!existsSync(`${file}-wal`) || statSync(`${file}-wal`).size === 0).toBe(true);
  const again = new Database(file, { readonly: true });
  expect(again.query("SELECT count FROM rate_limits WHERE key = 'test-limit:someone'").get()).toEqual({ count: 3 });
  again.close();
});
