// The load generator, a process of its own: bun bench/load.ts CONFIG.json OUT.json
/// <reference path="./autocannon.d.ts" />
// Latency at concurrency 1 (a sequential keep-alive loop timed per request), throughput at
// concurrency 32 (autocannon), and each shape's `total` checked against a direct SQL count.
import { Database } from "bun:sqlite";
import autocannon from "autocannon";
import type { BenchRequest, Shape } from "./shapes";

interface LoadConfig {
  base: string;
  bare: string;
  db: string;
  shapes: Shape[];
  latencySeconds: number;
  throughputSeconds: number;
  connections: number;
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
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!;
  return { n: times.length, p50: at(0.5), p99: at(0.99), max: times.at(-1)! };
}

async function throughput(url: string, requests: BenchRequest[] | null): Promise<{ rps: number; errors: number }> {
  let i = 0;
  const result = await autocannon({
    url,
    connections: config.connections,
    duration: config.throughputSeconds,
    ...(requests
      ? {
          requests: [
            {
              setupRequest: (req: Record<string, any>) => {
                const r = requests[i++ % requests.length]!;
                return { ...req, path: r.path, headers: { ...req.headers, authorization: `Bearer ${r.token}` } };
              },
            },
          ],
        }
      : {}),
  });
  return { rps: result.requests.average, errors: result.non2xx + result.errors + result.timeouts };
}

const db = new Database(config.db, { readonly: true });
const results: ShapeResult[] = [];

say("bare Bun.serve (stored response bytes)...");
const bare = await throughput(config.bare, null);
say(`  ${Math.round(bare.rps)} req/s`);

for (const shape of config.shapes) {
  const checks = [];
  for (const c of shape.checks) {
    const res = await get(c);
    const answered = ((await res.json()) as { total: number }).total;
    const expected = (db.query(c.sql).get(...c.args) as { n: number }).n;
    checks.push({ path: c.path, answered, expected, ok: answered === expected });
  }
  const lat = await latency(shape.requests);
  const tp = await throughput(config.base, shape.requests);
  const r: ShapeResult = {
    name: shape.name,
    search: shape.search,
    requests_c1: lat.n,
    p50_ms: lat.p50,
    p99_ms: lat.p99,
    max_ms: lat.max,
    rps_c32: tp.rps,
    errors_c32: tp.errors,
    checks,
    correct: checks.every((c) => c.ok),
  };
  results.push(r);
  say(`  ${shape.name.padEnd(32)} p50 ${lat.p50.toFixed(2)} ms  p99 ${lat.p99.toFixed(2)} ms  ${Math.round(tp.rps)} req/s  ${r.correct ? "total ok" : "TOTAL WRONG"}`);
}
db.close();
await Bun.write(outFile!, JSON.stringify({ bare_rps: bare.rps, shapes: results }, null, 2));
