// bun run bench writes DB [N]: single deal writes on a seeded SQLite file, in-process, through the
// deal store the API uses. For each kind (create, title edit, value edit, stage edit, delete) the
// CPU time of the store call (process.cpuUsage: the commit included, no fsync, as the server
// commits at synchronous=NORMAL and syncs off its thread) and the bytes it appended to the WAL
// (the -wal file's growth: frames of page_size + 24 bytes, one per page the commit changed; the
// automatic checkpoint is off, and the WAL is checkpointed between writes once past 4 MB, outside
// the timed calls, as the server's checkpointer keeps it: a WAL of thousands of writes makes every
// page read search its index, which a running server never sees). Twice: on the file as seeded
// (every index page full, so nearly every insert splits the pages it lands on), then after
// BENCH_WRITES_WARM (20,000) deal creates with the server's upkeep between them (the fold, the
// full-text merge, the checkpoint), when the index pages have room as in a file used for a while.
// Then the background fold of the
// search counters (schema version 15) and the full-text index's merge (32) in their bounded steps:
// how long each step held the writer.
// Run it on a copy: it writes. BENCH_WRITES_TENANT names the organization (default bigco).
import { statSync } from "node:fs";
import { CATCH_UP_FRAMES } from "../src/db/checkpointer";
import { openDatabase } from "../src/db/database";
import { migrate } from "../src/db/migrate";
import { timeOrderedId } from "../src/kernel/ids";
import { createSqliteDealsStore } from "../src/stores/sqlite/deals";
import { createSqliteEventsStore } from "../src/stores/sqlite/events";
import type { DealFields } from "../src/crm/deals-repo";
import { percentile } from "./stats";

const args = process.argv.slice(2).filter((a) => a !== "writes");
const file = args[0];
if (!file) throw new Error("usage: bun run bench writes DB [N] (DB: a copy of a seeded file, e.g. suite seed --db DB --tenant bigco --deals 1000000)");
const N = Number(args[1] ?? 300);
const db = openDatabase(file);
migrate(db, undefined, file);
db.run("PRAGMA synchronous = NORMAL");
db.run("PRAGMA wal_autocheckpoint = 0");
db.run("PRAGMA wal_checkpoint(TRUNCATE)");
// With its event, as the API writes it (the event log: src/stores/sqlite/events.ts).
const store = createSqliteDealsStore(db, createSqliteEventsStore(db).appendInTx);
const tenant = (db.query("SELECT id FROM tenants WHERE subdomain = ?").get(process.env.BENCH_WRITES_TENANT ?? "bigco") as { id: string }).id;
const total = (db.query("SELECT count(*) AS n FROM deals WHERE tenant_id = ?").get(tenant) as { n: number }).n;
const pageSize = (db.query("PRAGMA page_size").get() as { page_size: number }).page_size;
const stages = (db.query("SELECT key FROM pipeline_stages WHERE tenant_id = ? ORDER BY position").all(tenant) as { key: string }[]).map((s) => s.key);
// Deals picked at random over the organization's rowid range (seq), read whole.
const range = db.query("SELECT min(seq) AS lo, max(seq) AS hi FROM deals WHERE tenant_id = ?").get(tenant) as { lo: number; hi: number };
const pickOne = db.prepare<DealFields & { id: string; tenant_id: string }, [number]>("SELECT * FROM deals WHERE seq >= ?1 ORDER BY seq LIMIT 1");
const pick = () => pickOne.get(range.lo + Math.floor(Math.random() * (range.hi - range.lo)))!;
const fields = (d: DealFields): DealFields => ({
  title: d.title,
  account_id: d.account_id,
  contact_id: d.contact_id,
  assigned_to: d.assigned_to,
  stage: d.stage,
  value_cents: d.value_cents,
  currency: d.currency,
  close_date: d.close_date,
  probability: d.probability,
  notes: d.notes,
  custom_data: d.custom_data,
});
const walBytes = () => {
  try {
    return statSync(`${file}-wal`).size;
  } catch {
    return 0;
  }
};
const WORDS = ["renewal", "expansion", "pilot", "migration", "upgrade", "onboarding", "licence", "audit", "support", "rollout"];
const title = () => `${WORDS[Math.floor(Math.random() * WORDS.length)]} ${Math.random().toString(36).slice(2, 8)} phase ${Math.floor(Math.random() * 9)}`;

const pct = (xs: number[], p: number) => percentile(xs, p / 100);
const say = (s: string) => process.stdout.write(`${s}\n`);

/** The server's checkpointer, between writes: the WAL back to nothing once past 4 MB. */
const checkpointIfBig = () => {
  if (walBytes() > 4 * 1024 * 1024) db.run("PRAGMA wal_checkpoint(TRUNCATE)");
};

