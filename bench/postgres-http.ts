// bun bench/postgres-http.ts: the deal list over HTTP, `dist/suite serve` (built first when stale)
// on PostgreSQL beside the same on SQLite, at 1M deals (+9 × 100k), concurrency 1: the shapes of
// bench/shapes.ts, p50/p99 each, every shape's totals checked against a direct count.
// Options (environment): BENCH_BIG (1000000), BENCH_SMALL (100000), BENCH_TENANTS (10),
// BENCH_LATENCY_S (2, per shape), BENCH_ONLY=a,b (shapes whose name holds one of these),
// BENCH_PG_URL (a server to use instead of a throwaway cluster), BENCH_PG_DIR (a kept cluster, as
// bench/postgres-deals.ts keeps it: its seeded `suite_bench` database is reused), and
// BENCH_SQLITE_DB (a SQLite file seeded by bench/postgres-deals.ts: the SQLite column; none: no
// SQLite column). Members sign in with the bench password, set on the reused databases first.
import { Database } from "bun:sqlite";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Cluster, startCluster } from "../scripts/postgres-cluster";
import type { Pg } from "../src/stores/postgres/database";
import { migratePostgres } from "../src/stores/postgres/migrate";
import { BENCH_PG_SETTINGS, benchDatabase, seededBefore } from "./postgres-support";
import { DEFAULT_MODULES } from "../src/organization/model";
import { createKeyFile, generateKeys, keyFileOf } from "../src/security/key-file";
import { freePort, freshBinary, waitFor } from "./process-support";
import { type Shape, buildShapes, frequentGrams } from "./shapes";
import { BENCH_PASSWORD, bigAndSmall, seedPostgres } from "./seed";
import { summarize } from "./stats";

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const BIG = env("BENCH_BIG", 1_000_000);
const SMALL = env("BENCH_SMALL", 100_000);
const TENANTS = env("BENCH_TENANTS", 10);
const LATENCY_S = env("BENCH_LATENCY_S", 2);
const ONLY = (process.env.BENCH_ONLY ?? "").split(",").filter((x) => x !== "");
const PASSWORD = BENCH_PASSWORD;
const say = (s: string) => process.stdout.write(`${s}\n`);
const orgs = bigAndSmall(BIG, SMALL, TENANTS);
const subs = orgs.map((o) => o.subdomain);

type Read = <T>(sql: string, args: unknown[]) => Promise<T[]>;
interface Measured {
  p50: number;
  p99: number;
  correct: boolean;
}

/** The built binary (dist/suite, rebuilt when older than the source), as a deployment runs it. */
const binary = freshBinary(join(import.meta.dir, ".."), say);

/** A `suite serve` process on `env`, with its origin. */
async function serve(extra: Record<string, string>): Promise<{ origin: string; proc: ReturnType<typeof Bun.spawn> }> {
  const port = await freePort();
  const proc = Bun.spawn([binary, "serve", "--port", String(port), "--host", "127.0.0.1"], {
    env: { ...process.env, ...extra, SUITE_ACCESS_TTL: "7200", SUITE_JWT_SECRET: "bench-secret-bench-secret-bench-secret-0123" },
    stdout: "ignore",
    stderr: "inherit",
  });
  const origin = `http://127.0.0.1:${port}`;
  await waitFor(`${origin}/api/v1/health`, 120_000);
  return { origin, proc };
}

const post = async (origin: string, path: string, body: unknown, sub?: string) => {
  const r = await fetch(`${origin}${path}`, { method: "POST", headers: { "content-type": "application/json", ...(sub ? { "x-tenant": sub } : {}) }, body: JSON.stringify(body) });
  if (!r.ok) throw new Error(`${path}: ${r.status} ${await r.text()}`);
  return r.json() as Promise<Record<string, any>>;
};

