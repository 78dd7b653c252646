// What counting deal_gram_counts (1-3 character pieces since version 12) in JS adds to a bulk seed: GramTally over the stored search texts of
// a seeded database's largest organization (process CPU time), and the count of rows it writes.
// bun bench/probes/gram-tally-cost.ts DB
import { Database } from "bun:sqlite";
import { GramTally } from "../../src/db/deal-grams";

const db = new Database(process.argv[2]!, { readonly: true });
const big = db.query("SELECT tenant_id FROM deal_counts WHERE assignee = '*' GROUP BY tenant_id ORDER BY sum(n) DESC LIMIT 1").get() as { tenant_id: string };
const rows = db.query("SELECT search_text, stage, assigned_to FROM deals WHERE tenant_id = ?1").values(big.tenant_id) as Array<[string, string, string | null]>;
const tally = new GramTally();
const c = process.cpuUsage();
for (const [text, stage, assignee] of rows) tally.add(stage, assignee, text);
const d = process.cpuUsage(c);
const ms = (d.user + d.system) / 1000;
const stored = db.query("SELECT count(*) AS n FROM deal_gram_counts WHERE tenant_id = ?1").get(big.tenant_id) as { n: number };
console.log(`${rows.length} deals: tally ${ms.toFixed(0)} ms CPU (${((ms * 1000) / rows.length).toFixed(2)} µs a deal); ${stored.n} rows stored for the tenant, ${tally.rows()} rows the tally writes`);
