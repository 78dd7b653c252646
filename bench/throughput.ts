// The default deal list's throughput against a bare Bun.serve, in alternating rounds, for one or
// more builds side by side (a before/after on the same machine, under the same load):
//   bun bench/throughput.ts [DB] [BINARY ...]      (default: dist/suite, built when stale)
// DB is seeded (one organization, bigco, of THROUGHPUT_DEALS deals, default 100,000) when it does not exist.
// Each round runs wrk (one thread, c = THROUGHPUT_C or 32, THROUGHPUT_S seconds) on the bare server, then on each
// binary; medians over THROUGHPUT_ROUNDS rounds (default 3) are printed with the cores wrk used.
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { cpuOf, freePort, freshBinary, waitFor } from "./process-support";
import { benchContext, seedFile } from "./seed";
import { median } from "./stats";

const root = join(import.meta.dir, "..");
const say = (s: string) => process.stdout.write(`${s}\n`);
const [dbArg, ...binaryArgs] = process.argv.slice(2);
const dbFile = resolve(dbArg ?? join(tmpdir(), "suite-throughput.db"));
const SECONDS = Number(process.env.THROUGHPUT_S ?? 5);
const ROUNDS = Number(process.env.THROUGHPUT_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.THROUGHPUT_C ?? 32);
// A database of `bun run bench` (BENCH_KEEP=1) works too: THROUGHPUT_PASSWORD="bench password 1".
const PASSWORD = process.env.THROUGHPUT_PASSWORD ?? "throughput password 1";
const SECRET = "throughput-secret-throughput-secret-0123";

if (!existsSync(dbFile)) {
  const deals = Number(process.env.THROUGHPUT_DEALS ?? 100_000);
  say(`seeding ${dbFile} with ${deals} deals...`);
  await seedFile(dbFile, [{ subdomain: "bigco", deals }], PASSWORD);
}
const binaries = binaryArgs.length > 0 ? binaryArgs.map((b) => resolve(b)) : [freshBinary(root, say)];

