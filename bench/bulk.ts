// bun run bench bulk DB [N]: a bulk change of deals (issue 32) on a seeded SQLite file, in-process,
// through the service and stores the API uses: the deals of the stage whose count is nearest N
// (default 100,000) chosen by the list's filter and moved to another stage, then undone. Prints,
// for each, the deals, the total time, the longest write transaction (the writer's hold: target
// ≤ 50 ms), the write transactions, and the event loop's longest stall. BENCH_BULK_SET=assignee gives
// them to one member instead of moving them. Target: 100k deals at 1M
// in ≤ 20 s. Run it on a copy: it writes. BENCH_BULK_TENANT names the organization (default bigco).
import { openDatabase } from "../src/db/database";
import { migrate } from "../src/db/migrate";
import { resetStallFigures, stallFigures, startLoopMonitor } from "../src/db/stall-monitor";
import { createBulkService } from "../src/crm/bulk-service";
import type { Principal } from "../src/auth/service";
import { createSqliteEventsStore } from "../src/stores/sqlite/events";
import { createSqliteCrmStore } from "../src/stores/sqlite/crm";
import { createSqliteJobsStore } from "../src/stores/sqlite/jobs";
import { createSqliteBulkDealsStore } from "../src/stores/sqlite/bulk-deals";
import { createSqliteSecurityStore } from "../src/stores/sqlite/security";
import { startCheckpointer } from "../src/db/checkpointer";
import { startSearchFold } from "../src/db/search-fold";

const args = process.argv.slice(2).filter((a) => a !== "bulk");
const file = args[0];
if (!file) throw new Error("usage: bun run bench bulk DB [N] (DB: a copy of a seeded file, e.g. suite seed --db DB --tenant bigco --deals 1000000)");
const N = Number(args[1] ?? 100_000);
const db = openDatabase(file);
migrate(db, undefined, file);
// As the server runs it: NORMAL on the thread, the sync off it (group commit).
db.run("PRAGMA synchronous = NORMAL");
// And the server's checkpointer thread beside it (src/cli/serve.ts): without it every 1,000 pages
// of WAL a commit ran the checkpoint itself, inside the batch's hold.
const checkpointer = startCheckpointer(file);
const events = createSqliteEventsStore(db);
const security = createSqliteSecurityStore(db);
const crm = createSqliteCrmStore(db, events.appendInTx);
const jobs = createSqliteJobsStore(db, { security, appendEventsInTx: events.appendInTx });
const bulkDeals = createSqliteBulkDealsStore(db, { appendEventsInTx: events.appendInTx });
const running: Array<Promise<unknown>> = [];
// Each batch's and revert step's transaction, timed as the writer holds it (wall time; this thread runs it).
const holds: number[] = [];
for (const name of ["apply", "revert"] as const) {
  const inner = bulkDeals[name] as (...a: unknown[]) => Promise<unknown>;
  (bulkDeals as Record<string, unknown>)[name] = async (...a: unknown[]) => {
    const t = performance.now();
    try {
      return await inner.apply(bulkDeals, a);
    } finally {
      holds.push(performance.now() - t);
    }
  };
}
const service = createBulkService({
  now: Date.now,
  repo: crm,
  bulk: bulkDeals,
  jobs,
  tracker: { track: (_id, p) => void running.push(p), recoverKind: () => {} },
  log: (l) => process.stderr.write(`${JSON.stringify(l)}\n`),
});

const tenant = db.query("SELECT id FROM tenants WHERE subdomain = ?").get(process.env.BENCH_BULK_TENANT ?? "bigco") as { id: string } | null;
if (!tenant) throw new Error("no such organization in the file");
const admin = db.query("SELECT id, email FROM users WHERE tenant_id = ? AND role = 'admin' LIMIT 1").get(tenant.id) as { id: string; email: string };
const auth: Principal = { userId: admin.id, tenantId: tenant.id, sessionId: "bench", role: "admin", email: admin.email, subdomain: "bench", provenAt: Date.now() };
const total = (db.query("SELECT count(*) AS n FROM deals WHERE tenant_id = ?").get(tenant.id) as { n: number }).n;
const counts = db.query("SELECT stage, n FROM deal_counts WHERE tenant_id = ? AND assignee = '*' AND n > 0").all(tenant.id) as Array<{ stage: string; n: number }>;
const from = counts.reduce((best, c) => (Math.abs(c.n - N) < Math.abs(best.n - N) ? c : best));
const to = counts.find((c) => c.stage !== from.stage)!.stage;
const say = (s: string) => process.stdout.write(`${s}\n`);
say(`bulk change: ${total.toLocaleString()} deals in the organization; the ${from.n.toLocaleString()} in stage ${from.stage} move to ${to} (load ${(await Bun.file("/proc/loadavg").text()).split(" ")[0]})`);

const stopLoop = startLoopMonitor();
// And the server's background upkeep (the search counters' fold, which waits for the job, and the
// full-text index's merge steps, which do not): BENCH_BULK_UPKEEP=0 leaves it out.
const upkeep = process.env.BENCH_BULK_UPKEEP === "0" ? null : startSearchFold(db);
// A server's listening socket keeps its event loop blocking in its poll; here nothing would, and
// Bun's loop spins (a core busy) while it awaits a message from the checkpointer's unref'd thread.
const keepAlive = setInterval(() => {}, 1000);
async function phase(name: string, run: () => Promise<{ id: string }>) {
  resetStallFigures();
  running.length = 0;
  holds.length = 0;
  const cpu = process.cpuUsage();
  const started = performance.now();
  const job = await run();
  await Promise.all(running);
  const took = performance.now() - started;
  const spent = process.cpuUsage(cpu);
  const f = stallFigures();
  const sorted = [...holds].sort((a, b) => a - b);
  const at = (p: number) => (sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0).toFixed(1);
  const row = (await jobs.get(tenant!.id, job.id))!;
  say(
    `${name.padEnd(6)} ${row.status} ${Number(row.done).toLocaleString()} deals (${Number(row.updated).toLocaleString()} changed) in ${(took / 1000).toFixed(2)} s` +
      ` (CPU ${((spent.user + spent.system) / 1000 / 1000).toFixed(2)} s, ${((spent.user + spent.system) / Math.max(1, Number(row.done))).toFixed(0)} µs a deal)` +
      ` | ${holds.length} batches, hold ms p50 ${at(0.5)} p99 ${at(0.99)}; longest write hold ${f.maxWriteHoldMs} ms (${f.writeStalls} over 50 ms) in ${f.writeTransactions} transactions | longest loop stall ${f.maxLoopDelayMs} ms`,
  );
  return job;
}
// BENCH_BULK_SET=assignee: the deals are given to one member instead (most move from another member: the search text is not re-indexed).
const byAssignee = process.env.BENCH_BULK_SET === "assignee";
const someone = (db.query("SELECT id FROM users WHERE tenant_id = ? AND id <> ? ORDER BY id LIMIT 1").get(tenant.id, admin.id) as { id: string }).id;
const change = byAssignee ? { set: { assigned_to: someone } } : { set: { stage: to } };
if (byAssignee) say(`(assigned to one member instead: BENCH_BULK_SET=assignee)`);
const job = await phase("change", () => service.start(auth, { ids: null, filter: { search: null, stages: [from.stage], assigned_to: null, unassigned: false, mine: false }, change }, { ip: null, userAgent: null }));
await phase("undo", () => service.undo(auth, job.id, { ip: null, userAgent: null }));
stopLoop();
upkeep?.stop();
clearInterval(keepAlive);
await checkpointer.stop();
db.close();
