import { sqliteRepos } from "../tests/helpers";
// bun run bench flood: a login flood beside the deal list (issue 6, item 6). Measures the raw
// argon2 verify throughput of this machine (bench/argon2-raw.ts, at the server's hash
// concurrency), seeds one tenant of deals and sign-in accounts, serves dist/suite with
// SUITE_TRUST_PROXY, then times the default deal list from READERS clients, first quiet, then
// while LOGIN_CLIENTS clients sign in without pause from ever-new addresses (bench/flood-logins.ts).
// Every load generator is a process of its own. Prints a table and writes
// bench/results/flood-<timestamp>.json. Options (environment): FLOOD_DEALS (100000),
// FLOOD_ACCOUNTS (100), FLOOD_READERS (8), FLOOD_READ_RATE (25 a second each; 0: flat out), FLOOD_LOGIN_CLIENTS (50), FLOOD_QUIET_S (15),
// FLOOD_S (20), FLOOD_RAW_S (5), FLOOD_BINARY (another build to compare, instead of dist/suite),
// BENCH_KEEP=1 keeps the temporary directory.
import { mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../src/config";
import { writeTx } from "../src/db/database";
import { newId } from "../src/kernel/ids";
import { cpuOf, freePort, freshBinary, memoryOf, waitFor } from "./process-support";
import { benchContext, seedOrganizations } from "./seed";
import { fixed } from "./stats";

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const DEALS = env("FLOOD_DEALS", 100_000);
const ACCOUNTS = env("FLOOD_ACCOUNTS", 100);
const READERS = env("FLOOD_READERS", 8);
// Each reader reads 25 pages a second: a busy office's screens, not a stress test. 0: flat out.
const READ_RATE = env("FLOOD_READ_RATE", 25);
const LOGIN_CLIENTS = env("FLOOD_LOGIN_CLIENTS", 50);
const QUIET_S = env("FLOOD_QUIET_S", 15);
const FLOOD_S = env("FLOOD_S", 20);
const RAW_S = env("FLOOD_RAW_S", 5);
const TARGET = { p99Ratio: 3, loginShare: 0.9, rssMb: 400 };
const PASSWORD = "flood password 1";
const SUB = "floodco";
const root = join(import.meta.dir, "..");
const dir = mkdtempSync(join(tmpdir(), "suite-flood-"));
const dbFile = join(dir, "flood.db");
const bun = process.execPath;
const say = (s: string) => process.stdout.write(`${s}\n`);
// Readers answer null figures when FLOOD_READERS=0 (a flood alone, to see the login path's own cost).
const ms = (v: number | null) => fixed(v);
const serverEnv = { ...process.env, SUITE_TRUST_PROXY: "true", SUITE_ACCESS_TTL: "7200", SUITE_JWT_SECRET: "flood-secret-flood-secret-flood-secret-0123" };
// The server's own reading of its settings: the raw measure uses its very hash concurrency.
const config = loadConfig({}, { ...serverEnv, SUITE_DB: dbFile });

/** Cores the server used since `from`, by thread: its event loop, its argon2 workers, the rest. */
function serverCores([cpu, at]: readonly [ReturnType<typeof cpuOf>, number]) {
  const now = cpuOf(server.pid);
  const wall = (performance.now() - at) / 1000;
  const cores = (a: number, b: number) => Number(((a - b) / wall).toFixed(2));
  return { event_loop: cores(now.main, cpu.main), argon2_workers: cores(now.workers, cpu.workers), other_threads: cores(now.other, cpu.other), total: cores(now.total, cpu.total) };
}

/** Runs a helper script in its own process with a JSON config, and answers its JSON output. */
async function runScript<T>(script: string, name: string, input: unknown): Promise<T> {
  const inFile = join(dir, `${name}-in.json`);
  const outFile = join(dir, `${name}-out.json`);
  await Bun.write(inFile, JSON.stringify(input));
  const p = Bun.spawn([bun, join(import.meta.dir, script), inFile, outFile], { stdout: "inherit", stderr: "inherit" });
  if ((await p.exited) !== 0) throw new Error(`${script} failed`);
  return (await Bun.file(outFile).json()) as T;
}

type Readers = { seconds: number; cpu_seconds: number; requests: number; rps: number; p50_ms: number | null; p90_ms: number | null; p99_ms: number | null; p999_ms: number | null; max_ms: number | null; statuses: Record<string, number> };
type Logins = { seconds: number; cpu_seconds: number; ok: number; ok_per_second: number; statuses: Record<string, number>; errors: number; timeouts: number; latency_p50_ms: number; latency_p99_ms: number };
type Raw = { concurrency: number; seconds: number; verifies: number; per_second: number };

// Other work on the machine skews every figure here: the load averages go into the results.
const loadAtStart = loadavg();

// ---- 1. raw argon2, before any server runs (and again after the flood, the server idle) ----
async function measureRaw(concurrency: number, name: string): Promise<Raw> {
  const out = join(dir, `${name}-out.json`);
  const p = Bun.spawn([bun, join(import.meta.dir, "argon2-raw.ts"), String(concurrency), String(RAW_S), out], { stdout: "inherit", stderr: "inherit" });
  if ((await p.exited) !== 0) throw new Error("argon2-raw failed");
  const raw = (await Bun.file(out).json()) as Raw;
  say(`  ${concurrency} at once: ${raw.per_second.toFixed(1)} verifies/s`);
  return raw;
}
const CORES = navigator.hardwareConcurrency;
say(`raw argon2 verify throughput at the server's hash concurrency (${config.hashConcurrency}), ${RAW_S} s...`);
const rawBefore = await measureRaw(config.hashConcurrency, "raw-before");
// For the record only: what every core could verify, when the server runs fewer hashes at once.
const rawAllCores = config.hashConcurrency === CORES ? rawBefore : await measureRaw(CORES, "raw-all-cores");

// ---- 2. seed: one tenant of deals, and ACCOUNTS sign-in accounts sharing one password ----
say(`seeding ${dbFile}: ${DEALS} deals, ${ACCOUNTS} accounts...`);
const ctx = benchContext(dbFile);
const {
  tenantIds: [tenantId],
  passwordHash: hash,
} = await seedOrganizations(ctx, [{ subdomain: SUB, deals: DEALS }], PASSWORD);
const tenant = { id: tenantId! };
const seeded = (ctx.db.query("SELECT count(*) AS n FROM users WHERE tenant_id = ?").get(tenant.id) as { n: number }).n;
writeTx(ctx.db, () => {
  for (let i = seeded; i < ACCOUNTS; i++) {
    const at = ctx.now();
    sqliteRepos(ctx).users.insertInTx({ id: newId(), tenant_id: tenant.id, email: `flood.${i}@${SUB}.example`, full_name: `Flood ${i}`, role: "member", profile_id: null, password_hash: hash, created_at: at });
  }
});
const emails = (ctx.db.query("SELECT email FROM users WHERE tenant_id = ? ORDER BY email LIMIT ?").all(tenant.id, ACCOUNTS) as { email: string }[]).map((u) => u.email);
ctx.close();
say(`  ${emails.length} accounts, ${(statSync(dbFile).size / 2 ** 20).toFixed(0)} MiB`);

// ---- 3. serve the built binary, and watch its memory ----
const binary = process.env.FLOOD_BINARY ?? freshBinary(root, say);
const port = await freePort();
const server = Bun.spawn([binary, "serve", "--port", String(port), "--host", "127.0.0.1", "--db", dbFile], { env: serverEnv, stdout: "ignore", stderr: "inherit" });
let maxRssKb = 0;
let hwmKb = 0;
const sample = () => {
  const m = memoryOf(server.pid);
  maxRssKb = Math.max(maxRssKb, m.rssKb);
  hwmKb = Math.max(hwmKb, m.hwmKb);
};
const sampler = setInterval(sample, 100);
const base = `http://127.0.0.1:${port}`;
try {
  await waitFor(`${base}/api/v1/health`);
  const signIn = await fetch(`${base}/api/v1/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-tenant": SUB },
    body: JSON.stringify({ email: `admin@${SUB}.example`, password: PASSWORD }),
  });
  if (!signIn.ok) throw new Error(`admin login: ${signIn.status} ${await signIn.text()}`);
  const token = ((await signIn.json()) as { access_token: string }).access_token;
  const readers = (seconds: number) => ({ url: `${base}/api/v1/crm/deals`, token, clients: READERS, rate: READ_RATE, seconds, warmupSeconds: 2 });

  // ---- 4. quiet, then flood ----
  say(`quiet: ${READERS} clients read the deal list (${READ_RATE ? `${READ_RATE}/s each` : "flat out"}) for ${QUIET_S} s...`);
  const cpuAt = [cpuOf(server.pid), performance.now()] as const;
  const quiet = await runScript<Readers>("flood-readers.ts", "quiet", readers(QUIET_S));
  const cpuQuiet = serverCores(cpuAt);
  sample();
  const rssBeforeFloodMb = memoryOf(server.pid).rssKb / 1024;
  say(`  p50 ${ms(quiet.p50_ms)} ms, p99 ${ms(quiet.p99_ms)} ms, ${Math.round(quiet.rps)} req/s`);
  say(`flood: ${LOGIN_CLIENTS} clients sign in while ${READERS} read, ${FLOOD_S} s...`);
  const cpuFloodAt = [cpuOf(server.pid), performance.now()] as const;
  const [loud, logins] = await Promise.all([
    // The readers' 2 s warm-up overlaps the flood's start: their timed window lies inside it.
    runScript<Readers>("flood-readers.ts", "flood", { ...readers(FLOOD_S - 3), warmupSeconds: 2 }),
    runScript<Logins>("flood-logins.ts", "logins", { base, subdomain: SUB, emails, password: PASSWORD, connections: LOGIN_CLIENTS, seconds: FLOOD_S }),
  ]);
  const cpuFlood = serverCores(cpuFloodAt);
  sample();
  say("raw argon2 again, the server idle...");
  const rawAfter = await measureRaw(config.hashConcurrency, "raw-after");
  // The mean of the two measures: other work on the machine drifts over a run.
  const raw: Raw = { ...rawBefore, verifies: rawBefore.verifies + rawAfter.verifies, seconds: rawBefore.seconds + rawAfter.seconds, per_second: (rawBefore.per_second + rawAfter.per_second) / 2 };

  // ---- 5. report ----
  const ratio = (loud.p99_ms ?? Number.NaN) / (quiet.p99_ms ?? Number.NaN);
  const share = logins.ok_per_second / raw.per_second;
  const peakMb = Math.max(hwmKb, maxRssKb) / 1024;
  const notOk = Object.fromEntries(Object.entries(logins.statuses).filter(([code]) => code !== "200"));
  const nonOkCount = Object.values(notOk).reduce((s, n) => s + n, 0) + logins.errors + logins.timeouts;
  const verdict = (pass: boolean) => (pass ? "PASS" : "FAIL");
  const row = (what: string, figure: string, target: string, pass: boolean | null) =>
    say(`${what.padEnd(34)}${figure.padStart(22)}   ${target.padEnd(10)}${pass === null ? "" : verdict(pass)}`);
  say("");
  row("measure", "figure", "target", null);
  row("deal list p50 quiet / flood", `${ms(quiet.p50_ms)} / ${ms(loud.p50_ms)} ms`, "", null);
  row("deal list p90 quiet / flood", `${ms(quiet.p90_ms)} / ${ms(loud.p90_ms)} ms`, "", null);
  row("deal list p99 quiet / flood", `${ms(quiet.p99_ms)} / ${ms(loud.p99_ms)} ms`, "", null);
  row("deal list p99.9 quiet / flood", `${ms(quiet.p999_ms)} / ${ms(loud.p999_ms)} ms`, "", null);
  row("  flood p99 ÷ quiet p99", `${ratio.toFixed(2)}×`, `< ${TARGET.p99Ratio}×`, ratio < TARGET.p99Ratio);
  row("logins/s vs raw argon2 verify/s", `${logins.ok_per_second.toFixed(1)} / ${raw.per_second.toFixed(1)}`, "", null);
  row("  share of raw", `${(share * 100).toFixed(1)} %`, `>= ${TARGET.loginShare * 100} %`, share >= TARGET.loginShare);
  if (rawAllCores !== rawBefore) row(`  (raw verify/s on all ${CORES} cores)`, `${rawAllCores.per_second.toFixed(1)} (${((logins.ok_per_second / rawAllCores.per_second) * 100).toFixed(1)} %)`, "", null);
  row("server peak RSS (VmHWM)", `${peakMb.toFixed(1)} MB`, `< ${TARGET.rssMb} MB`, peakMb < TARGET.rssMb);
  const readsNotOk = [quiet, loud].reduce((n, r) => n + Object.entries(r.statuses).reduce((m, [code, k]) => m + (code === "200" ? 0 : k), 0), 0);
  row("deal list answers other than 200", String(readsNotOk), "0", readsNotOk === 0);
  row("login answers other than 200", `${nonOkCount} ${nonOkCount ? JSON.stringify(notOk) : ""}`.trim(), "0", nonOkCount === 0);
  const genCores = (r: { cpu_seconds: number; seconds: number }) => (r.cpu_seconds / r.seconds).toFixed(2);
  say(`cores used, quiet: server ${JSON.stringify(cpuQuiet)}, readers ${genCores(quiet)}`);
  say(`cores used, flood: server ${JSON.stringify(cpuFlood)}, readers ${genCores(loud)}, login clients ${genCores(logins)}`);
  say(`load average ${loadAtStart.map((l) => l.toFixed(2)).join(" ")} at start, ${loadavg().map((l) => l.toFixed(2)).join(" ")} at the end (${navigator.hardwareConcurrency} cores)`);
  say(`(login latency p50 ${logins.latency_p50_ms} ms, p99 ${logins.latency_p99_ms} ms; deal list ${Math.round(quiet.rps)} → ${Math.round(loud.rps)} req/s; hash concurrency ${config.hashConcurrency} on ${navigator.hardwareConcurrency} cores)`);

  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  mkdirSync(join(root, "bench", "results"), { recursive: true });
  const file = join(root, "bench", "results", `flood-${stamp}.json`);
  await Bun.write(
    file,
    JSON.stringify(
      {
        at: new Date().toISOString(),
        machine: { cpus: navigator.hardwareConcurrency, bun: Bun.version, hash_concurrency: config.hashConcurrency, load_average_at_start: loadAtStart, load_average_at_end: loadavg() },
        setup: { deals: DEALS, accounts: emails.length, readers: READERS, read_rate_per_reader: READ_RATE, login_clients: LOGIN_CLIENTS, quiet_seconds: QUIET_S, flood_seconds: FLOOD_S },
        raw_argon2: { mean_per_second: raw.per_second, before: rawBefore, after: rawAfter, all_cores: rawAllCores },
        quiet,
        flood: { readers: loud, logins },
        server: { peak_rss_mb: peakMb, rss_before_flood_mb: rssBeforeFloodMb, cores_quiet: cpuQuiet, cores_flood: cpuFlood },
        verdicts: {
          p99_ratio: { value: ratio, target: `< ${TARGET.p99Ratio}`, pass: ratio < TARGET.p99Ratio },
          login_share: { value: share, target: `>= ${TARGET.loginShare}`, pass: share >= TARGET.loginShare },
          peak_rss_mb: { value: peakMb, target: `< ${TARGET.rssMb}`, pass: peakMb < TARGET.rssMb },
          non_200_logins: { value: nonOkCount, target: "0", pass: nonOkCount === 0 },
          non_200_reads: { value: readsNotOk, target: "0", pass: readsNotOk === 0 },
        },
      },
      null,
      2,
    ),
  );
  say(`results: ${file}`);
} finally {
  clearInterval(sampler);
  server.kill("SIGTERM");
  await server.exited;
  if (process.env.BENCH_KEEP !== "1") rmSync(dir, { recursive: true, force: true });
  else say(`kept ${dir}`);
}
