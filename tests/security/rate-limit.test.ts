import { afterAll, describe, expect, test } from "bun:test";
import { openDatabase } from "../../src/db/database";
import { CURRENT_PLAN, migrate } from "../../src/db/migrate";
import { createRateLimiter } from "../../src/security/rate-limit";
import { createSqliteSecurityStore as createSecurityRepo } from "../../src/stores/sqlite/security";

const db = openDatabase(":memory:");
migrate(db, CURRENT_PLAN);
afterAll(() => db.close());
const repo = createSecurityRepo(db);
let now = Date.UTC(2030, 0, 1);
const limiter = createRateLimiter(repo, () => now);
const LIMIT = { name: "unit", max: 3, windowMs: 60_000 };

describe("fixed-window limiter", () => {
  test("allows max hits per window, then refuses with the seconds left in the window", async () => {
    const states = [];
    for (let i = 0; i < 4; i++) states.push(await limiter.hit(LIMIT, "a"));
    expect(states.map((s) => s.allowed)).toEqual([true, true, true, false]);
    expect(states[3]!.retryAfterSeconds).toBe(60);
    now += 45_500;
    const later = await limiter.hit(LIMIT, "a");
    expect(later.allowed).toBe(false);
    expect(later.retryAfterSeconds).toBe(15);
    // The window does not slide with refused hits: it ends when it began plus its length.
    now += 14_500;
    expect((await limiter.hit(LIMIT, "a")).allowed).toBe(true);
  });

  test("subjects and limits count separately", async () => {
    for (let i = 0; i < 3; i++) await limiter.hit(LIMIT, "b");
    expect((await limiter.hit(LIMIT, "b")).allowed).toBe(false);
    expect((await limiter.hit(LIMIT, "c")).allowed).toBe(true);
    expect((await limiter.hit({ ...LIMIT, name: "other" }, "b")).allowed).toBe(true);
  });

  test("check does not count; reset clears", async () => {
    for (let i = 0; i < 10; i++) expect((await limiter.check(LIMIT, "d")).allowed).toBe(true);
    for (let i = 0; i < 3; i++) await limiter.hit(LIMIT, "d");
    expect((await limiter.check(LIMIT, "d")).allowed).toBe(false);
    await limiter.reset(LIMIT, "d");
    expect((await limiter.check(LIMIT, "d")).allowed).toBe(true);
    expect((await limiter.hit(LIMIT, "d")).allowed).toBe(true);
  });

  test("concurrent hits are each counted once", async () => {
    const states = await Promise.all(Array.from({ length: 10 }, () => limiter.hit(LIMIT, "e")));
    expect(states.filter((s) => s.allowed)).toHaveLength(3);
    const row = await repo.peek("unit:e");
    expect(row!.count).toBe(10);
  });

  test("sweep drops only finished windows", async () => {
    await limiter.hit(LIMIT, "f");
    now += 30_000;
    await limiter.hit(LIMIT, "g");
    now += 30_000;
    await repo.sweep(now);
    expect(await repo.peek("unit:f")).toBeNull();
    expect(await repo.peek("unit:g")).not.toBeNull();
  });
});
