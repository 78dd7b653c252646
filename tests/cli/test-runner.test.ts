import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fastPaths, fastTestFiles, postgresPaths, postgresTestFiles, splitArgs } from "../../scripts/test";
import { SQLITE_ONLY } from "../support/backend-files";
import { SLOW } from "../support/slow-files";

/** npm test's runner (scripts/test.ts): what each of its two runs is given. */
describe("scripts/test.ts", () => {
  const root = join(import.meta.dir, "..", "..");

  test("options go to both runs, paths are filters; an option's value is no path", () => {
    expect(splitArgs(["--bail", "-t", "copies every", "tests/stores", "tests/auth/login.test.ts"])).toEqual({
      options: ["--bail", "-t", "copies every"],
      paths: ["tests/stores", "tests/auth/login.test.ts"],
    });
    expect(splitArgs(["--timeout=5000", "--rerun-each", "3"])).toEqual({ options: ["--timeout=5000", "--rerun-each", "3"], paths: [] });
  });

  test("the PostgreSQL run takes the whole list, or the given paths inside it (none: no PostgreSQL run)", () => {
    expect(postgresPaths([])).toEqual(postgresTestFiles());
    expect(postgresPaths(["tests/stores/migrate-postgres.test.ts", "tests/auth/login.test.ts"])).toEqual(["tests/stores/migrate-postgres.test.ts", "tests/auth/login.test.ts"]);
    expect(postgresPaths(["tests/auth/login.test.ts"])).toEqual(["tests/auth/login.test.ts"]);
    // A SQLite-only file runs on SQLite alone.
    expect(postgresPaths(["tests/db/migrate.test.ts"])).toEqual([]);
    // A folder above the listed ones runs just those on PostgreSQL, never all it holds.
    expect(postgresPaths(["tests"])).toEqual(postgresTestFiles());
    expect(postgresPaths(["tests/cli/"])).toEqual(postgresTestFiles().filter((p) => p.startsWith("tests/cli/")));
    expect(postgresPaths(["tests/auth"])).toEqual(postgresTestFiles().filter((p) => p.startsWith("tests/auth/")));
  });

  test("the PostgreSQL run takes every test file but the SQLite-only ones, the store and multi-instance tests among them", () => {
    const files = postgresTestFiles();
    for (const p of files) expect({ p, exists: existsSync(join(root, p)) }).toEqual({ p, exists: true });
    for (const p of SQLITE_ONLY) expect(files).not.toContain(p);
    expect(files).toContain("tests/auth/login.test.ts");
    expect(files.some((f) => f.startsWith("tests/stores/"))).toBe(true);
    expect(files.some((f) => f.startsWith("tests/multi-instance/"))).toBe(true);
    expect(files.length).toBeGreaterThan(60);
  });

  test("the fast lane takes the in-process files, or those of them inside the given paths", () => {
    expect(fastPaths([])).toEqual(fastTestFiles());
    for (const p of SLOW) expect(fastTestFiles()).not.toContain(p);
    expect(fastPaths(["tests/auth/login.test.ts"])).toEqual(["tests/auth/login.test.ts"]);
    // A file that starts processes is not in the lane even when named.
    expect(fastPaths(["tests/cli/cli.test.ts"])).toEqual([]);
    const cli = fastPaths(["tests/cli/"]);
    expect(cli.length).toBeGreaterThan(0);
    expect(cli.every((f) => f.startsWith("tests/cli/") && !SLOW.includes(f))).toBe(true);
  });
});
