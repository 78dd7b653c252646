// `bun run bench tenants`: what a lookup that names no organization costs (sign-in, magic link
// and password reset without a tenant) at 1,000, 10,000 and 100,000 organizations, on PostgreSQL
// (through the address directory, schema 54) and on SQLite (users_by_email), to show it flat.
// Organizations and members are inserted directly with SQL (100,000 in seconds, not through
// signup): ORGS_MEMBERS members each (`m<j>@org<i>.test`), and `shared@bench.test` in two.
// PostgreSQL: each statement's plan once, then its server execution time and the shared buffers
// it touched (EXPLAIN (ANALYZE, BUFFERS); buffers do not depend on the machine's load), and the
// store call's round trip as the app sees it; for comparison, schema 53's statement (one probe of
// users (tenant_id, email) per organization). SQLite: the store call's CPU time (process.cpuUsage
// over many calls: steadier than wall time on a shared machine) and its query plan.
// Options (environment): BENCH_TENANT_SIZES (1000,10000,100000), BENCH_ROUNDS (30),
// BENCH_TENANTS_DIR (a kept folder for the cluster and the SQLite files; default a temporary one,
// removed at the end).
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startCluster } from "../scripts/postgres-cluster";
import { openDatabase } from "../src/db/database";
import { CURRENT_PLAN, migrate } from "../src/db/migrate";
import { ADDRESS_TARGETS } from "../src/stores/postgres/account-tokens";
import { inEveryTenant, openPostgres, type Pg } from "../src/stores/postgres/database";
import { createPostgresStores } from "../src/stores/postgres";
import { migratePostgres } from "../src/stores/postgres/migrate";
import { emailHash, emailHashSql } from "../src/stores/postgres/user-directory";
import { USERS_BY_EMAIL_ANY_TENANT } from "../src/stores/postgres/users";
import { createSqliteStores } from "../src/stores/sqlite";
import { BENCH_PG_SETTINGS } from "./postgres-support";
import { median } from "./stats";

const SIZES = (process.env.BENCH_TENANT_SIZES ?? "1000,10000,100000").split(",").map(Number);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 30);
const MEMBERS = 3;
const kept = process.env.BENCH_TENANTS_DIR;
const dir = kept ?? mkdtempSync(join(tmpdir(), "suite-bench-tenants-"));
const say = (s: string) => process.stdout.write(`${s}\n`);
const NOW = 1_700_000_000_000;
const tenantId = (i: string) => `'ten' || lpad(${i}::text, 6, '0')`;

// The lookups, by the address's account count: none, one, two (the shared address).
const ADDRESSES: Array<[string, string]> = [
  ["no account", "nobody@bench.test"],
  ["1 account", "m1@org7.test"],
  ["2 accounts", "shared@bench.test"],
];

/** N organizations of MEMBERS members, filed in the directory as the stores file them. */
async function seedPostgres(pg: Pg, n: number): Promise<void> {
  await pg.unsafe(`INSERT INTO tenants (id, name, subdomain, created_at)
    SELECT ${tenantId("i")}, 'Org ' || i, 'org' || i, ${NOW} - i FROM generate_series(1, ${n}) i`);
  await pg.unsafe(`INSERT INTO users (tenant_id, id, email, role, password_hash, created_at, updated_at, email_verified_at)
    SELECT ${tenantId("i")}, 'u' || i || '-' || j, 'm' || j || '@org' || i || '.test', 'member', 'h', ${NOW}, ${NOW}, ${NOW}
    FROM generate_series(1, ${n}) i, generate_series(1, ${MEMBERS}) j`);
  await pg.unsafe(`INSERT INTO users (tenant_id, id, email, role, password_hash, created_at, updated_at, email_verified_at)
    SELECT ${tenantId("i")}, 'shared' || i, 'shared@bench.test', 'member', 'h', ${NOW} + i, ${NOW}, ${NOW} FROM generate_series(1, 2) i`);
  await pg.unsafe(`INSERT INTO user_directory (email_hash, tenant_id, user_id) SELECT ${emailHashSql("email")}, tenant_id, id FROM users`);
  await pg.unsafe("ANALYZE");
}

