// bun bench/postgres-http.ts: the deal list over HTTP with `suite serve` on PostgreSQL, at 1M
// deals, concurrency 1: the shapes of bench/shapes.ts, p50/p99 each, totals checked against a
// direct count on the database. Needs the suite wired to PostgreSQL (SUITE_DATABASE_URL); until
// then bench/postgres-deals.ts measures the same shapes in-process.
// Options (environment): BENCH_BIG (1000000), BENCH_SMALL (100000), BENCH_TENANTS (10),
// BENCH_LATENCY_S (2, per shape), BENCH_PG_URL (a server to use instead of a throwaway cluster).
import { join } from "node:path";
import { type Cluster, startCluster } from "../scripts/postgres-cluster";
import { openPostgres, type Pg } from "../src/stores/postgres/database";
import { applySchema } from "../src/stores/postgres/schema";
import { bulkSeed } from "../src/stores/postgres/seed";
import { freePort, waitFor } from "./process-support";
import { buildShapes, frequentGrams } from "./shapes";

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const BIG = env("BENCH_BIG", 1_000_000);
const SMALL = env("BENCH_SMALL", 100_000);
const TENANTS = env("BENCH_TENANTS", 10);
const LATENCY_S = env("BENCH_LATENCY_S", 2);
const PASSWORD = "bench password 1";
const say = (s: string) => process.stdout.write(`${s}\n`);
const subs = Array.from({ length: TENANTS }, (_, i) => (i === 0 ? "bigco" : `smallco${i}`));

let cluster: Cluster | null = null;
let pg: Pg | null = null;
let server: ReturnType<typeof Bun.spawn> | null = null;
try {
  let base = process.env.BENCH_PG_URL;
  if (!base) {
    cluster = await startCluster();
    base = cluster.url;
  }
  const admin = openPostgres(base, { max: 1 });
  await admin.unsafe("DROP DATABASE IF EXISTS suite_http_bench WITH (FORCE)");
  await admin.unsafe("CREATE DATABASE suite_http_bench");
  await admin.close();
  const url = base.replace(/\/[^/?]*(\?|$)/, "/suite_http_bench$1");
  pg = openPostgres(url, { max: 2 });
  await applySchema(pg);

  const port = await freePort();
  server = Bun.spawn([process.execPath, join(import.meta.dir, "..", "src", "main.ts"), "serve", "--port", String(port), "--host", "127.0.0.1"], {
    env: { ...process.env, SUITE_DATABASE_URL: url, SUITE_ACCESS_TTL: "7200", SUITE_JWT_SECRET: "bench-secret-bench-secret-bench-secret-0123" },
    stdout: "ignore",
    stderr: "inherit",
  });
  const origin = `http://127.0.0.1:${port}`;
  await waitFor(`${origin}/api/v1/health`, 60_000);
  const post = async (path: string, body: unknown, sub?: string) => {
    const r = await fetch(`${origin}${path}`, { method: "POST", headers: { "content-type": "application/json", ...(sub ? { "x-tenant": sub } : {}) }, body: JSON.stringify(body) });
    if (!r.ok) throw new Error(`${path}: ${r.status} ${await r.text()}`);
    return r.json() as Promise<Record<string, any>>;
  };
  for (const sub of subs) await post("/api/v1/auth/signup", { email: `admin@${sub}.example`, password: PASSWORD, tenant_name: sub, subdomain: sub }, sub);
  const ids = await pg.all<{ id: string; subdomain: string }>`SELECT id, subdomain FROM tenants`;
  const tenantIds = subs.map((s) => ids.find((t) => t.subdomain === s)!.id);
  say(`seeding PostgreSQL: 1 tenant of ${BIG} deals and ${TENANTS - 1} of ${SMALL}...`);
  const started = performance.now();
  const hash = await Bun.password.hash(PASSWORD);
  await bulkSeed(pg, subs.map((s, i) => ({ tenantId: tenantIds[i]!, subdomain: s, deals: i === 0 ? BIG : SMALL, passwordHash: hash })), Date.now());
  say(`  seeded in ${((performance.now() - started) / 1000).toFixed(1)} s`);

  const big = tenantIds[0]!;
  const login = async (email: string) => (await post("/api/v1/auth/login", { email, password: PASSWORD }, "bigco")).access_token as string;
  const users = await pg.all<{ id: string; email: string }>`SELECT id, email FROM users WHERE tenant_id = ${big} AND role = 'member' ORDER BY email`;
  const members = [];
  for (const u of users.slice(0, 10)) members.push({ id: u.id, token: await login(u.email) });
  const stages = (await pg.all<{ key: string }>`SELECT key FROM pipeline_stages WHERE tenant_id = ${big} ORDER BY position`).map((s) => s.key);
  const accounts = await pg.all<{ name: string }>`SELECT name FROM accounts WHERE tenant_id = ${big} ORDER BY id`;
  const titles = await pg.all<{ title: string }>`SELECT title FROM deals WHERE tenant_id = ${big} ORDER BY seq LIMIT 50000`;
  const texts = [...titles.map((r) => r.title), ...accounts.map((a) => a.name)];
  const three = frequentGrams(texts, 3, 8);
  const shapes = buildShapes({
    tenantId: big,
    adminToken: await login("admin@bigco.example"),
    members,
    userIds: users.map((u) => u.id),
    stages,
    rareWords: accounts.slice(0, 200).map((a) => a.name.split(" ")[0]!.toLowerCase()),
    typed: {
      three,
      two: [...new Set([...three.map((g) => [...g].slice(0, 2).join("")), ...frequentGrams(texts, 2, 6)])],
      one: [...new Set([...three, ...frequentGrams(texts, 1, 6)].map((g) => [...g][0]!))],
    },
  });
  const get = (path: string, token: string) => fetch(`${origin}${path}`, { headers: { authorization: `Bearer ${token}` } });
  const toPg = (sql: string) => {
    let n = 0;
    return sql.replace(/\?/g, () => `$${++n}`).replace(/\binstr\(/g, "strpos(");
  };
  say(`${"shape".padEnd(38)}${"p50 ms".padStart(9)}${"p99 ms".padStart(9)}  totals  target`);
  for (const s of shapes) {
    let correct = true;
    for (const c of s.checks) {
      const answered = ((await (await get(c.path, c.token)).json()) as { total: number }).total;
      if (answered !== Number((await pg.unsafe<{ n: number }>(toPg(c.sql), c.args))[0]!.n)) correct = false;
    }
    const times: number[] = [];
    const until = performance.now() + LATENCY_S * 1000;
    for (let i = 0; performance.now() < until || times.length < 100; i++) {
      const r = s.requests[i % s.requests.length]!;
      const t0 = performance.now();
      const res = await get(r.path, r.token);
      await res.arrayBuffer();
      times.push(performance.now() - t0);
      if (res.status !== 200) throw new Error(`${r.path}: ${res.status}`);
    }
    times.sort((a, b) => a - b);
    const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!;
    const target = s.search ? 50 : 5;
    say(`${s.name.padEnd(38)}${at(0.5).toFixed(2).padStart(9)}${at(0.99).toFixed(2).padStart(9)}  ${correct ? "ok    " : "WRONG "}  ${at(0.99) <= target ? "met" : "MISSED"} (≤ ${target} ms)`);
  }
} finally {
  server?.kill("SIGTERM");
  await server?.exited;
  await pg?.close();
  cluster?.stop();
}
