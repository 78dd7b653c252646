// bun bench/probes/stage-update-cost.ts DB [N]: what a deal's stage change costs SQLite, part by
// part. Moves N (20,000) deals of `negotiation` to `lost` with one plain UPDATE a deal, in
// transactions of PROBE_BATCH (30) deals (a bulk change's batches hold about 15), and prints the CPU
// a deal. PROBE_DROP names triggers (t:NAME) and indexes to drop first, comma-separated: run it
// once per set on fresh copies of a seeded file and subtract. Run it on a copy: it writes.
//   cp m1.db a.db && PROBE_DROP=t:deals_fts_update bun bench/probes/stage-update-cost.ts a.db
// The WAL is checkpointed and truncated every 3,000 deals, inside the timing (the server's checkpointer
// thread does that copying beside its writes, and the process's CPU counts it too).
import { Database } from "bun:sqlite";

const file = process.argv[2];
if (!file) throw new Error("usage: bun bench/probes/stage-update-cost.ts DB [N]");
const N = Number(process.argv[3] ?? 20_000);
const BATCH = Number(process.env.PROBE_BATCH ?? 30);
const TENANT = process.env.PROBE_TENANT ?? "bigco";
const db = new Database(file);
// The server's pragmas that matter here (database.ts), but synchronous: the server syncs off its thread.
for (const p of ["journal_mode = WAL", "synchronous = NORMAL", "cache_size = -32768", "temp_store = 2"]) db.run(`PRAGMA ${p}`);
const drop = (process.env.PROBE_DROP ?? "").split(",").filter(Boolean);
for (const d of drop) db.run(d.startsWith("t:") ? `DROP TRIGGER ${d.slice(2)}` : `DROP INDEX ${d}`);
const tenant = (db.query("SELECT id FROM tenants WHERE subdomain = ?1").get(TENANT) as { id: string } | null)?.id;
if (!tenant) throw new Error(`no organization ${TENANT} in ${file}`);
const seqs = (db.query("SELECT seq FROM deals WHERE tenant_id = ?1 AND stage = 'negotiation' LIMIT ?2").values(tenant, N) as number[][]).map((r) => r[0]!);
const update = db.prepare("UPDATE deals SET stage = 'lost', updated_at = ?2 WHERE seq = ?1");
const cpu = process.cpuUsage();
const started = performance.now();
for (let i = 0; i < seqs.length; i += BATCH) {
  db.transaction(() => {
    for (const s of seqs.slice(i, i + BATCH)) update.run(s, Date.now());
  })();
  if (i % 3000 < BATCH) db.run("PRAGMA wal_checkpoint(TRUNCATE)");
}
const spent = process.cpuUsage(cpu);
const each = (us: number) => (us / seqs.length).toFixed(0);
console.log(
  `${drop.join(",") || "everything kept"}: ${seqs.length} deals in batches of ${BATCH}: ${each(spent.user + spent.system)} µs of CPU a deal, ` +
    `${each((performance.now() - started) * 1000)} µs wall (checkpoints included)`,
);
