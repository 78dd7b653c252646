// SQLite's choice of a bulk change's deals (src/stores/sqlite/bulk-deals.ts, matchingQuery): each
// window of deal numbers is read by its rowid range, whatever filter comes with it. Prepared
// without its values, the statement was planned on the stage's index instead (every deal of the
// stage read for each window), and the job's windows shrank until choosing took minutes.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { bulkSeed } from "../../src/stores/sqlite/bulk-load";
import { matchingQuery } from "../../src/stores/sqlite/bulk-deals";
import { testApp } from "../helpers";
import { crmOrg } from "./support";

const t = testApp({ backend: "sqlite" });
let tenantId: string;
afterAll(() => t.close());

beforeAll(async () => {
  const org = await crmOrg(t, "choiceco");
  tenantId = org.tenant.id;
  bulkSeed(t.ctx.db, [{ tenantId, subdomain: "choiceco", deals: 300, passwordHash: "not a real hash" }], Date.now());
  // The statistics a million-deal file's ANALYZE left (the seed's, with analysis_limit), under which
  // the stage's index looked cheaper than a rowid range of unknown bounds.
  const stats: Array<[string, string]> = [
    ["deals_by_stage_created", "1000000 2001 2001 1 1"],
    ["deals_by_stage", "1000000 2001 2001 1 1 1"],
    ["deals_by_assignee_created", "1000000 2001 2001 1 1"],
    ["deals_by_created", "1000000 2001 1 1 1 1"],
    ["deals_text_by_seq", "1000000 1 1 1 1"],
    ["sqlite_autoindex_deals_1", "1000000 1"],
  ];
  for (const [idx, stat] of stats) t.ctx.db.run("UPDATE sqlite_stat1 SET stat = ?2 WHERE tbl = 'deals' AND idx = ?1", [idx, stat]);
  // A new connection would read them at its start; this one, once told to.
  t.ctx.db.run("ANALYZE sqlite_schema");
}, 60_000);

test("every filter shape of a bulk change reads its window by rowid range, never by an index", () => {
  const shapes = [
    { search: null, stages: null, assignee: null },
    { search: null, stages: ["negotiation"], assignee: null },
    { search: null, stages: ["new", "won"], assignee: "" },
    { search: "ab", stages: ["new"], assignee: "u_someone" },
    { search: null, stages: null, assignee: "u_someone" },
  ];
  for (const f of shapes) {
    const { sql, args } = matchingQuery(tenantId, f, 1, 100);
    const plan = (t.ctx.db.query(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as { detail: string }[]).map((r) => r.detail);
    expect({ f, plan }).toEqual({ f, plan: ["SEARCH deals USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)"] });
  }
});
