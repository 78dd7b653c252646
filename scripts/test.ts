#!/usr/bin/env bun
/**
 * `npm test`: the whole suite on SQLite (as `bun test --timeout 30000` always ran it), then the
 * files that run on PostgreSQL again, against a throwaway cluster this script starts and always
 * stops (scripts/postgres-cluster.ts), or against SUITE_TEST_DATABASE_URL when that is set.
 *
 *   bun scripts/test.ts [bun test options] [paths]   (npm test -- … passes them on)
 *
 * Paths narrow both runs: the PostgreSQL run takes those of them inside postgresTestFiles().
 * Options (--bail, -t NAME, …) go to both runs. No PostgreSQL 15+ installed and no
 * SUITE_TEST_DATABASE_URL: it says so and fails, unless SUITE_TEST_SKIP_POSTGRES=1.
 *
 *   bun scripts/test.ts --fast [bun test options] [paths]   (npm run test:fast)
 *
 * The fast lane: every test file that starts no process (fastTestFiles()), on SQLite only, in
 * parallel worker processes (one per core), the slowest files first (tests/support/fast-timings.json;
 * `npm run test:fast -- --update-timings` measures them again). No PostgreSQL, no browser.
 */
import { randomBytes } from "node:crypto";
import { Glob } from "bun";
import { join } from "node:path";
import { SQLITE_ONLY } from "../tests/support/backend-files";
import { SLOW } from "../tests/support/slow-files";
import { type Cluster, postgresBin, startCluster } from "./postgres-cluster";

/**
 * The test files that run a second time on PostgreSQL, with SUITE_TEST_BACKEND=postgres and
 * SUITE_TEST_DATABASE_URL set: every test file but those tests/support/backend-files.ts lists as
 * SQLite-only (each with its reason), so a new test file runs on both backends unless it says why not.
 */
export function postgresTestFiles(): string[] {
  const sqliteOnly = new Set(SQLITE_ONLY);
  return allTestFiles().filter((f) => !sqliteOnly.has(f));
}

const ROOT = join(import.meta.dir, "..");
const allTestFiles = () => [...new Glob("tests/**/*.test.ts").scanSync({ cwd: ROOT })].sort();

/**
 * The fast lane's files: every test file but those tests/support/slow-files.ts lists (each starts
 * a process: `suite`, a server, a browser …), so a new in-process test file is in it by default.
 */
export function fastTestFiles(): string[] {
  const slow = new Set(SLOW);
  return allTestFiles().filter((f) => !slow.has(f));
}

/** The fast lane's paths: the whole lane, or its files inside the given paths (files or folders). */
export function fastPaths(given: string[]): string[] {
  const fast = fastTestFiles();
  if (given.length === 0) return fast;
  return fast.filter((f) => given.some((g) => norm(f) === norm(g) || norm(f).startsWith(norm(g).replace(/\/?$/, "/"))));
}

const FAST_TIMINGS = "tests/support/fast-timings.json";

const TIMEOUT = ["--timeout", "30000"];
/** bun test options followed by a value of their own (the value is no path). */
const VALUE_OPTIONS = new Set(["-t", "--test-name-pattern", "--timeout", "--rerun-each", "--preload", "--coverage-dir", "--coverage-reporter", "--reporter", "--reporter-outfile", "--seed", "--max-concurrency", "--timings", "--shard", "--parallel-delay"]);

interface Summary {
  name: string;
  code: number;
  seconds: number;
  /** bun test's closing lines: "N pass", "N fail", "Ran N tests across M files". */
  lines: string[];
  /** CPU time of bun test and its workers (user + system). */
  cpuSeconds: number;
}

/** Splits what npm test was given into options (for both runs) and paths (filters). */
export function splitArgs(argv: string[]): { options: string[]; paths: string[] } {
  const options: string[] = [];
  const paths: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a.startsWith("-")) {
      options.push(a);
      if (VALUE_OPTIONS.has(a) && i + 1 < argv.length) options.push(argv[++i]!);
    } else paths.push(a);
  }
  return { options, paths };
}

