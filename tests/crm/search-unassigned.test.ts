// A common term among the unassigned is matched in the search index (unassigned_token, schema
// version 10) instead of walking every unassigned deal. Its answers must be exactly those of the
// plain walk and of a reference computed here, after the bulk load fills the index and after
// assignments change, deals are unassigned, reassigned and deleted (the triggers keep the token).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bulkSeed } from "../../src/stores/sqlite/bulk-load";
import { createSqliteDealsQuery as createDealsQuery } from "../../src/stores/sqlite/deals-query";
import { costPlan } from "../../src/stores/sqlite/deals-plan";
import type { ListedSeqs } from "../../src/crm/deals-query";
import { SORT_COLUMN } from "../../src/crm/deal-columns";
import { forcedSqlitePlan, threeLettersByTrigrams } from "../support/deals-strategies";
import { randomSource } from "../../src/crm/demo-data";
import { type DealListQuery, SORT_FIELDS, type SortField } from "../../src/crm/model";
import { testApp } from "../helpers";
import { dealsOf, referencePage } from "./support";

const t = testApp();
afterAll(() => t.close());
let tenantId: string;

beforeAll(async () => {
  const a = await t.signup("searchunassigned");
  tenantId = a.tenant.id;
  bulkSeed(t.ctx.db, [{ tenantId, subdomain: "searchunassigned", deals: 1500, passwordHash: await t.ctx.hasher.hash("demo password") }], t.ctx.now());
});

const base: DealListQuery = { page: 1, size: 20, search: null, stages: null, assignee: "", sortBy: "created_at", sortDir: "desc" };
// rare: 1 sends every term with a match down the common-term path, where the token is used;
// 3-letter terms through the trigram index keeps them on it too (by default, since version 12,
// they are counted from deal_gram_counts).
const token = createDealsQuery(t.ctx.db, threeLettersByTrigrams(costPlan({ rare: 1 })));
const tokenSorted = createDealsQuery(t.ctx.db, threeLettersByTrigrams(forcedSqlitePlan("sort", { rare: 1 })));

/**
 * The plain walk the token replaced (before schema version 10), as SQL of its own: the unassigned
 * deals within the stages, each probed against the term's matches in the search index, sorted.
 */
function plainWalk(q: DealListQuery): ListedSeqs {
  const { column, nullable } = SORT_COLUMN[q.sortBy];
  const dir = q.sortDir === "asc" ? "ASC" : "DESC";
  const stages = q.stages ? ` AND stage IN (${q.stages.map(() => "?").join(", ")})` : "";
  const from = `FROM deals WHERE tenant_id = ? AND assigned_to IS NULL${stages} AND seq IN (SELECT rowid FROM deals_fts WHERE deals_fts MATCH ?)`;
  const args = [tenantId, ...(q.stages ?? []), `search_text : "${q.search!.toLowerCase()}"`];
  const total = (t.ctx.db.query(`SELECT count(*) AS n ${from}`).get(...args) as { n: number }).n;
  const order = `${nullable ? `${column} IS NULL, ` : ""}${column} ${dir}, id ${dir}`;
  const rows = t.ctx.db.query(`SELECT seq ${from} ORDER BY ${order} LIMIT ? OFFSET ?`).values(...args, q.size, (q.page - 1) * q.size) as number[][];
  return { seqs: rows.map((r) => r[0]!), total };
}
const byDefault = createDealsQuery(t.ctx.db);

async function agree(seed: string, n: number) {
  const deals = dealsOf(t.ctx.db, tenantId);
  const r = randomSource(seed);
  let nonEmpty = 0;
  for (let i = 0; i < n; i++) {
    const q: DealListQuery = {
      ...base,
      search: r.pick(["ion", "ent", "pro", "ser", "renewal", "q4 ", "xyzzy"]),
      stages: r.pick([null, null, ["new"], ["won", "lost"], ["negotiation"]]),
      sortBy: SORT_FIELDS[i % SORT_FIELDS.length] as SortField,
      sortDir: i % 2 === 0 ? "asc" : "desc",
      page: r.pick([1, 1, 3]),
      size: r.pick([5, 20]),
    };
    const want = referencePage(deals, q);
    if (want.total > 0) nonEmpty++;
    const got = { token: await token.list(tenantId, q), tokenSorted: await tokenSorted.list(tenantId, q), plain: plainWalk(q), byDefault: await byDefault.list(tenantId, q) };
    expect({ q, got }).toEqual({ q, got: { token: want, tokenSorted: want, plain: want, byDefault: want } });
  }
  // The comparison means something only if most answers hold deals.
  expect(nonEmpty).toBeGreaterThan(n / 2);
}

describe("search among the unassigned through the index's token", () => {
  test("after the bulk load: same totals and pages as the plain walk and the reference", async () => {
    const unassigned = t.ctx.db.query("SELECT count(*) AS n FROM deals WHERE tenant_id = ?1 AND assigned_to IS NULL").get(tenantId) as { n: number };
    expect(unassigned.n).toBeGreaterThan(100);
    await agree("unassigned-bulk", 120);
  });

  test("after deals are unassigned, assigned and deleted, the triggers keep the token exact", async () => {
    const db = t.ctx.db;
    // Someone's copies of their name, as the deals assigned to them hold them.
    const someone = db
      .query("SELECT assigned_to, assignee_name, assignee_key, assignee_email FROM deals WHERE tenant_id = ?1 AND assigned_to IS NOT NULL LIMIT 1")
      .get(tenantId) as { assigned_to: string; assignee_name: string | null; assignee_key: string | null; assignee_email: string | null };
    // Unassign some assigned deals, assign some unassigned ones, change a stage of others, delete a few.
    db.run("UPDATE deals SET assigned_to = NULL, assignee_name = NULL, assignee_key = NULL, assignee_email = NULL WHERE tenant_id = ?1 AND assigned_to IS NOT NULL AND seq % 5 = 0", [tenantId]);
    db.run("UPDATE deals SET assigned_to = ?2, assignee_name = ?3, assignee_key = ?4, assignee_email = ?5 WHERE tenant_id = ?1 AND assigned_to IS NULL AND seq % 7 = 0", [
      tenantId,
      someone.assigned_to,
      someone.assignee_name,
      someone.assignee_key,
      someone.assignee_email,
    ]);
    db.run("UPDATE deals SET stage = 'won' WHERE tenant_id = ?1 AND assigned_to IS NULL AND seq % 11 = 0", [tenantId]);
    db.run("DELETE FROM deals WHERE tenant_id = ?1 AND assigned_to IS NULL AND seq % 13 = 0", [tenantId]);
    db.run("INSERT INTO deals_fts (deals_fts, rank) VALUES ('integrity-check', 1)");
    await agree("unassigned-after-writes", 120);
  });
});
