// bun bench/probes/sweep-after-bulk.ts DB [SECONDS]: what folding a bulk change's pending search rows
// costs (schema version 34's sweep, or the row-by-row fold before it), on a copy of a seeded file
// (it writes): the deals of organization webco's stage `negotiation` moved to `lost` in one
// statement (a bulk change's pending rows, 2 a deal), then the server's fold steps (10 ms budget,
// a checkpoint between them as the server's checkpointer does) until nothing is pending or SECONDS
// (default 600) pass. Prints rows a second, CPU a row, the steps' longest hold, and a one-letter
// search's time while rows are pending and after.
import { openDatabase } from "../../src/db/database";
import { migrate } from "../../src/db/migrate";
import { foldSearchCounters, pendingSearchRows } from "../../src/db/search-fold";
import { createSqliteDealsQuery } from "../../src/stores/sqlite/deals-query";
import type { DealListQuery } from "../../src/crm/model";

const file = process.argv[2]!;
const limitS = Number(process.argv[3] ?? 600);
const db = openDatabase(file);
migrate(db, undefined, file);
db.run("PRAGMA synchronous = NORMAL");
const tenant = (db.query("SELECT id FROM tenants WHERE subdomain = ?").get(process.env.BENCH_BULK_TENANT ?? "webco") as { id: string }).id;
const query = createSqliteDealsQuery(db);
const q: DealListQuery = { page: 1, size: 50, search: "e", stages: null, assignee: null, sortBy: "created_at", sortDir: "desc" };
const searchMs = async () => {
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    await query.list(tenant, q);
    times.push(performance.now() - t);
  }
  return Math.min(...times).toFixed(1);
};
while (foldSearchCounters(db) > 0);
console.log(`before: a one-letter search ${await searchMs()} ms`);
const moved = db.run("UPDATE deals SET stage = 'lost', stage_changed_at = ?2 WHERE tenant_id = ?1 AND stage = 'negotiation'", [tenant, Date.now()]).changes;
db.run("PRAGMA wal_checkpoint(TRUNCATE)");
const pending = pendingSearchRows(db, tenant);
console.log(`${moved} deals moved: ${pending} rows pending; a one-letter search ${await searchMs()} ms`);
const c = process.cpuUsage();
const started = performance.now();
const holds: number[] = [];
let maxRss = process.memoryUsage.rss();
console.log(`RSS before ${(maxRss / 1e6).toFixed(0)} MB`);
const byPhase = new Map<string, number[]>();
const phase = () => {
  const w = db.query("SELECT * FROM deal_search_sweeps WHERE tenant_id = ?1").get(tenant) as Record<string, string | number> | null;
  return !w ? "fold or start" : w.grams_done && w.keys_done ? "delete" : w.gram === "" && !w.grams_done ? "tally or first write" : w.grams_done ? "write keys" : "write grams";
};
while (performance.now() - started < limitS * 1000) {
  const ph = phase();
  const t = performance.now();
  const n = foldSearchCounters(db, 10);
  const ms = performance.now() - t;
  holds.push(ms);
  byPhase.set(ph, [...(byPhase.get(ph) ?? []), ms]);
  if (ms > 40) console.log(`step ${holds.length} (${ph}) took ${ms.toFixed(1)} ms`);
  maxRss = Math.max(maxRss, process.memoryUsage.rss());
  if (n === 0) break;
  if (holds.length % 50 === 0) db.query("PRAGMA wal_checkpoint(PASSIVE)").get();
}
const wall = (performance.now() - started) / 1000;
const d = process.cpuUsage(c);
holds.sort((a, b) => a - b);
const left = pendingSearchRows(db, tenant);
console.log(
  `folded ${pending - left} of ${pending} rows in ${wall.toFixed(1)} s (${((pending - left) / wall).toFixed(0)} rows/s), CPU ${((d.user + d.system) / 1000 / Math.max(1, pending - left)).toFixed(3)} ms a row, ` +
    `${holds.length} steps, step p50 ${holds[Math.floor(holds.length / 2)]!.toFixed(1)} ms, p99 ${holds[Math.floor(holds.length * 0.99)]!.toFixed(1)} ms, longest ${holds.at(-1)!.toFixed(1)} ms`,
);
console.log(`RSS at most ${(maxRss / 1e6).toFixed(0)} MB`, JSON.stringify(Object.fromEntries(Object.entries(process.memoryUsage()).map(([k, v]) => [k, Math.round(v / 1e6)]))), "temp pages", JSON.stringify(db.query("PRAGMA temp.page_count").get()));
Bun.gc(true);
console.log("after gc", JSON.stringify(Object.fromEntries(Object.entries(process.memoryUsage()).map(([k, v]) => [k, Math.round(v / 1e6)]))));
console.log(`after: ${left} rows pending; a one-letter search ${await searchMs()} ms`);
for (const [ph, ms] of byPhase) {
  ms.sort((a, b) => a - b);
  console.log(`  ${ph}: ${ms.length} steps, ${(ms.reduce((a, b) => a + b, 0) / 1000).toFixed(1)} s, p50 ${ms[Math.floor(ms.length / 2)]!.toFixed(1)} ms, longest ${ms.at(-1)!.toFixed(1)} ms`);
}
