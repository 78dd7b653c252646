// bun bench/probes/deal-write-pages.ts DB [N] [kind]: which tables and indexes a deal write's
// pages belong to. Runs N writes of one kind (create, title, value, stage, delete) on a copy of a
// seeded file through the deal store the API uses, reads the page numbers of the WAL frames each
// commit appended, and names each page's b-tree with the dbstat table. Run it on a copy: it writes.
import { openSync, readSync, statSync } from "node:fs";
import { openDatabase } from "../../src/db/database";
import { migrate } from "../../src/db/migrate";
import { newId } from "../../src/kernel/ids";
import { createSqliteDealsStore } from "../../src/stores/sqlite/deals";
import { createSqliteEventsStore } from "../../src/stores/sqlite/events";
import type { DealFields } from "../../src/crm/deals-repo";

const [file, nArg, kind = "create"] = process.argv.slice(2);
if (!file) throw new Error("usage: bun bench/probes/deal-write-pages.ts DB [N] [create|title|value|stage|delete]");
const N = Number(nArg ?? 50);
const db = openDatabase(file);
migrate(db, undefined, file);
db.run("PRAGMA synchronous = NORMAL");
db.run("PRAGMA wal_autocheckpoint = 0");
db.run("PRAGMA wal_checkpoint(TRUNCATE)");
// PREP: SQL statements (";"-separated) run first, e.g. dropping an index to see what it costs.
for (const sql of (process.env.PREP ?? "").split(";").filter((x) => x.trim())) db.run(sql);
const store = createSqliteDealsStore(db, createSqliteEventsStore(db).appendInTx);
const tenant = (db.query("SELECT id FROM tenants WHERE subdomain = ?").get(process.env.BENCH_WRITES_TENANT ?? "webco") as { id: string }).id;
const pageSize = (db.query("PRAGMA page_size").get() as { page_size: number }).page_size;
const stages = (db.query("SELECT key FROM pipeline_stages WHERE tenant_id = ? ORDER BY position").all(tenant) as { key: string }[]).map((s) => s.key);
const range = db.query("SELECT min(seq) AS lo, max(seq) AS hi FROM deals WHERE tenant_id = ?").get(tenant) as { lo: number; hi: number };
const pickOne = db.prepare<DealFields & { id: string }, [number]>("SELECT * FROM deals WHERE seq >= ?1 ORDER BY seq LIMIT 1");
const pick = () => pickOne.get(range.lo + Math.floor(Math.random() * (range.hi - range.lo)))!;
const fields = (d: DealFields): DealFields => ({
  title: d.title, account_id: d.account_id, contact_id: d.contact_id, assigned_to: d.assigned_to, stage: d.stage,
  value_cents: d.value_cents, currency: d.currency, close_date: d.close_date, probability: d.probability, notes: d.notes, custom_data: d.custom_data,
});
const title = () => `renewal ${Math.random().toString(36).slice(2, 8)} phase ${Math.floor(Math.random() * 9)}`;
const wal = `${file}-wal`;
const size = () => { try { return statSync(wal).size; } catch { return 0; } };
/** Page numbers of the frames between two WAL offsets (frame: 24-byte header, page number first). */
function framePages(from: number, to: number): number[] {
  const fd = openSync(wal, "r");
  const header = Buffer.alloc(4);
  const pages: number[] = [];
  for (let at = Math.max(from, 32); at + 24 + pageSize <= to; at += 24 + pageSize) {
    readSync(fd, header, 0, 4, at);
    pages.push(header.readUInt32BE(0));
  }
  return pages;
}
const op = (): (() => Promise<unknown>) => {
  const now = Date.now();
  const d = pick();
  if (kind === "create") return () => store.insert(tenant, newId(), { ...fields(d), title: title() }, now);
  if (kind === "title") return () => store.update(tenant, d.id, (c) => ({ ...fields(c), title: title() }), now);
  if (kind === "value") return () => store.update(tenant, d.id, (c) => ({ ...fields(c), value_cents: c.value_cents + 100 }), now);
  if (kind === "stage") return () => store.update(tenant, d.id, (c) => ({ ...fields(c), stage: stages[(stages.indexOf(c.stage) + 1) % stages.length]! }), now);
  return () => store.remove(tenant, d.id);
};
// WARM untimed writes first (default 10): a freshly seeded file has full index pages, so its first
// random inserts split nearly every leaf they touch; thousands of writes show the steady state.
// UPKEEP=1: the server's background upkeep (the search counters' fold, the full-text merge, the checkpoint) caught
// up every 100 writes, outside the measured calls, as a running server keeps it.
const { foldSearchCounters } = await import("../../src/db/search-fold");
const { ftsMergeStep } = await import("../../src/db/fts-merge");
const upkeep = () => {
  if (process.env.UPKEEP !== "1") return;
  while (foldSearchCounters(db) > 0);
  while (ftsMergeStep(db) > 0);
  // And the WAL checkpointed, as the server's checkpointer does: a WAL of thousands of writes
  // makes every page read search its whole index (the CPU of a write grew 1.1 → 1.6 ms without).
  db.run("PRAGMA wal_checkpoint(TRUNCATE)");
};
for (let i = 0; i < Number(process.env.WARM ?? 10); i++) {
  await op()();
  if (i % 100 === 99) upkeep();
}
upkeep();
const counts = new Map<number, number>();
let frames = 0;
const cpu: number[] = [];
for (let i = 0; i < N; i++) {
  if (i % 100 === 99) upkeep();
  const run = op();
  const before = size();
  const c = process.cpuUsage();
  await run();
  const d = process.cpuUsage(c);
  cpu.push((d.user + d.system) / 1000);
  for (const p of framePages(before, size())) {
    counts.set(p, (counts.get(p) ?? 0) + 1);
    frames++;
  }
}
// One scan of dbstat names every page written (it reads the file as the WAL shows it).
const byName = new Map<string, number>();
const names = db.query<{ name: string; pageno: number }, []>("SELECT name, pageno FROM dbstat");
for (const row of names.iterate()) {
  const n = counts.get(row.pageno);
  if (n) byName.set(row.name, (byName.get(row.name) ?? 0) + n);
}
const named = [...byName.values()].reduce((a, b) => a + b, 0);
cpu.sort((a, b) => a - b);
process.stdout.write(`${kind}: ${N} writes, CPU ms p50 ${cpu[Math.floor(N / 2)]!.toFixed(3)} p90 ${cpu[Math.floor(N * 0.9)]!.toFixed(3)}, ${(frames / N).toFixed(1)} pages a write (${((frames / N) * (pageSize + 24) / 1024).toFixed(0)} KB); unnamed (freelist, header) ${((frames - named) / N).toFixed(1)}\n`);
for (const [name, n] of [...byName].sort((a, b) => b[1] - a[1])) process.stdout.write(`  ${(n / N).toFixed(2).padStart(7)}  ${name}\n`);
db.close();
