import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { WAITING_FOR_PG_STORES, postgresPaths, postgresTestFiles, splitArgs } from "../../scripts/test";

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
    expect(postgresPaths(["tests/stores/migrate-postgres.test.ts", "tests/auth/login.test.ts"])).toEqual(["tests/stores/migrate-postgres.test.ts"]);
    expect(postgresPaths(["./tests/stores"])).toEqual(["./tests/stores"]);
    expect(postgresPaths(["tests/auth"])).toEqual([]);
    // A folder above the listed ones runs just those on PostgreSQL, never all it holds.
    expect(postgresPaths(["tests"])).toEqual(postgresTestFiles());
    expect(postgresPaths(["tests/cli/"])).toEqual(postgresTestFiles().filter((p) => p.startsWith("tests/cli/")));
    expect(postgresPaths(["tests/st"])).toEqual([]);
  });

  test("every listed file or folder exists (a typo would silently run nothing on PostgreSQL)", () => {
    for (const p of [...postgresTestFiles(), ...WAITING_FOR_PG_STORES]) expect({ p, exists: existsSync(join(root, p)) }).toEqual({ p, exists: true });
  });
});