interface Target {
  name: string;
  url: string;
  pid: number;
}
const children: Array<ReturnType<typeof Bun.spawn>> = [];
const dir = join(tmpdir(), `suite-throughput-${process.pid}`);
try {
  const servers: Target[] = [];
  for (const binary of binaries) {
    const port = await freePort();
    const p = Bun.spawn([binary, "serve", "--port", String(port), "--host", "127.0.0.1", "--db", dbFile], {
      env: { ...process.env, SUITE_ACCESS_TTL: "7200", SUITE_JWT_SECRET: SECRET },
      stdout: "ignore",
      stderr: "inherit",
    });
    children.push(p);
    await waitFor(`http://127.0.0.1:${port}/api/v1/health`);
    servers.push({ name: binary.replace(`${root}/`, ""), url: `http://127.0.0.1:${port}`, pid: p.pid });
  }
  // Signed-in members (bulk-seeded users share the password), each on the first ten pages.
  const db = benchContext(dbFile);
  const members = db.db.query("SELECT u.email FROM users u JOIN tenants t ON t.id = u.tenant_id WHERE t.subdomain = 'bigco' AND u.role = 'member' ORDER BY u.email LIMIT 10").all() as { email: string }[];
  db.close();
  const tokens: string[] = [];
  for (const m of members) {
    const r = await fetch(`${servers[0]!.url}/api/v1/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-tenant": "bigco" },
      body: JSON.stringify({ email: m.email, password: PASSWORD }),
    });
    if (!r.ok) throw new Error(`login ${m.email}: ${r.status} ${await r.text()}`);
    tokens.push(((await r.json()) as { access_token: string }).access_token);
  }
  const requests = Array.from({ length: 10 }, (_, i) => ({ path: `/api/v1/crm/deals${i === 0 ? "" : `?page=${i + 1}`}`, token: tokens[i % tokens.length]! }));

  const { mkdirSync } = await import("node:fs");
  mkdirSync(dir, { recursive: true });
  const sample = join(dir, "sample.json");
  await Bun.write(sample, await (await fetch(`${servers[0]!.url}/api/v1/crm/deals`, { headers: { authorization: `Bearer ${tokens[0]}` } })).arrayBuffer());
  const barePort = await freePort();
  const bare = Bun.spawn([process.execPath, join(import.meta.dir, "bare.ts"), String(barePort), sample], { stdout: "ignore", stderr: "inherit" });
  children.push(bare);
  await waitFor(`http://127.0.0.1:${barePort}/`);

  const lua = (s: string) => `"${s.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
  const script = join(dir, "list.lua");
  await Bun.write(
    script,
    `local reqs = {${requests.map((r) => `{${lua(r.path)}, ${lua(`Bearer ${r.token}`)}}`).join(",\n")}}
local i = 0
request = function()
  i = i % #reqs + 1
  return wrk.format("GET", reqs[i][1], { ["Authorization"] = reqs[i][2] })
end`,
  );
  const wrk = async (t: Target, withScript: boolean) => {
    const before = cpuOf(t.pid).total;
    const p = Bun.spawn(["wrk", "-t1", `-c${CONNECTIONS}`, `-d${SECONDS}s`, ...(withScript ? ["-s", script] : []), `${t.url}/`], { stdout: "pipe", stderr: "inherit" });
    const out = await new Response(p.stdout).text();
    if ((await p.exited) !== 0) throw new Error(`wrk: ${out}`);
    const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? Number.NaN);
    const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
    if (non2xx > 0) throw new Error(`${t.name}: ${non2xx} answers were not 200`);
    return { rps, server: (cpuOf(t.pid).total - before) / SECONDS, wrk: Number(p.resourceUsage()?.cpuTime.total ?? 0n) / 1e6 / SECONDS };
  };
  const bareTarget: Target = { name: "bare Bun.serve", url: `http://127.0.0.1:${barePort}`, pid: bare.pid };
  const results = new Map<string, Array<{ rps: number; server: number; wrk: number }>>();
  for (let r = 1; r <= ROUNDS; r++) {
    for (const [t, scripted] of [[bareTarget, false], ...servers.map((s) => [s, true] as const)] as Array<[Target, boolean]>) {
      const m = await wrk(t, scripted);
      results.set(t.name, [...(results.get(t.name) ?? []), m]);
      say(
        `round ${r}  ${t.name.padEnd(40)} ${Math.round(m.rps).toString().padStart(7)} req/s  server ${m.server.toFixed(2)} cores (${((m.server / m.rps) * 1e6).toFixed(0)} µs CPU a request)  wrk ${m.wrk.toFixed(2)}`,
      );
    }
  }
  const bareRps = median(results.get(bareTarget.name)!.map((m) => m.rps));
  const bareWrk = median(results.get(bareTarget.name)!.map((m) => m.wrk));
  say("");
  say(`bare Bun.serve: ${Math.round(bareRps)} req/s (median of ${ROUNDS}), wrk using ${bareWrk.toFixed(2)} cores`);
  for (const s of servers) {
    const runs = results.get(s.name)!;
    const rps = median(runs.map((m) => m.rps));
    // The server's CPU time per request: steadier than req/s when other processes take the cores.
    const cpuUs = median(runs.map((m) => (m.server / m.rps) * 1e6));
    const generator = bareWrk > 0.9 || bareRps < 2 * rps ? "SUSPECT" : "ok";
    say(
      `${s.name}: default list ${Math.round(rps)} req/s = ${((rps / bareRps) * 100).toFixed(1)}% of bare, ${(1e6 / rps).toFixed(0)} µs a request, server CPU ${cpuUs.toFixed(0)} µs a request (generator check: ${generator})`,
    );
  }
} finally {
  for (const c of children) c.kill("SIGTERM");
  await Promise.all(children.map((c) => c.exited));
  (await import("node:fs")).rmSync(dir, { recursive: true, force: true });
}