async function postgresDatabase(url: string, n: number): Promise<Pg> {
  const name = `suite_tenants_${n}`;
  const admin = openPostgres(url, { max: 1 });
  if (!(await admin.one<{ n: number }>`SELECT count(*)::int AS n FROM pg_database WHERE datname = ${name}`)?.n) await admin.unsafe(`CREATE DATABASE ${name}`);
  await admin.close();
  const pg = openPostgres(url.replace(/\/[^/?]*(\?|$)/, `/${name}$1`), { max: 2 });
  await migratePostgres(pg);
  if (Number((await pg.one<{ n: number }>`SELECT count(*)::int AS n FROM tenants`)!.n) === 0) {
    const t0 = performance.now();
    await seedPostgres(pg, n);
    say(`seeded ${n.toLocaleString("en-US")} organizations (${(n * MEMBERS + 2).toLocaleString("en-US")} users) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }
  return pg;
}

/** Server execution time (median of ROUNDS) and shared buffers of one run of `sql`. */
async function explain(pg: Pg, sql: string, params: unknown[], showPlan: boolean) {
  const plan = (await pg.unsafe<{ "QUERY PLAN": string }>(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, params)).map((r) => r["QUERY PLAN"]);
  if (showPlan) say(plan.map((l) => `    ${l}`).join("\n"));
  const buffers = /Buffers: shared hit=(\d+)(?: read=(\d+))?/.exec(plan.find((l) => l.includes("Buffers:")) ?? "");
  const exec: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const p = (await pg.unsafe<{ "QUERY PLAN": string }>(`EXPLAIN (ANALYZE) ${sql}`, params)).map((x) => x["QUERY PLAN"]);
    exec.push(Number(/Execution Time: ([\d.]+)/.exec(p.at(-1)!)![1]));
  }
  return { ms: median(exec), buffers: buffers ? Number(buffers[1]) + Number(buffers[2] ?? 0) : NaN };
}

async function roundTrip(call: () => Promise<unknown>): Promise<number> {
  await call();
  const times: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = performance.now();
    await call();
    times.push(performance.now() - t0);
  }
  return median(times);
}

// Schema 53's sign-in lookup (one probe per organization), kept here only to compare.
const PER_ORGANIZATION = `WITH found AS MATERIALIZED (${inEveryTenant("users", "email = $1")})
  SELECT * FROM found WHERE email_verified_at IS NOT NULL OR NOT EXISTS (SELECT 1 FROM found v WHERE v.email_verified_at IS NOT NULL)
  ORDER BY created_at, id LIMIT $2`;

const rows: string[] = [];
// A kept cluster sits in BENCH_TENANTS_DIR/pg (reused with its databases); else a temporary one of
// its own (run as root, PostgreSQL runs as nobody, who cannot enter a private temporary folder).
if (kept) chmodSync(kept, 0o755);
const cluster = await startCluster(kept ? { dir: join(kept, "pg"), settings: BENCH_PG_SETTINGS } : { settings: BENCH_PG_SETTINGS });
try {
  for (const n of SIZES) {
    const pg = await postgresDatabase(cluster.url, n);
    const s = createPostgresStores(pg);
    say(`\n== PostgreSQL, ${n.toLocaleString("en-US")} organizations`);
    for (const [label, email] of ADDRESSES) {
      const first = label === "2 accounts";
      if (first) say("  sign-in without a tenant (users.byEmailAnyTenant), plan:");
      const signIn = await explain(pg, USERS_BY_EMAIL_ANY_TENANT, [emailHash(email), email, 3], first);
      if (first) say("  magic link / reset without a tenant (addressTargets), plan:");
      const targets = await explain(pg, ADDRESS_TARGETS, [emailHash(email), email, 3], first);
      const calls = {
        signIn: await roundTrip(() => s.users.byEmailAnyTenant(email, 3)),
        link: await roundTrip(() => s.magicLinks.targetsAnyTenant(email)),
        reset: await roundTrip(() => s.accountTokens.targetsAnyTenant(email)),
      };
      const before = n <= 10_000 ? await explain(pg, PER_ORGANIZATION, [email, 3], false) : null;
      const line = `postgres ${String(n).padStart(6)} orgs, ${label.padEnd(10)}: sign-in ${signIn.ms.toFixed(3)} ms server (${signIn.buffers} buffers), targets ${targets.ms.toFixed(3)} ms (${targets.buffers} buffers); round trip sign-in ${calls.signIn.toFixed(3)} / link ${calls.link.toFixed(3)} / reset ${calls.reset.toFixed(3)} ms${before ? `; schema 53's per-organization probe: ${before.ms.toFixed(2)} ms (${before.buffers} buffers)` : ""}`;
      say(line);
      rows.push(line);
    }
    await pg.close();
  }
} finally {
  cluster.stop();
}

for (const n of SIZES) {
  const file = join(dir, `tenants-${n}.db`);
  const db = openDatabase(file);
  migrate(db, CURRENT_PLAN, file);
  if ((db.query("SELECT count(*) AS n FROM tenants").get() as { n: number }).n === 0) {
    const t0 = performance.now();
    db.transaction(() => {
      db.run(`INSERT INTO tenants (id, name, subdomain, created_at)
        WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ${n})
        SELECT 'ten' || substr('000000' || i, -6), 'Org ' || i, 'org' || i, ${NOW} - i FROM s`);
      db.run(`INSERT INTO users (id, tenant_id, email, role, password_hash, created_at, updated_at, email_verified_at)
        WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ${n}), m(j) AS (SELECT 1 UNION ALL SELECT j + 1 FROM m WHERE j < ${MEMBERS})
        SELECT 'u' || i || '-' || j, 'ten' || substr('000000' || i, -6), 'm' || j || '@org' || i || '.test', 'member', 'h', ${NOW}, ${NOW}, ${NOW} FROM s, m`);
      db.run(`INSERT INTO users (id, tenant_id, email, role, password_hash, created_at, updated_at, email_verified_at)
        VALUES ('shared1', 'ten000001', 'shared@bench.test', 'member', 'h', ${NOW} + 1, ${NOW}, ${NOW}),
               ('shared2', 'ten000002', 'shared@bench.test', 'member', 'h', ${NOW} + 2, ${NOW}, ${NOW})`);
    })();
    say(`\nseeded SQLite ${n.toLocaleString("en-US")} organizations in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }
  const s = createSqliteStores(db);
  say(`== SQLite, ${n.toLocaleString("en-US")} organizations`);
  const plan = db.query(`EXPLAIN QUERY PLAN SELECT u.*, t.subdomain FROM users u JOIN tenants t ON t.id = u.tenant_id
    WHERE u.email = ?1 AND (u.email_verified_at IS NOT NULL OR NOT EXISTS (SELECT 1 FROM users v WHERE v.email = ?1 AND v.email_verified_at IS NOT NULL))
    AND t.disabled_at IS NULL ORDER BY u.created_at, u.id LIMIT 3`).all("shared@bench.test") as Array<{ detail: string }>;
  say(`  plan (the targets' statement): ${plan.map((p) => p.detail).join("; ")}`);
  for (const [label, email] of ADDRESSES) {
    const cpu = (call: () => Promise<unknown>) => async () => {
      const calls = 2_000;
      await call();
      const c0 = process.cpuUsage();
      for (let i = 0; i < calls; i++) await call();
      const c = process.cpuUsage(c0);
      return (c.user + c.system) / calls;
    };
    const signIn = await cpu(() => s.users.byEmailAnyTenant(email, 3))();
    const link = await cpu(() => s.magicLinks.targetsAnyTenant(email))();
    const reset = await cpu(() => s.accountTokens.targetsAnyTenant(email))();
    const line = `sqlite   ${String(n).padStart(6)} orgs, ${label.padEnd(10)}: CPU a call: sign-in ${signIn.toFixed(1)} µs, link ${link.toFixed(1)} µs, reset ${reset.toFixed(1)} µs`;
    say(line);
    rows.push(line);
  }
  db.close();
}

say("\n== summary (load average at the end: see `uptime`)");
for (const r of rows) say(r);
say(`load average: ${(await Bun.file("/proc/loadavg").text()).split(" ").slice(0, 3).join(" ")}`);
if (!kept) rmSync(dir, { recursive: true, force: true });
