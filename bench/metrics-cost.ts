// bun run bench metrics: the cost a request pays for the metrics and trace context (issue: ≤ 2 µs).
// Records BENCH_METRICS_N requests (2,000,000) over the real app's route templates, methods and
// statuses, as the access-log hook does, and starts a trace for each; prints µs per request, best
// of five rounds (in-process: no server, no load generator to be the bottleneck).
import { createApp } from "../src/app";
import { loadConfig } from "../src/config";
import { createContext } from "../src/context";
import { createMetrics } from "../src/metrics/recorder";
import { traceOf } from "../src/http/trace";

const N = Number(process.env.BENCH_METRICS_N ?? 2_000_000);
const ctx = createContext({ config: loadConfig({}, { SUITE_DB: ":memory:" }), log: () => {} });
const routes = createApp(ctx).routes.map((r) => [r.path, r.method] as const);
await ctx.close();
const statuses = [200, 200, 200, 201, 204, 401, 404, 422];
const metrics = createMetrics("bench");
const load = () => require("node:fs").readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");

/** µs of this thread's CPU per call (user + system): what the call costs whatever else the cores run. */
function round(name: string, one: (i: number) => void): number {
  const started = process.cpuUsage();
  for (let i = 0; i < N; i++) one(i);
  const used = process.cpuUsage(started);
  return (used.user + used.system) / N;
}
const best = (name: string, one: (i: number) => void) => {
  const times = Array.from({ length: 5 }, () => round(name, one));
  console.log(`${name.padEnd(46)} ${Math.min(...times).toFixed(3)} µs of CPU a request (rounds: ${times.map((t) => t.toFixed(3)).join(", ")})`);
  return Math.min(...times);
};

console.log(`${routes.length} route templates × ${statuses.length} statuses, ${N.toLocaleString("en-US")} requests a round; load ${load()}`);
const record = best("metrics.request (counter + histogram)", (i) => {
  const [path, method] = routes[i % routes.length]!;
  metrics.request(path, method, statuses[i % statuses.length]!, 0.0007 + (i % 50) * 0.0001);
});
const given = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const fresh = best("traceOf (new trace)", () => traceOf(null));
const continued = best("traceOf (a caller's traceparent)", () => traceOf(given));
const total = record + Math.max(fresh, continued);
console.log(`a request's metrics and trace: ${total.toFixed(3)} µs (target 2 µs: ${total <= 2 ? "met" : "MISSED"})`);
const text = await metrics.text();
console.log(`one scrape after that: ${(text.length / 1024).toFixed(0)} KiB, ${text.split("\n").filter((l) => l && !l.startsWith("#")).length} samples`);
metrics.close();
