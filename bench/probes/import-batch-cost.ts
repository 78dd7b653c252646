// Where an import batch's time goes, in-process on SQLite: a CSV of deals imported through the app
// (the job's own batches, timed one by one: writer hold and CPU), then each per-row write alone
// (the deal, its timeline entry, its undo entry, its event) in rolled-back transactions.
//   bun bench/probes/import-batch-cost.ts DB [ROWS] > /dev/null   (DB: a seeded file with `bigco`; it is changed)
// PROBE_TENANT names another organization; PROBE_UPKEEP=1 runs the server's background upkeep beside
// the import (the search counters' fold and the full-text index's merge steps), as `suite serve` does.
// The server's log goes to stdout; the figures to stderr.
import { readFileSync } from "node:fs";
import { createApp } from "../../src/app";
import { loadConfig } from "../../src/config";
import { createContext } from "../../src/context";
import { openStores } from "../../src/stores";
import { walDatasync } from "../../src/db/group-commit";
import { startCheckpointer } from "../../src/db/checkpointer";
import { newId } from "../../src/kernel/ids";
import { quantile } from "../stats";
import { cpuOf } from "../process-support";
import { startSearchFold } from "../../src/db/search-fold";
import { resetStallFigures, setStallLog, stallFigures } from "../../src/db/stall-monitor";
import { describeLevels, ftsLevels } from "../../src/db/fts-structure";

const dbFile = process.argv[2];
if (!dbFile) throw new Error("usage: bun bench/probes/import-batch-cost.ts DB [ROWS]");
const ROWS = Number(process.argv[3] ?? 20_000);
const TENANT = process.env.PROBE_TENANT ?? "bigco";
const say = (s: string) => process.stderr.write(`${s}\n`);
const load = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");

const config = loadConfig({}, { SUITE_DB: dbFile, SUITE_ACCESS_TTL: "7200", SUITE_JWT_SECRET: "probe-secret-probe-secret-0123456789-0123" });
// As the server runs it: commits synced off the event loop, checkpoints on a thread of their own.
const stores = openStores(config, { walSync: walDatasync });
const checkpointer = startCheckpointer(dbFile);
const batches: Array<{ items: number; wall: number; cpu: number }> = [];
const apply = stores.jobs.applyBatch.bind(stores.jobs);
stores.jobs.applyBatch = async (...args: Parameters<typeof apply>) => {
  const started = performance.now();
  const cpu = process.cpuUsage();
  const out = await apply(...args);
  const spent = process.cpuUsage(cpu);
  batches.push({ items: args[4].length, wall: performance.now() - started, cpu: (spent.user + spent.system) / 1000 });
  return out;
};
// The time the job waits for the checkpointer between its batches (walCatchUp).
let catchUps = 0;
let catchUpMs = 0;
const catchUp = stores.jobs.catchUp?.bind(stores.jobs);
if (catchUp) {
  stores.jobs.catchUp = async () => {
    const t = performance.now();
    await catchUp();
    const ms = performance.now() - t;
    if (ms > 1) (catchUps++, (catchUpMs += ms));
  };
}
const ctx = createContext({ config, stores });
const app = createApp(ctx);
const db = (stores as unknown as { db: import("bun:sqlite").Database }).db;
const admin = db.query("SELECT u.email, u.tenant_id FROM users u JOIN tenants t ON t.id = u.tenant_id WHERE t.subdomain = ?1 AND u.role = 'admin' ORDER BY u.email LIMIT 1").get(TENANT) as { email: string; tenant_id: string };
const PASSWORD = process.env.SUITE_SEED_PASSWORD ?? "neighbours password 1";
const login = await app.handle(new Request("http://localhost/api/v1/auth/login", { method: "POST", headers: { "content-type": "application/json", "x-tenant": TENANT }, body: JSON.stringify({ email: admin.email, password: PASSWORD }) }));
if (login.status !== 200) throw new Error(`login ${login.status} ${await login.text()}`);
const headers = { authorization: `Bearer ${((await login.json()) as { access_token: string }).access_token}`, "x-tenant": TENANT };

// The event loop's longest delay during the import (a 5 ms timer's lateness).
let maxLate = 0;
let expected = performance.now() + 5;
const timer = setInterval(() => {
  const now = performance.now();
  maxLate = Math.max(maxLate, now - expected);
  expected = now + 5;
}, 5);

