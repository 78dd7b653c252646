// bun bench/probes/pg-bulk.ts [DEALS] [STAGE]: a bulk change on PostgreSQL (issue 32's 20 s), by
// HTTP against one `suite serve` from the source on a throwaway cluster seeded with DEALS (200,000)
// deals by `suite seed`: the deals of STAGE (new) move to another stage, then the change is undone.
// Prints each job's time, the server's and the cluster's CPU seconds, then the search counters' fold after it. PROBE_PG_DIR keeps the seeded
// cluster in that folder for the next run.
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startCluster } from "../../scripts/postgres-cluster";
import { BENCH_PG_SETTINGS } from "../postgres-support";
import { clusterCpu, cpuOf, freePort, waitFor } from "../process-support";

const DEALS = Number(process.argv[2] ?? 200_000);
const STAGE = process.argv[3] ?? "new";
const PASSWORD = "pg bulk probe password";
const say = (s: string) => process.stdout.write(`${s}\n`);
const keep = process.env.PROBE_PG_DIR;
const reuse = keep !== undefined && existsSync(join(keep, "data"));
// PROBE_PG_STATEMENTS=1: pg_stat_statements loaded, the costliest statements printed after each job.
const statements = process.env.PROBE_PG_STATEMENTS === "1";
const settings = [...BENCH_PG_SETTINGS, ...(statements ? ["shared_preload_libraries=pg_stat_statements", "pg_stat_statements.track=all"] : [])];
const cluster = await startCluster({ settings, ...(keep ? { dir: keep } : {}) });
const dir = mkdtempSync(join(tmpdir(), "suite-pg-bulk-"));
const env = { ...process.env, SUITE_DATABASE_URL: cluster.url, SUITE_DB: join(keep ?? dir, "suite.db"), SUITE_SEED_PASSWORD: PASSWORD, SUITE_ACCESS_TTL: "7200" };
const main = join(import.meta.dir, "..", "..", "src", "main.ts");

async function topStatements(): Promise<void> {
  const { SQL } = await import("bun");
  const sql = new SQL(cluster.url);
  try {
    await sql.unsafe("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
    const rows = (await sql.unsafe(`SELECT calls, round(total_exec_time)::int AS ms, rows, left(regexp_replace(query, '\\s+', ' ', 'g'), 150) AS q
      FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 15`)) as Array<{ calls: number; ms: number; rows: number; q: string }>;
    for (const r of rows) say(`  ${String(r.ms).padStart(7)} ms ${String(r.calls).padStart(7)} calls ${String(r.rows).padStart(8)} rows  ${r.q}`);
    await sql.unsafe("SELECT pg_stat_statements_reset()");
  } finally {
    await sql.close();
  }
}

try {
  if (!reuse) {
    const started = performance.now();
    const p = Bun.spawn([process.execPath, main, "seed", "--tenant", "bigco", "--deals", String(DEALS)], { env, stdout: "ignore", stderr: "inherit" });
    if ((await p.exited) !== 0) throw new Error("seed failed");
    say(`seeded ${DEALS.toLocaleString("en-US")} deals in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
  // After the seed: the extension's view in an empty database would make it "not a Workspace Suite database".
  if (statements) await topStatements();
  const port = await freePort();
  // PROBE_SERVER_LOG=FILE: the server's log lines (its stall warnings among them) kept there.
  const log = process.env.PROBE_SERVER_LOG;
  const server = Bun.spawn([process.execPath, main, "serve", "--port", String(port), "--host", "127.0.0.1"], { env, stdout: log ? Bun.file(log) : "ignore", stderr: "inherit" });
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitFor(`${base}/api/v1/health`, 120_000);
    const r = await fetch(`${base}/api/v1/auth/login`, { method: "POST", headers: { "content-type": "application/json", "x-tenant": "bigco" }, body: JSON.stringify({ email: "admin@bigco.example", password: PASSWORD }) });
    if (!r.ok) throw new Error(`sign-in: ${r.status} ${await r.text()}`);
    const headers = { authorization: `Bearer ${((await r.json()) as { access_token: string }).access_token}`, "x-tenant": "bigco", "content-type": "application/json" };
    // The search counters' fold after the job (src/stores/postgres/search-fold.ts): until no row is pending.
    const folded = async (name: string) => {
      const { SQL } = await import("bun");
      const sql = new SQL(cluster.url);
      const cpu0 = cpuOf(server.pid).total;
      const pg0 = clusterCpu(cluster.dir);
      const started = performance.now();
      try {
        const rows = Number(((await sql.unsafe("SELECT count(*) AS n FROM deal_search_pending")) as Array<{ n: string }>)[0]!.n);
        const left = async () => ((await sql.unsafe("SELECT 1 AS x FROM deal_search_pending LIMIT 1")) as unknown[]).length > 0;
        while (await left()) await Bun.sleep(100);
        const took = (performance.now() - started) / 1000;
        say(`  ${name}'s ${rows.toLocaleString("en-US")} pending search rows folded in ${took.toFixed(1)} s; server CPU ${(cpuOf(server.pid).total - cpu0).toFixed(1)} s, cluster CPU ${(clusterCpu(cluster.dir) - pg0).toFixed(1)} s`);
      } finally {
        await sql.close();
      }
    };
    const job = async (name: string, path: string, body: unknown) => {
      const cpu0 = cpuOf(server.pid).total;
      const pg0 = clusterCpu(cluster.dir);
      const started = performance.now();
      const res = await fetch(`${base}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
      const j = (await res.json()) as { id: string };
      if (res.status !== 202) throw new Error(`${name}: ${res.status} ${JSON.stringify(j)}`);
      for (;;) {
        await Bun.sleep(100);
        const s = (await (await fetch(`${base}/api/v1/crm/jobs/${j.id}`, { headers })).json()) as { status: string; done: number; updated: number };
        if (s.status !== "running") {
          const took = (performance.now() - started) / 1000;
          say(`${name}: ${s.status}, ${s.done} deals (${s.updated} changed) in ${took.toFixed(1)} s (${((took * 1e6) / Math.max(1, s.done)).toFixed(0)} µs a deal); server CPU ${(cpuOf(server.pid).total - cpu0).toFixed(1)} s, cluster CPU ${(clusterCpu(cluster.dir) - pg0).toFixed(1)} s`);
          await folded(name);
          if (statements) await topStatements();
          return j.id;
        }
      }
    };
    const id = await job("change", "/api/v1/crm/deals/bulk", { filter: { stage: [STAGE] }, set: { stage: STAGE === "won" ? "lost" : "won" } });
    await job("undo", `/api/v1/crm/jobs/${id}/undo`, {});
  } finally {
    server.kill("SIGTERM");
    await server.exited;
  }
} finally {
  await cluster.stop();
}
