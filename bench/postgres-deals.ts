// bun bench/postgres-deals.ts: the deal list on PostgreSQL beside SQLite, at 1M deals, measured
// in-process (the query functions themselves, at concurrency 1): the shapes of bench/shapes.ts
// (the HTTP bench's), p50/p99 per shape, each shape's totals checked against a direct count.
// Starts a throwaway cluster (scripts/postgres-cluster.ts) unless BENCH_PG_URL names a server.
// Options (environment): BENCH_BIG (1000000), BENCH_SMALL (100000), BENCH_TENANTS (10),
// BENCH_LATENCY_S (1, per shape), BENCH_SQLITE=0 skips the SQLite column, BENCH_PG_URL, and
// BENCH_PG_REUSE=1 (with BENCH_PG_URL: measure the database `suite_bench` already seeded there),
// BENCH_PG_DIR (keep the cluster in that folder: seeded once, reused by the next run), and
// BENCH_SQLITE_DB (keep SQLite's database in that file: seeded when missing, else reused).
// Then the import scaling on PostgreSQL (bench/import-jobs.ts; BENCH_PG_IMPORT_SIZES, 0 skips).
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Cluster, startCluster } from "../scripts/postgres-cluster";
import { createSqliteDealsQuery as createDealsQuery } from "../src/stores/sqlite/deals-query";
import type { DealListQuery } from "../src/crm/model";
import type { Pg } from "../src/stores/postgres/database";
import { createPostgresDealsQuery } from "../src/stores/postgres/deals-query";
import { migratePostgres } from "../src/stores/postgres/migrate";
import { BENCH_PG_SETTINGS, benchDatabase, ensureBenchTenants, listQueryOf, seededBefore } from "./postgres-support";
import { type Shape, buildShapes, frequentGrams } from "./shapes";
import { summarize } from "./stats";
import { benchContext, bigAndSmall, seedOrganizations, seedPostgres } from "./seed";

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const BIG = env("BENCH_BIG", 1_000_000);
const SMALL = env("BENCH_SMALL", 100_000);
const TENANTS = env("BENCH_TENANTS", 10);
const LATENCY_S = env("BENCH_LATENCY_S", 1);
const say = (s: string) => process.stdout.write(`${s}\n`);
/** BENCH_ONLY=a,b: only the shapes whose name holds one of these; BENCH_SLOWEST=N: print each shape's N slowest queries. */
const ONLY = (process.env.BENCH_ONLY ?? "").split(",").filter((x) => x !== "");
const SLOWEST = env("BENCH_SLOWEST", 0);
const orgs = bigAndSmall(BIG, SMALL, TENANTS);
const subs = orgs.map((o) => o.subdomain);

type List = (tenantId: string, q: DealListQuery) => Promise<{ total: number }>;
type Count = (sql: string, args: Array<string | number>) => Promise<number>;
interface Measured {
  p50: number;
  p99: number;
  correct: boolean;
}

/** Latency of each shape at concurrency 1, and its truth checks. */
async function measure(shapes: Shape[], tenantId: string, list: List, count: Count): Promise<Map<string, Measured>> {
  const out = new Map<string, Measured>();
  for (const s of shapes) {
    if (ONLY.length > 0 && !ONLY.some((o) => s.name.includes(o))) continue;
    const queries = s.requests.map((r) => listQueryOf(r.path, r.token));
    for (let i = 0; i < Math.min(20, queries.length); i++) await list(tenantId, queries[i]!);
    const times: number[] = [];
    const until = performance.now() + LATENCY_S * 1000;
    let i = 0;
    const slowest: Array<[number, DealListQuery]> = [];
    while (performance.now() < until || times.length < 100) {
      const started = performance.now();
      const q = queries[i++ % queries.length]!;
      await list(tenantId, q);
      const took = performance.now() - started;
      times.push(took);
      if (SLOWEST > 0) slowest.push([took, q]);
    }
    if (SLOWEST > 0) {
      slowest.sort((a, b) => b[0] - a[0]);
      const seen = new Set<string>();
      for (const [took, q] of slowest) {
        const k = JSON.stringify(q);
        if (seen.has(k)) continue;
        seen.add(k);
        say(`  ${s.name}: ${took.toFixed(1)} ms ${k}`);
        if (seen.size >= SLOWEST) break;
      }
    }
    let correct = true;
    for (const c of s.checks) {
      const answered = (await list(tenantId, listQueryOf(c.path, c.token))).total;
      if (answered !== (await count(c.sql, c.args))) correct = false;
    }
    const { p50, p99 } = summarize(times);
    out.set(s.name, { p50, p99, correct });
  }
  return out;
}