// PROBE_SQL: a statement run first (e.g. an FTS5 setting: "INSERT INTO deals_fts (deals_fts, rank) VALUES ('crisismerge', 64)").
if (process.env.PROBE_SQL) db.run(process.env.PROBE_SQL);
say(`importing ${ROWS} deals (load ${load()})`);
say(`full-text index before:\n${describeLevels(ftsLevels(db, "deals_fts"))}`);
const upkeep = process.env.PROBE_UPKEEP === "1" ? startSearchFold(db) : null;
resetStallFigures();
// Every write transaction over 50 ms, by the work that held it (the stall monitor's warnings).
const overLimit = new Map<string, number[]>();
setStallLog((line) => {
  const l = line as { kind?: string; ms?: number; work?: string | null };
  if (l.kind === "write_hold") overLimit.set(l.work ?? "?", [...(overLimit.get(l.work ?? "?") ?? []), l.ms ?? 0]);
});
const lines = ["title,value,currency,account_name"];
const tag = newId().slice(-6);
for (let i = 0; i < ROWS; i++) lines.push(`Probe ${tag} deal ${i},${(i % 9000) + 100}.00,EUR,Probe account ${i % 1000}`);
const started = performance.now();
const cpu0 = process.cpuUsage();
const threads0 = cpuOf(process.pid);
const answered = app.handle(new Request("http://localhost/api/v1/crm/deals/import?create_missing=true", { method: "POST", headers: { ...headers, "content-type": "text/csv" }, body: `${lines.join("\r\n")}\r\n` }));
const res = await answered;
say(`upload checked and answered in ${((performance.now() - started) / 1000).toFixed(1)} s`);
if (res.status !== 202) throw new Error(`import ${res.status} ${await res.text()}`);
await ctx.jobs.settled();
const cpuAll = process.cpuUsage(cpu0);
const threads1 = cpuOf(process.pid);
clearInterval(timer);
const wall = (performance.now() - started) / 1000;
const f = (n: number) => n.toFixed(1);
const walls = batches.map((b) => b.wall).sort((a, b) => a - b);
const cpus = batches.map((b) => b.cpu).sort((a, b) => a - b);
const items = batches.reduce((s, b) => s + b.items, 0);
say(`import: ${f(wall)} s wall, ${f((cpuAll.user + cpuAll.system) / 1e6)} s CPU; ${batches.length} batches of ${f(items / batches.length)} items on average`);
say(`CPU by thread (s): main ${f(threads1.main - threads0.main)}, workers ${f(threads1.workers - threads0.workers)}, other (the checkpointer, commits' syncs) ${f(threads1.other - threads0.other)}`);
say(`waits for the checkpointer: ${catchUps}, ${f(catchUpMs / 1000)} s`);
say(`batch writer hold ms: p50 ${f(quantile(walls, 0.5))} p99 ${f(quantile(walls, 0.99))} max ${f(walls.at(-1)!)}; CPU ms p50 ${f(quantile(cpus, 0.5))} max ${f(cpus.at(-1)!)}`);
const worst = [...batches].sort((a, b) => b.wall - a.wall).slice(0, 5);
say(`longest batches (items, hold ms, CPU ms): ${worst.map((b) => `${b.items}/${f(b.wall)}/${f(b.cpu)}`).join("  ")}`);
const stalls = stallFigures();
say(`longest write transaction of any kind: ${f(stalls.maxWriteHoldMs)} ms (${stalls.maxWriteHoldWork}); ${stalls.writeStalls} over 50 ms`);
for (const [work, ms] of overLimit) say(`  over 50 ms: ${work}: ${ms.length}, longest ${f(Math.max(...ms))} ms`);
upkeep?.stop();
say(`full-text index after:\n${describeLevels(ftsLevels(db, "deals_fts"))}`);
say(`per item in batches: ${((batches.reduce((s, b) => s + b.cpu, 0) * 1000) / items).toFixed(0)} µs CPU; event loop's longest delay ${f(maxLate)} ms (load ${load()})`);

// Each per-row write alone, N rows in a transaction rolled back.
const N = 2_000;
const tenantId = admin.tenant_id;
const timeTx = (name: string, fn: (i: number) => void) => {
  const best: number[] = [];
  for (let round = 0; round < 3; round++) {
    db.run("BEGIN IMMEDIATE");
    const c = process.cpuUsage();
    try {
      for (let i = 0; i < N; i++) fn(i);
    } finally {
      const s = process.cpuUsage(c);
      best.push((s.user + s.system) / N);
      db.run("ROLLBACK");
    }
  }
  say(`  ${name.padEnd(28)} ${Math.min(...best).toFixed(1)} µs CPU a row (best of 3)`);
};
const someDeal = db.query("SELECT id FROM deals WHERE tenant_id = ?1 LIMIT 1").get(tenantId) as { id: string };
const addActivity = db.prepare(
  `INSERT INTO deal_activities (tenant_id, deal_id, n, id, type, actor_id, created_at, data)
   VALUES (?1, ?2, (SELECT coalesce(max(n), 0) + 1 FROM deal_activities WHERE tenant_id = ?1 AND deal_id = ?2), ?3, 'import', NULL, ?4, ?5)`,
);
const addUndo = db.prepare("INSERT INTO crm_job_undo (tenant_id, job_id, n, entity, record_id, before) VALUES (?1, ?2, ?3, 'deal', ?4, NULL)");
const eventsStore = (stores as unknown as { events: { appendInTx: (t: string, e: unknown[], now: number) => void } }).events;
say("per-row side writes (rolled back):");
const data = JSON.stringify({ id: "x", title: "Probe deal title", account_id: "a", contact_id: null, assigned_to: null, stage: "new", value_cents: 10000, currency: "EUR", close_date: null, probability: 10, notes: null, custom_data: null, job_id: "j" });
timeTx("timeline entry", (i) => addActivity.run(tenantId, `${someDeal.id}-${i}`, newId(), Date.now(), data));
timeTx("undo entry", (i) => addUndo.run(tenantId, "probe-job", i, newId()));
timeTx("event (one append each)", () => eventsStore.appendInTx(tenantId, [{ type: "deal.created", actor: { type: "system", id: null }, data: JSON.parse(data) }], Date.now()));
const many = Array.from({ length: 100 }, () => ({ type: "deal.created", actor: { type: "system", id: null }, data: JSON.parse(data) }));
timeTx("event (appends of 100)", (i) => i % 100 === 0 && eventsStore.appendInTx(tenantId, many, Date.now()));
await checkpointer.stop();
await ctx.close?.();
process.exit(0);