const norm = (p: string) => p.replace(/^\.\//, "");

/** The PostgreSQL run's paths: the list, or the given paths that fall inside it (none: no run). */
export function postgresPaths(given: string[]): string[] {
  const list = postgresTestFiles();
  if (given.length === 0) return list;
  const out = new Set<string>();
  for (const g of given) {
    // A path inside a listed folder runs as given; a folder holding listed ones runs just those.
    if (list.some((p) => `${norm(g)}/`.startsWith(norm(p)))) out.add(g);
    else for (const p of list) if (norm(p).startsWith(norm(g).replace(/\/?$/, "/"))) out.add(p);
  }
  return [...out];
}

let child: ReturnType<typeof Bun.spawn> | null = null;

/** Runs bun test, its output passed through as it comes, and keeps the closing summary lines. */
async function runBunTest(name: string, args: string[], env: Record<string, string | undefined>): Promise<Summary> {
  const started = performance.now();
  process.stdout.write(`\n== ${name}: bun test ${args.join(" ")}\n`);
  const p = Bun.spawn([process.execPath, "test", ...args], { env, stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  child = p;
  const tail: string[] = [];
  const pump = async (stream: ReadableStream<Uint8Array>, to: NodeJS.WriteStream) => {
    const decoder = new TextDecoder();
    let pending = "";
    for await (const chunk of stream) {
      to.write(chunk);
      pending += decoder.decode(chunk, { stream: true });
      const lines = pending.split("\n");
      pending = lines.pop()!;
      for (const l of lines) if (/^\s*\d+ (pass|fail|skip|todo|snapshots?)|^Ran \d+ tests?/.test(l)) tail.push(l.trim());
    }
  };
  await Promise.all([pump(p.stdout as ReadableStream<Uint8Array>, process.stdout), pump(p.stderr as ReadableStream<Uint8Array>, process.stderr), p.exited]);
  child = null;
  const cpu = p.resourceUsage()?.cpuTime;
  return { name, code: p.exitCode ?? 1, seconds: (performance.now() - started) / 1000, lines: tail, cpuSeconds: cpu ? Number(cpu.total) / 1e6 : Number.NaN };
}

function loud(lines: string[]): void {
  const bar = "!".repeat(78);
  process.stderr.write(`\n${bar}\n${lines.map((l) => `!! ${l}`).join("\n")}\n${bar}\n\n`);
}

/** npm run test:fast: the in-process files on SQLite, in parallel workers, slowest first. */
async function fast(options: string[], paths: string[]): Promise<number> {
  const files = fastPaths(paths);
  if (files.length === 0) {
    process.stderr.write(`npm run test:fast: none of ${paths.join(", ")} is in the fast lane (tests/support/slow-files.ts lists the others)\n`);
    return 1;
  }
  const lane = [
    ...(options.some((o) => o.startsWith("--parallel")) ? [] : [`--parallel=${navigator.hardwareConcurrency}`]),
    // One global and module registry per worker, as `npm test`'s single process has.
    ...(options.includes("--isolate") ? [] : ["--no-isolate"]),
    `--timings=${join(ROOT, FAST_TIMINGS)}`,
  ];
  const env = { ...process.env, SUITE_TEST_BACKEND: "sqlite", SUITE_TEST_DATABASE_URL: undefined };
  const s = await runBunTest("fast", [...TIMEOUT, ...lane, ...options, ...files], env);
  // The CPU time too: on a machine others load, the steadier figure than the wall time.
  process.stdout.write(
    `\n== npm run test:fast: ${files.length} files in-process on SQLite (${SLOW.length} more in npm test: tests/support/slow-files.ts)\n` +
      `${s.code === 0 ? "passed" : `FAILED (exit ${s.code})`} in ${s.seconds.toFixed(0)} s, ${s.cpuSeconds.toFixed(0)} s of CPU; ${s.lines.join("; ")}\n`,
  );
  return s.code === 0 ? 0 : 1;
}

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  if (argv.includes("--fast")) {
    const { options, paths } = splitArgs(argv.filter((a) => a !== "--fast"));
    return fast(options, paths);
  }
  const { options, paths } = splitArgs(argv);
  const given = process.env.SUITE_TEST_DATABASE_URL || null;
  const skip = process.env.SUITE_TEST_SKIP_POSTGRES === "1";
  const pgPaths = postgresPaths(paths);
  const wantPostgres = !skip && pgPaths.length > 0;
  if (wantPostgres && !given && !postgresBin()) {
    loud([
      "PostgreSQL 15 or newer is not installed, and SUITE_TEST_DATABASE_URL is not set:",
      "npm test runs the suite on SQLite AND on PostgreSQL, and cannot do the second run.",
      "Install it (Debian/Ubuntu: apt-get install -y postgresql; the tests start their own",
      "throwaway cluster, no service needed), or point SUITE_TEST_DATABASE_URL at a server",
      "whose user may CREATE DATABASE, or run SQLite only: SUITE_TEST_SKIP_POSTGRES=1 npm test",
    ]);
    return 1;
  }

  // The first run is exactly what npm test always ran: no PostgreSQL in its environment.
  const sqliteEnv = { ...process.env, SUITE_TEST_BACKEND: "sqlite", SUITE_TEST_DATABASE_URL: undefined };
  const summaries = [await runBunTest("sqlite", [...TIMEOUT, ...options, ...paths], sqliteEnv)];

  if (!wantPostgres) {
    if (skip) loud(["SUITE_TEST_SKIP_POSTGRES=1: the PostgreSQL run was skipped (SQLite only)."]);
    else process.stdout.write("\n(no PostgreSQL run: none of the given paths runs on PostgreSQL)\n");
  } else {
    let cluster: Cluster | null = null;
    let url = given;
    let clusterSeconds: number | null = null;
    if (!url) {
      const t = performance.now();
      cluster = await startCluster();
      stopOnExit = cluster;
      clusterSeconds = (performance.now() - t) / 1000;
      // The throwaway cluster trusts every local login, so a password can ride along: the whole
      // run then carries a secret-bearing URL, and tests/preload.ts's ledger fails if it is logged.
      const withPassword = new URL(cluster.url);
      withPassword.password = `pgtest-${randomBytes(12).toString("base64url")}`;
      url = withPassword.toString();
      process.stdout.write(`\n== PostgreSQL: throwaway cluster in ${cluster.dir}, started in ${clusterSeconds.toFixed(1)} s\n`);
    }
    try {
      const env = { ...process.env, SUITE_TEST_BACKEND: "postgres", SUITE_TEST_DATABASE_URL: url };
      const s = await runBunTest("postgres", [...TIMEOUT, ...options, ...pgPaths], env);
      if (clusterSeconds !== null) s.lines.push(`cluster started in ${clusterSeconds.toFixed(1)} s`);
      summaries.push(s);
    } finally {
      cluster?.stop();
      stopOnExit = null;
    }
  }

  process.stdout.write("\n== npm test: both runs\n");
  for (const s of summaries) {
    process.stdout.write(`${s.name}: ${s.code === 0 ? "passed" : `FAILED (exit ${s.code})`} in ${s.seconds.toFixed(0)} s (${s.cpuSeconds.toFixed(0)} s of CPU); ${s.lines.join("; ")}\n`);
  }
  return summaries.some((s) => s.code !== 0) ? 1 : 0;
}

/** The cluster to stop however the run ends (a failure, Ctrl-C, a kill by CI's timeout). */
let stopOnExit: Cluster | null = null;
function stopCluster(): void {
  const c = stopOnExit;
  stopOnExit = null;
  c?.stop();
}
function interrupted(signal: NodeJS.Signals): void {
  child?.kill(signal);
  stopCluster();
  process.exit(signal === "SIGINT" ? 130 : 143);
}
if (import.meta.main) {
  process.on("SIGINT", () => interrupted("SIGINT"));
  process.on("SIGTERM", () => interrupted("SIGTERM"));
  process.on("exit", stopCluster);
  try {
    process.exitCode = await main();
  } catch (e) {
    stopCluster();
    process.stderr.write(`npm test: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 1;
  }
}