/** `op` is made before the clock starts (the deal it writes picked), and timed alone. */
async function measure(name: string, prepare: () => () => Promise<unknown>) {
  const cpu: number[] = [];
  const kb: number[] = [];
  for (let i = 0; i < N; i++) {
    checkpointIfBig();
    const op = prepare();
    const w = walBytes();
    const c = process.cpuUsage();
    await op();
    const d = process.cpuUsage(c);
    cpu.push((d.user + d.system) / 1000);
    kb.push((walBytes() - w) / 1024);
  }
  say(
    `${name.padEnd(12)} cpu ms p50 ${pct(cpu, 50).toFixed(3)} p90 ${pct(cpu, 90).toFixed(3)} max ${Math.max(...cpu).toFixed(2)}` +
      ` | WAL KB p50 ${pct(kb, 50).toFixed(1)} p90 ${pct(kb, 90).toFixed(1)} max ${Math.max(...kb).toFixed(1)} (pages ${Math.round((pct(kb, 50) * 1024) / (pageSize + 24))} at p50)`,
  );
}

say(`${file}: ${total} deals in the organization, page size ${pageSize}, ${N} writes a kind`);
const now = () => Date.now();
// A few untimed writes first: statements prepared, the first pages cached.
for (let i = 0; i < 20; i++) await store.update(tenant, pick().id, (c) => ({ ...fields(c), value_cents: c.value_cents + 1 }), now());
async function measureEach(): Promise<void> {
await measure("create", () => {
  const f = { ...fields(pick()), title: title() };
  return () => store.insert(tenant, timeOrderedId(), f, now());
});
await measure("title edit", () => {
  const [id, t] = [pick().id, title()];
  return () => store.update(tenant, id, (c) => ({ ...fields(c), title: t }), now());
});
await measure("value edit", () => {
  const id = pick().id;
  return () => store.update(tenant, id, (c) => ({ ...fields(c), value_cents: c.value_cents + 100 }), now());
});
await measure("stage edit", () => {
  const id = pick().id;
  return () => store.update(tenant, id, (c) => ({ ...fields(c), stage: stages[(stages.indexOf(c.stage) + 1) % stages.length]! }), now());
});
await measure("delete", () => {
  const id = pick().id;
  return () => store.remove(tenant, id);
});
}

say("as seeded (index pages full):");
await measureEach();

// The search counters' fold (schema 14): its steps until nothing is pending, each step's writer time.
const fold = await import("../src/db/search-fold").catch(() => null);
if (fold) {
  const steps: number[] = [];
  const c = process.cpuUsage();
  const t = performance.now();
  let folded = 0;
  for (;;) {
    const s = performance.now();
    const n = fold.foldSearchCounters(db);
    if (n === 0) break;
    steps.push(performance.now() - s);
    folded += n;
    // As the server's fold waits for the checkpointer past CATCH_UP_FRAMES (walCatchUp), outside the step:
    // steps reading through a WAL of gigabytes (each page looked up in every segment's hash) cost 4 ms a row.
    if (walBytes() > CATCH_UP_FRAMES * (pageSize + 24)) db.run("PRAGMA wal_checkpoint(TRUNCATE)");
  }
  const d = process.cpuUsage(c);
  if (steps.length > 0)
    say(
      `fold         ${folded} changes in ${steps.length} steps, ${((performance.now() - t) / 1000).toFixed(2)} s wall, CPU ${((d.user + d.system) / 1000).toFixed(0)} ms` +
        ` (${((d.user + d.system) / 1000 / folded).toFixed(3)} ms a change); step wall ms p50 ${pct(steps, 50).toFixed(1)} max ${Math.max(...steps).toFixed(1)}`,
    );
}
// The full-text index's merge (schema version 32): deal writes leave it to bounded background
// steps; their count and each step's writer time, until the index is in shape.
const merge = await import("../src/db/fts-merge").catch(() => null);
if (merge) {
  const steps: number[] = [];
  const c = process.cpuUsage();
  let pages = 0;
  for (;;) {
    const s = performance.now();
    const n = merge.ftsMergeStep(db);
    if (n === 0) break;
    steps.push(performance.now() - s);
    pages += n;
  }
  const d = process.cpuUsage(c);
  if (steps.length > 0)
    say(
      `merge        ${steps.length} steps (about ${pages} pages), CPU ${((d.user + d.system) / 1000).toFixed(0)} ms; step wall ms p50 ${pct(steps, 50).toFixed(1)} max ${Math.max(...steps).toFixed(1)}`,
    );
}
// A file used for a while: WARM creates with the upkeep between them, then the writes again.
const WARM = Number(process.env.BENCH_WRITES_WARM ?? 20_000);
if (WARM > 0) {
  const { foldSearchCounters } = await import("../src/db/search-fold");
  const { ftsMergeStep } = await import("../src/db/fts-merge");
  const started = performance.now();
  for (let i = 0; i < WARM; i++) {
    await store.insert(tenant, timeOrderedId(), { ...fields(pick()), title: title() }, now());
    if (i % 200 === 199) {
      while (foldSearchCounters(db) > 0);
      while (ftsMergeStep(db) > 0);
      checkpointIfBig();
    }
  }
  while (foldSearchCounters(db) > 0);
  while (ftsMergeStep(db) > 0);
  say(`after ${WARM} more creates (${((performance.now() - started) / 1000).toFixed(0)} s with the upkeep):`);
  await measureEach();
}
db.run("PRAGMA wal_checkpoint(TRUNCATE)");
db.close();
