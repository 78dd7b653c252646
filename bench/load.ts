// The load generator, a process of its own: bun bench/load.ts CONFIG.json OUT.json
// Latency at concurrency 1 (a sequential keep-alive loop timed per request), throughput at
// concurrency 32 (wrk, one thread, each request's path and token from a Lua table), and each
// shape's `total` checked against a direct SQL count. wrk's own CPU time is measured: a generator
// near a full core is the bottleneck, and the run says so.
import { Database } from "bun:sqlite";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { BenchRequest, Shape } from "./shapes";
import { summarize } from "./stats";

interface LoadConfig {
  base: string;
  bare: string;
  db: string;
  dir: string;
  serverPid: number;
  barePid: number;
  shapes: Shape[];
  latencySeconds: number;
  throughputSeconds: number;
  connections: number;
}

export interface Throughput {
  rps: number;
  errors: number;
  /** Cores used during the run: by wrk, and by the server it drove. */
  wrk_cores: number;
  server_cores: number;
}

export interface ShapeResult {
  name: string;
  search: boolean;
  requests_c1: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
  rps_c32: number;
  errors_c32: number;
  wrk_cores: number;
  server_cores: number;
  checks: Array<{ path: string; answered: number; expected: number; ok: boolean }>;
  correct: boolean;
}

const [configFile, outFile] = process.argv.slice(2);
const config = (await Bun.file(configFile!).json()) as LoadConfig;
const say = (s: string) => process.stdout.write(`${s}\n`);

const get = (r: BenchRequest) => fetch(`${config.base}${r.path}`, { headers: { authorization: `Bearer ${r.token}` } });

async function latency(requests: BenchRequest[]): Promise<{ n: number; p50: number; p99: number; max: number }> {
  for (let i = 0; i < 20; i++) await (await get(requests[i % requests.length]!)).arrayBuffer();
  const times: number[] = [];
  const until = performance.now() + config.latencySeconds * 1000;
  let i = 0;
  while (performance.now() < until || times.length < 200) {
    const r = requests[i++ % requests.length]!;
    const started = performance.now();
    const res = await get(r);
    await res.arrayBuffer();
    times.push(performance.now() - started);
    if (res.status !== 200) throw new Error(`${r.path}: ${res.status}`);
  }
  const { n, p50, p99, max } = summarize(times);
  return { n, p50, p99, max };
}

/** CPU seconds a process has used so far (utime + stime from /proc). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

const lua = (s: string) => `"${s.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
let scripts = 0;

/** wrk against `url`: requests rotate over `requests` (path and token), or GET / for the bare server. */
async function throughput(url: string, requests: BenchRequest[] | null, pid: number): Promise<Throughput> {
  const script = join(config.dir, `wrk-${++scripts}.lua`);
  const table = (requests ?? []).map((r) => `{${lua(r.path)}, ${lua(`Bearer ${r.token}`)}}`).join(",\n");
  await Bun.write(
    script,
    `local reqs = {${table}}
local i = 0
${requests ? `request = function()
  i = i % #reqs + 1
  return wrk.format("GET", reqs[i][1], { ["Authorization"] = reqs[i][2] })
end` : ""}
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("WRK %d %d %d\\n", summary.requests, summary.duration, e.connect + e.read + e.write + e.timeout + e.status))
end
`,
  );
  const serverBefore = cpuSeconds(pid);
  const wrk = Bun.spawn(["wrk", "-t1", `-c${config.connections}`, `-d${config.throughputSeconds}s`, "-s", script, url], { stdout: "pipe", stderr: "inherit" });
  const out = await new Response(wrk.stdout).text();
  if ((await wrk.exited) !== 0) throw new Error(`wrk failed: ${out}`);
  const server = cpuSeconds(pid) - serverBefore;
  const m = /WRK (\d+) (\d+) (\d+)/.exec(out);
  if (!m) throw new Error(`wrk printed no summary: ${out}`);
  const seconds = Number(m[2]) / 1e6;
  const wrkCpu = Number(wrk.resourceUsage()?.cpuTime.total ?? 0n) / 1e6;
  return { rps: Number(m[1]) / seconds, errors: Number(m[3]), wrk_cores: wrkCpu / seconds, server_cores: server / seconds };
}

const db = new Database(config.db, { readonly: true });
const results: ShapeResult[] = [];

say("bare Bun.serve (stored response bytes)...");
const bare = await throughput(config.bare, null, config.barePid);
say(`  ${Math.round(bare.rps)} req/s; wrk used ${bare.wrk_cores.toFixed(2)} cores, the bare server ${bare.server_cores.toFixed(2)}`);

for (const shape of config.shapes) {
  const checks = [];
  for (const c of shape.checks) {
    const res = await get(c);
    const answered = ((await res.json()) as { total: number }).total;
    const expected = (db.query(c.sql).get(...c.args) as { n: number }).n;
    checks.push({ path: c.path, answered, expected, ok: answered === expected });
  }
  const lat = await latency(shape.requests);
  const tp = await throughput(config.base, shape.requests, config.serverPid);
  const r: ShapeResult = {
    name: shape.name,
    search: shape.search,
    requests_c1: lat.n,
    p50_ms: lat.p50,
    p99_ms: lat.p99,
    max_ms: lat.max,
    rps_c32: tp.rps,
    errors_c32: tp.errors,
    wrk_cores: tp.wrk_cores,
    server_cores: tp.server_cores,
    checks,
    correct: checks.every((c) => c.ok),
  };
  results.push(r);
  say(`  ${shape.name.padEnd(32)} p50 ${lat.p50.toFixed(2)} ms  p99 ${lat.p99.toFixed(2)} ms  ${Math.round(tp.rps)} req/s  ${r.correct ? "total ok" : "TOTAL WRONG"}`);
}
db.close();
await Bun.write(outFile!, JSON.stringify({ bare, shapes: results }, null, 2));
