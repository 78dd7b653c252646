// bun bench/probes/fold-batch.ts DB: what the search counters' fold costs a pending row in the server's 10 ms
// steps against one transaction of 1,000 or 4,000 rows (CPU, and WAL bytes: each step commits every
// counter page it touched). Deal creates through the store make the pending rows; organization
// webco (a copy of a seeded file: it writes).
import { statSync } from "node:fs";
import { openDatabase } from "../../src/db/database";
import { newId } from "../../src/kernel/ids";
import { createSqliteDealsStore } from "../../src/stores/sqlite/deals";
import { createSqliteEventsStore } from "../../src/stores/sqlite/events";
import { foldSearchCounters } from "../../src/db/search-fold";
const file = process.argv[2]!;
const db = openDatabase(file);
db.run("PRAGMA synchronous = NORMAL");
db.run("PRAGMA wal_autocheckpoint = 0");
const store = createSqliteDealsStore(db, createSqliteEventsStore(db).appendInTx);
const tenant = (db.query("SELECT id FROM tenants WHERE subdomain = ?").get(process.env.BENCH_WRITES_TENANT ?? "webco") as { id: string }).id;
const range = db.query("SELECT min(seq) AS lo, max(seq) AS hi FROM deals WHERE tenant_id = ?").get(tenant) as any;
const pickOne = db.prepare<any, [number]>("SELECT * FROM deals WHERE seq >= ?1 ORDER BY seq LIMIT 1");
const pick = () => pickOne.get(range.lo + Math.floor(Math.random() * (range.hi - range.lo)))!;
const f = (d: any) => ({ title: `renewal ${Math.random().toString(36).slice(2, 8)}`, account_id: d.account_id, contact_id: d.contact_id, assigned_to: d.assigned_to, stage: d.stage, value_cents: d.value_cents, currency: d.currency, close_date: d.close_date, probability: d.probability, notes: d.notes, custom_data: d.custom_data });
const wal = () => { try { return statSync(`${file}-wal`).size; } catch { return 0; } };
while (foldSearchCounters(db) > 0);
for (const [label, budget, n] of [["10 ms steps", 10, 1000], ["one tx of 1000", 1e9, 1000], ["one tx of 4000", 1e9, 4000], ["10 ms steps", 10, 1000]] as const) {
  for (let i = 0; i < n; i++) await store.insert(tenant, newId(), f(pick()), Date.now());
  db.run("PRAGMA wal_checkpoint(TRUNCATE)");
  const c = process.cpuUsage(); const t = performance.now(); let steps = 0;
  while (foldSearchCounters(db, budget) > 0) steps++;
  const d = process.cpuUsage(c);
  console.log(`${label}: ${n} rows, ${steps} steps, ${((performance.now() - t)).toFixed(0)} ms wall, CPU ${((d.user + d.system) / 1000 / n).toFixed(2)} ms a row (sys ${(d.system / 1000 / n).toFixed(2)}), WAL ${(wal() / n / 1024).toFixed(0)} KB a row`);
}
db.close();