/** The inputs bench/shapes.ts builds its requests from; a member's "token" is their user id here. */
async function shapesFrom(read: <T>(sql: string, args: unknown[]) => Promise<T[]>, tenantId: string): Promise<Shape[]> {
  const users = await read<{ id: string }>("SELECT id FROM users WHERE tenant_id = $1 AND role = 'member' ORDER BY email", [tenantId]);
  const stages = (await read<{ key: string }>("SELECT key FROM pipeline_stages WHERE tenant_id = $1 ORDER BY position", [tenantId])).map((s) => s.key);
  const accounts = await read<{ name: string }>("SELECT name FROM accounts WHERE tenant_id = $1 ORDER BY id", [tenantId]);
  const titles = await read<{ title: string }>("SELECT title FROM deals WHERE tenant_id = $1 ORDER BY seq LIMIT 50000", [tenantId]);
  const texts = [...titles.map((r) => r.title), ...accounts.map((a) => a.name)];
  const three = frequentGrams(texts, 3, 8);
  const typed = {
    three,
    two: [...new Set([...three.map((g) => [...g].slice(0, 2).join("")), ...frequentGrams(texts, 2, 6)])],
    one: [...new Set([...three, ...frequentGrams(texts, 1, 6)].map((g) => [...g][0]!))],
  };
  return buildShapes({
    tenantId,
    adminToken: "admin",
    members: users.slice(0, 10).map((u) => ({ id: u.id, token: u.id })),
    userIds: users.map((u) => u.id),
    stages,
    rareWords: accounts.slice(0, 200).map((a) => a.name.split(" ")[0]!.toLowerCase()),
    typed,
  });
}

