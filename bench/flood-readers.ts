// Deal-list readers, a process of their own: bun bench/flood-readers.ts CONFIG.json OUT.json.
// CLIENTS loops, each one request at a time over keep-alive, every request timed end to end.
export {};

interface ReadersConfig {
  url: string;
  token: string;
  clients: number;
  seconds: number;
  warmupSeconds: number;
}

const [configFile, outFile] = process.argv.slice(2);
const c = (await Bun.file(configFile!).json()) as ReadersConfig;
const headers = { authorization: `Bearer ${c.token}` };
const times: number[] = [];
const statuses: Record<string, number> = {};

async function loop(until: number, record: boolean): Promise<void> {
  while (performance.now() < until) {
    const started = performance.now();
    const res = await fetch(c.url, { headers });
    await res.arrayBuffer();
    if (!record) continue;
    times.push(performance.now() - started);
    statuses[res.status] = (statuses[res.status] ?? 0) + 1;
  }
}

const run = (seconds: number, record: boolean) => {
  const until = performance.now() + seconds * 1000;
  return Promise.all(Array.from({ length: c.clients }, () => loop(until, record)));
};
await run(c.warmupSeconds, false);
const started = performance.now();
const cpuStarted = process.cpuUsage();
await run(c.seconds, true);
const cpu = process.cpuUsage(cpuStarted);
const elapsed = (performance.now() - started) / 1000;
times.sort((a, b) => a - b);
const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))] ?? Number.NaN;
await Bun.write(
  outFile!,
  JSON.stringify({ requests: times.length, seconds: elapsed, rps: times.length / elapsed, p50_ms: at(0.5), p99_ms: at(0.99), max_ms: times.at(-1) ?? null, statuses, cpu_seconds: (cpu.user + cpu.system) / 1e6 }),
);
