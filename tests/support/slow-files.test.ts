import { expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fastTestFiles } from "../../scripts/test";
import { HEAVY_IN_PROCESS, SLOW, SLOW_REASONS } from "./slow-files";

const ROOT = join(import.meta.dir, "..", "..");

/** What starts another process: Bun's and Node's spawns, Bun's shell, a browser. */
const SPAWNS = /Bun\.spawn|\bspawn(Sync)?\(|child_process|Bun\.\$|startSuite\(|chromium|playwright/;

/** Test files that import a module that can spawn, yet start nothing themselves: why each may. */
const IMPORTS_A_SPAWNER_BUT_SPAWNS_NOTHING: Record<string, string> = {
  "tests/cli/test-runner.test.ts": "calls only scripts/test.ts's pure functions (its main() runs when it is the entry point)",
  "tests/support/slow-files.test.ts": "this file: it names the patterns, and calls only scripts/test.ts's pure functions",
};

/**
 * Test files whose in-process app starts a process itself (the app's code is not followed below):
 * they spawn as surely as a file that calls Bun.spawn, and say where.
 */
const SPAWNS_THROUGH_THE_APP: Record<string, string> = {
  "tests/operator/console-backups-files.test.ts": "the console's \"Back up now\" runs `suite backup` as a child process (src/cli/backup-schedule.ts)",
};

const ts = new Bun.Transpiler({ loader: "ts" });
const tsx = new Bun.Transpiler({ loader: "tsx" });

/** The repository file a relative import names (tests, scripts and bench only: the app's own code is not followed). */
function resolved(from: string, spec: string): string | null {
  if (!spec.startsWith(".")) return null;
  const base = resolve(dirname(from), spec);
  const file = [base, `${base}.ts`, `${base}.tsx`, join(base, "index.ts")].find((f) => /\.tsx?$/.test(f) && existsSync(f));
  if (!file) return null;
  const rel = relative(ROOT, file);
  return /^(tests|scripts|bench)\//.test(rel) ? file : null;
}

const seen = new Map<string, string | null>();
/** Where `file`, or a test helper it imports (however deep), starts a process; null if nowhere. */
function spawnIn(file: string, visiting = new Set<string>()): string | null {
  if (seen.has(file)) return seen.get(file)!;
  if (visiting.has(file)) return null;
  visiting.add(file);
  const text = readFileSync(file, "utf8");
  const hit = SPAWNS.exec(text);
  let found: string | null = hit ? `${relative(ROOT, file)}: ${hit[0]}` : null;
  if (!found) {
    // A script's "#!/usr/bin/env bun" line is no TypeScript for the scanner.
    for (const imp of (file.endsWith(".tsx") ? tsx : ts).scanImports(text.replace(/^#!.*/, ""))) {
      const next = resolved(file, imp.path);
      found = next ? spawnIn(next, visiting) : null;
      if (found) break;
    }
  }
  seen.set(file, found);
  return found;
}

const allTestFiles = () => [...new Bun.Glob("tests/**/*.test.ts").scanSync({ cwd: ROOT })].sort();

test("every slow file exists, is a test file, and says why", () => {
  expect(SLOW.length).toBeGreaterThan(0);
  for (const f of SLOW) {
    expect({ f, exists: existsSync(join(ROOT, f)), test: f.endsWith(".test.ts") }).toEqual({ f, exists: true, test: true });
    expect((SLOW_REASONS[f] ?? HEAVY_IN_PROCESS[f])!.length).toBeGreaterThan(10);
  }
});

test("a test file that starts a process (itself or through a helper) is on the slow list, and only such a file", () => {
  const unlisted: string[] = [];
  const listedButInProcess: string[] = [];
  for (const f of allTestFiles()) {
    if (f in IMPORTS_A_SPAWNER_BUT_SPAWNS_NOTHING) continue;
    const where = SPAWNS_THROUGH_THE_APP[f] ?? spawnIn(join(ROOT, f));
    if (where && !(f in SLOW_REASONS)) unlisted.push(`${f} (${where})`);
    if (!where && f in SLOW_REASONS) listedButInProcess.push(f);
  }
  expect(unlisted).toEqual([]);
  // A file listed that no longer spawns would leave the fast lane for nothing.
  expect(listedButInProcess).toEqual([]);
});

test("the heavy in-process files are few, and start no process (else they belong to the other list)", () => {
  const heavy = Object.keys(HEAVY_IN_PROCESS);
  // The fast lane is every in-process test but these: a longer list would make it a sample.
  expect(heavy.length).toBeLessThanOrEqual(3);
  for (const f of heavy) expect({ f, spawns: spawnIn(join(ROOT, f)) }).toEqual({ f, spawns: null });
  for (const f of heavy) expect(f in SLOW_REASONS).toBe(false);
});

test("the detector sees a spawn through an imported helper", () => {
  // tests/server.ts spawns `suite serve`; bad-host's own text only calls startServer().
  expect(readFileSync(join(ROOT, "tests/web/bad-host.test.ts"), "utf8")).not.toMatch(SPAWNS);
  expect(spawnIn(join(ROOT, "tests/web/bad-host.test.ts"))).toBe("tests/server.ts: Bun.spawn");
});

test("the fast lane is every test file but the slow ones", () => {
  const fast = fastTestFiles();
  expect(fast.length + SLOW.length).toBe(allTestFiles().length);
  for (const f of SLOW) expect(fast).not.toContain(f);
  expect(fast).toContain("tests/support/slow-files.test.ts");
});
