// Deal-list readers, a process of their own: bun bench/flood-readers.ts CONFIG.json OUT.json.
// CLIENTS loops, each one request at a time over keep-alive. With `rate` > 0 each client sends
// `rate` requests a second on a fixed schedule (people at their screens, not a stress test).
// With `rate` 0 each client sends as fast as it is answered.
import { quantile } from "./stats";

interface ReadersConfig {
  url: string;
  token: string;
  clients: number;
  /** Requests per second per client; 0: as fast as answered. */
  rate: number;
  seconds: number;
  warmupSeconds: number;
}

const [configFile, outFile] = process.argv.slice(2);
const c = (await Bun.file(configFile!).json()) as ReadersConfig;
const headers = { authorization: `Bearer ${c.token}` };
const times: number[] = [];
const statuses: Record<string, number> = {};

async function loop(until: number, record: boolean, offset: number): Promise<void> {
  const interval = c.rate > 0 ? 1000 / c.rate : 0;
  let due = performance.now() + offset * interval;
  while (due < until) {
    const wait = due - performance.now();
    if (wait > 0) await Bun.sleep(wait);
    // Timed from the send: at 40 ms between a client's requests, a stall of a few ms delays no
    // send (no coordinated omission), and the load generator's own timer lateness is not the server's.
    const started = performance.now();
    due = interval > 0 ? due + interval : performance.now();
    const res = await fetch(c.url, { headers });
    await res.arrayBuffer();
    if (!record) continue;
    times.push(performance.now() - started);
    statuses[res.status] = (statuses[res.status] ?? 0) + 1;
  }
}

const run = (seconds: number, record: boolean) => {
  const until = performance.now() + seconds * 1000;
  // Clients start spread over one interval, as independent people would.
  return Promise.all(Array.from({ length: c.clients }, (_, i) => loop(until, record, i / c.clients)));
};
await run(c.warmupSeconds, false);
const started = performance.now();
const cpuStarted = process.cpuUsage();
await run(c.seconds, true);
const cpu = process.cpuUsage(cpuStarted);
const elapsed = (performance.now() - started) / 1000;
times.sort((a, b) => a - b);
const at = (q: number) => quantile(times, q);
await Bun.write(
  outFile!,
  JSON.stringify({ requests: times.length, seconds: elapsed, rps: times.length / elapsed, p50_ms: at(0.5), p90_ms: at(0.9), p99_ms: at(0.99), p999_ms: at(0.999), max_ms: times.at(-1) ?? null, statuses, cpu_seconds: (cpu.user + cpu.system) / 1e6 }),
);