/** The shapes of bench/shapes.ts for the big organization, its members signed in over HTTP. */
async function shapesOver(origin: string, read: Read, tenantId: string, adminEmail: string | null): Promise<Shape[]> {
  const login = async (email: string) => (await post(origin, "/api/v1/auth/login", { email, password: PASSWORD }, "bigco")).access_token as string;
  const users = await read<{ id: string; email: string }>("SELECT id, email FROM users WHERE tenant_id = $1 AND role = 'member' ORDER BY email", [tenantId]);
  const members = [];
  for (const u of users.slice(0, 10)) members.push({ id: u.id, token: await login(u.email) });
  const stages = (await read<{ key: string }>("SELECT key FROM pipeline_stages WHERE tenant_id = $1 ORDER BY position", [tenantId])).map((s) => s.key);
  const accounts = await read<{ name: string }>("SELECT name FROM accounts WHERE tenant_id = $1 ORDER BY id", [tenantId]);
  const titles = await read<{ title: string }>("SELECT title FROM deals WHERE tenant_id = $1 ORDER BY seq LIMIT 50000", [tenantId]);
  const texts = [...titles.map((r) => r.title), ...accounts.map((a) => a.name)];
  const three = frequentGrams(texts, 3, 8);
  return buildShapes({
    tenantId,
    // The list shows every deal to every member: a member stands in when the seed made no admin.
    adminToken: adminEmail ? await login(adminEmail) : members[0]!.token,
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
}

/** p50/p99 of each shape over HTTP at concurrency 1, and its totals against `count`. */
async function measure(origin: string, shapes: Shape[], count: (sql: string, args: Array<string | number>) => Promise<number>): Promise<Map<string, Measured>> {
  const get = (path: string, token: string) => fetch(`${origin}${path}`, { headers: { authorization: `Bearer ${token}` } });
  const out = new Map<string, Measured>();
  for (const s of shapes) {
    if (ONLY.length > 0 && !ONLY.some((o) => s.name.includes(o))) continue;
    let correct = true;
    for (const c of s.checks) {
      const answered = ((await (await get(c.path, c.token)).json()) as { total: number }).total;
      if (answered !== (await count(c.sql, c.args))) correct = false;
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
    const { p50, p99 } = summarize(times);
    out.set(s.name, { p50, p99, correct });
  }
  return out;
}

let cluster: Cluster | null = null;
let pg: Pg | null = null;
const servers: Array<ReturnType<typeof Bun.spawn>> = [];
const cleanup: Array<() => void> = [];
try {
  let base = process.env.BENCH_PG_URL;
  if (!base) {
    say(`starting a ${process.env.BENCH_PG_DIR ? `kept PostgreSQL cluster in ${process.env.BENCH_PG_DIR}` : "throwaway PostgreSQL cluster"} (${BENCH_PG_SETTINGS.join(" ")})...`);
    cluster = await startCluster({ dir: process.env.BENCH_PG_DIR, settings: BENCH_PG_SETTINGS });
    base = cluster.url;
  }
  const reuse = await seededBefore(base);
  const db = await benchDatabase(base, Boolean(reuse));
  const url = db.url;
  pg = db.pg;
  const hash = await Bun.password.hash(PASSWORD);
  let adminEmail: string | null = "admin@bigco.example";
  await migratePostgres(pg);
  // On PostgreSQL the key file still sits beside SUITE_DB: a folder of the bench's own.
  const keys = mkdtempSync(join(tmpdir(), "suite-bench-keys-"));
  cleanup.push(() => rmSync(keys, { recursive: true, force: true }));
  // New keys for each run (a bench database: its earlier sessions need not survive).
  createKeyFile(keyFileOf(join(keys, "suite.db")), generateKeys());
  await pg.unsafe("DELETE FROM settings WHERE key = 'key_check'");
  const served = await serve({ SUITE_DATABASE_URL: url, SUITE_DB: join(keys, "suite.db") });
  servers.push(served.proc);
  const pgOrigin = served.origin;
  if (!reuse) {
    for (const sub of subs) await post(pgOrigin, "/api/v1/auth/signup", { email: `admin@${sub}.example`, password: PASSWORD, tenant_name: sub, subdomain: sub }, sub);
    const ids = await pg.all<{ id: string; subdomain: string }>`SELECT id, subdomain FROM tenants`;
    say(`seeding PostgreSQL: 1 tenant of ${BIG} deals and ${TENANTS - 1} of ${SMALL}...`);
    const seconds = await seedPostgres(pg, orgs, subs.map((sub) => ids.find((t) => t.subdomain === sub)!.id), hash);
    say(`  seeded in ${seconds.toFixed(1)} s`);
  } else {
    // bench/postgres-deals.ts's database: its members get the bench password; it has no admin.
    await pg.unsafe("UPDATE users SET password_hash = $1 WHERE tenant_id = (SELECT id FROM tenants WHERE subdomain = 'bigco')", [hash]);
    await pg.unsafe(`INSERT INTO tenant_modules (tenant_id, module) SELECT t.id, m FROM tenants t, unnest($1::text[]) m ON CONFLICT DO NOTHING`, [DEFAULT_MODULES]);
    if (!(await pg.all`SELECT 1 FROM users WHERE email = 'admin@bigco.example'`).length) adminEmail = null;
  }
  const big = (await pg.one<{ id: string }>`SELECT id FROM tenants WHERE subdomain = 'bigco'`)!.id;
  const toPg = (sql: string) => {
    let n = 0;
    return sql.replace(/\?/g, () => `$${++n}`).replace(/\binstr\(/g, "strpos(");
  };
  const pgShapes = await shapesOver(pgOrigin, (sql, args) => pg!.unsafe(sql, args as string[]), big, adminEmail);
  say("measuring PostgreSQL over HTTP...");
  const pgResults = await measure(pgOrigin, pgShapes, async (sql, args) => Number((await pg!.unsafe<{ n: number }>(toPg(sql), args))[0]!.n));
  servers.pop()?.kill("SIGTERM");

  // ---- SQLite: bench/postgres-deals.ts's kept file, the same organizations ----
  let sqResults: Map<string, Measured> | null = null;
  const sqliteFile = process.env.BENCH_SQLITE_DB;
  if (sqliteFile && existsSync(sqliteFile)) {
    const db = new Database(sqliteFile);
    const sqBig = (db.query("SELECT id FROM tenants WHERE subdomain = 'bigco'").get() as { id: string }).id;
    db.run("UPDATE users SET password_hash = ?1 WHERE tenant_id = ?2", [hash, sqBig]);
    const sq = await serve({ SUITE_DB: sqliteFile });
    servers.push(sq.proc);
    const read: Read = async <T>(sql: string, args: unknown[]) => db.query(sql.replace(/\$(\d+)/g, "?$1")).all(...(args as string[])) as T[];
    const sqShapes = await shapesOver(sq.origin, read, sqBig, "admin@bigco.example");
    say("measuring SQLite over HTTP...");
    sqResults = await measure(sq.origin, sqShapes, async (sql, args) => (db.query(sql).get(...args) as { n: number }).n);
    db.close();
  }

  const f = (m: Measured | undefined, k: "p50" | "p99") => (m ? m[k].toFixed(2) : "-");
  say("");
  say(`deal list over HTTP at c=1 (dist/suite serve), ${BIG.toLocaleString("en-US")} deals (+${TENANTS - 1} × ${SMALL.toLocaleString("en-US")})`);
  say(`${"shape".padEnd(38)}${"PG p50".padStart(9)}${"PG p99".padStart(9)}${"SQLite p50".padStart(12)}${"SQLite p99".padStart(12)}  totals  PG target`);
  for (const sh of pgShapes) {
    const p = pgResults.get(sh.name);
    if (!p) continue;
    const q = sqResults?.get(sh.name);
    const target = sh.search ? 50 : 5;
    say(
      `${sh.name.padEnd(38)}${f(p, "p50").padStart(9)}${f(p, "p99").padStart(9)}${f(q, "p50").padStart(12)}${f(q, "p99").padStart(12)}  ${p.correct && (q?.correct ?? true) ? "ok    " : "WRONG "}  ${p.p99 <= target ? "met" : "MISSED"} (≤ ${target} ms)`,
    );
  }
  const load = await Bun.file("/proc/loadavg").text().catch(() => "?");
  say(`machine load (1/5/15 min): ${load.split(" ").slice(0, 3).join(" ")}`);
} finally {
  for (const s of servers) {
    s.kill("SIGTERM");
    await s.exited;
  }
  await pg?.close();
  cluster?.stop();
  for (const c of cleanup) c();
}