// ---- PostgreSQL ----
let cluster: Cluster | null = null;
let pg: Pg | null = null;
let sqliteDir: string | null = null;
try {
  let base = process.env.BENCH_PG_URL;
  if (!base) {
    say(`starting a ${process.env.BENCH_PG_DIR ? `kept PostgreSQL cluster in ${process.env.BENCH_PG_DIR}` : "throwaway PostgreSQL cluster"}...`);
    say(`  server settings: ${BENCH_PG_SETTINGS.join(" ")}`);
    cluster = await startCluster({ dir: process.env.BENCH_PG_DIR, settings: BENCH_PG_SETTINGS });
    base = cluster.url;
  }
  const reuse = (process.env.BENCH_PG_REUSE === "1" && process.env.BENCH_PG_URL) || (await seededBefore(base));
  const db = await benchDatabase(base, Boolean(reuse));
  const url = db.url;
  pg = db.pg;
  // Migrated (not just given the schema): `suite serve` then accepts it (bench/postgres-http.ts).
  if (!reuse) await migratePostgres(pg);
  const tenantIds = await ensureBenchTenants(pg, subs, Date.now(), !reuse);
  let pgSeedSeconds = NaN;
  if (!reuse) {
    say(`seeding PostgreSQL: 1 tenant of ${BIG} deals and ${TENANTS - 1} of ${SMALL}...`);
    pgSeedSeconds = await seedPostgres(pg, orgs, tenantIds, "x");
    say(`  seeded in ${pgSeedSeconds.toFixed(1)} s`);
  }
  const big = tenantIds[0]!;
  const pgShapes = await shapesFrom((sql, args) => pg!.unsafe(sql, args), big);
  const pgQuery = createPostgresDealsQuery(pg);
  const toPg = (sql: string) => {
    let n = 0;
    return sql.replace(/\?/g, () => `$${++n}`).replace(/\binstr\(/g, "strpos(");
  };
  say("measuring PostgreSQL...");
  const pgResults = await measure(pgShapes, big, (t, q) => pgQuery.list(t, q), async (sql, args) => Number((await pg!.unsafe<{ n: number }>(toPg(sql), args))[0]!.n));

  // ---- SQLite, the same shapes on its own seed ----
  let sqResults: Map<string, Measured> | null = null;
  let sqSeedSeconds = NaN;
  if (process.env.BENCH_SQLITE !== "0") {
    const kept = process.env.BENCH_SQLITE_DB;
    const keptBefore = kept !== undefined && existsSync(kept);
    if (!kept) sqliteDir = mkdtempSync(join(tmpdir(), "suite-bench-pg-"));
    const ctx = benchContext(kept ?? join(sqliteDir!, "bench.db"));
    const ids: string[] = [];
    if (keptBefore) {
      const rows = ctx.db.query("SELECT id, subdomain FROM tenants").all() as Array<{ id: string; subdomain: string }>;
      for (const sub of subs) ids.push(rows.find((r) => r.subdomain === sub)!.id);
    } else {
      say(`seeding SQLite (the same tenants)...`);
      const seeded = await seedOrganizations(ctx, orgs);
      ids.push(...seeded.tenantIds);
      sqSeedSeconds = seeded.seconds;
    }
    const read = async <T>(sql: string, args: unknown[]) => ctx.db.query(sql.replace(/\$(\d+)/g, "?$1")).all(...(args as string[])) as T[];
    const sqShapes = await shapesFrom(read, ids[0]!);
    const sqQuery = createDealsQuery(ctx.db);
    say("measuring SQLite...");
    sqResults = await measure(sqShapes, ids[0]!, (t, q) => sqQuery.list(t, q), async (sql, args) => (ctx.db.query(sql).get(...args) as { n: number }).n);
    ctx.close();
  }

  // ---- report ----
  const pad = (v: string, n: number) => v.padStart(n);
  const f = (m: Measured | undefined, k: "p50" | "p99") => (m ? m[k].toFixed(2) : "-");
  say("");
  say(`deal list in-process at c=1, ${BIG.toLocaleString("en-US")} deals (+${TENANTS - 1} × ${SMALL.toLocaleString("en-US")})`);
  say(`${"shape".padEnd(38)}${pad("PG p50", 9)}${pad("PG p99", 9)}${pad("SQLite p50", 12)}${pad("SQLite p99", 12)}  totals  PG target`);
  let worst = { search: { name: "", p99: 0 }, plain: { name: "", p99: 0 } };
  for (const s of pgShapes) {
    const p = pgResults.get(s.name);
    if (!p) continue;
    const q = sqResults?.get(s.name);
    const target = s.search ? 50 : 5;
    const kind = s.search ? "search" : "plain";
    if (p.p99 > worst[kind].p99) worst = { ...worst, [kind]: { name: s.name, p99: p.p99 } };
    say(
      `${s.name.padEnd(38)}${pad(f(p, "p50"), 9)}${pad(f(p, "p99"), 9)}${pad(f(q, "p50"), 12)}${pad(f(q, "p99"), 12)}  ${p.correct && (q?.correct ?? true) ? "ok    " : "WRONG "}  ${p.p99 <= target ? "met" : "MISSED"} (≤ ${target} ms)`,
    );
  }
  say("");
  say(`slowest PG without search: ${worst.plain.name}, p99 ${worst.plain.p99.toFixed(2)} ms (target 5 ms)`);
  say(`slowest PG search: ${worst.search.name}, p99 ${worst.search.p99.toFixed(2)} ms (target 50 ms)`);
  say(`seed: PostgreSQL ${pgSeedSeconds.toFixed(1)} s, SQLite ${sqSeedSeconds.toFixed(1)} s`);
  const load = await Bun.file("/proc/loadavg").text().catch(() => "?");
  say(`machine load (1/5/15 min): ${load.split(" ").slice(0, 3).join(" ")}`);
} finally {
  await pg?.close();
  cluster?.stop();
  if (sqliteDir) rmSync(sqliteDir, { recursive: true, force: true });
}

// Imports on PostgreSQL at growing sizes (issue 28: cost linear in rows): bench/import-jobs.ts on
// a cluster of its own, its lines printed here. BENCH_PG_IMPORT_SIZES (1000,10000,100000); 0 skips.
const importSizes = process.env.BENCH_PG_IMPORT_SIZES ?? "1000,10000,100000";
if (importSizes !== "0") {
  say("");
  say(`imports on PostgreSQL (${importSizes} rows; each added, then unchanged, then updated):`);
  const run = Bun.spawn([process.execPath, join(import.meta.dir, "import-jobs.ts")], {
    env: { ...process.env, BENCH_IMPORT_BACKEND: "postgres", BENCH_IMPORT_SIZES: importSizes },
    stdout: "inherit",
    stderr: "inherit",
  });
  if ((await run.exited) !== 0) process.exitCode = 1;
}
