// deal_gram_counts (schema versions 11 and 12) gives a 1-3 letter search its exact total. Its rows must
// equal what the deals hold, counted here from their search text, after every write path: the bulk
// load (counted in JS), live inserts, updates, moves, reassignments, renames of accounts and
// contacts, deletes, a stage's deletion, an import and an organization's deletion. And the totals
// and pages of 1-3 letter terms must equal a reference's, with every filter and sort (3-letter
// totals checked after each write path, with every filter combination).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { bulkSeed } from "../../src/stores/sqlite/bulk-load";
import { GramTally, recountDealGrams } from "../../src/db/deal-grams";
import { foldAll, pendingSearchRows } from "../../src/db/search-fold";
import { MIGRATIONS } from "../../src/db/migrations";
import { migrate } from "../../src/db/migrate";
import { createSqliteDealsQuery } from "../../src/stores/sqlite/deals-query";
import { costPlan } from "../../src/stores/sqlite/deals-plan";
import { forcedSqlitePlan, threeLettersByTrigrams } from "../support/deals-strategies";
import { randomSource } from "../../src/crm/demo-data";
import { type DealListQuery, SORT_FIELDS, type SortField } from "../../src/crm/model";
import { testApp } from "../helpers";
import migration11 from "../../src/db/migrations/0011-deal-gram-counts.sql" with { type: "text" };
import { type CrmOrg, addUser, crmOrg, dealsOf, referencePage } from "./support";
import { redoForRequests, undoAfterRequests, undoMigrationsAfter } from "../support/rewind";

const t = testApp();
afterAll(() => t.close());
let org: CrmOrg;
let tenantId: string;

/** The counts the triggers should hold: each distinct 1-3 character piece of each deal's text (none across a newline). */
function expectedCounts(tenant: string): string[] {
  const counts = new Map<string, number>();
  const rows = t.ctx.db.query("SELECT search_text, stage, coalesce(assigned_to, '') AS assignee FROM deals WHERE tenant_id = ?1").all(tenant) as Array<{
    search_text: string;
    stage: string;
    assignee: string;
  }>;
  for (const r of rows) {
    const chars = [...r.search_text];
    const grams = new Set<string>();
    chars.forEach((c, i) => {
      grams.add(c);
      if (i + 1 < chars.length) grams.add(c + chars[i + 1]);
      if (i + 2 < chars.length) grams.add(c + chars[i + 1] + chars[i + 2]);
    });
    for (const g of grams) if (!g.includes("\n")) counts.set(`${g}|${r.stage}|${r.assignee}`, (counts.get(`${g}|${r.stage}|${r.assignee}`) ?? 0) + 1);
  }
  return [...counts].map(([k, n]) => `${k}|${n}`).sort();
}
const storedCounts = (tenant: string): string[] =>
  (t.ctx.db.query("SELECT gram, stage, assignee, n FROM deal_gram_counts WHERE tenant_id = ?1 AND n <> 0").all(tenant) as Array<Record<string, string | number>>)
    .map((r) => `${r.gram}|${r.stage}|${r.assignee}|${r.n}`)
    .sort();
/**
 * Totals exact with the writes still pending (schema version 15: the readers add them), then the
 * pending rows folded and the stored rows equal to the deals' own count, totals exact again.
 */
const countsAgree = async (tenant = tenantId) => {
  if (tenant === tenantId) await threeLetterTotalsAgree();
  foldAll(t.ctx.db);
  expect(pendingSearchRows(t.ctx.db)).toBe(0);
  const want = expectedCounts(tenant);
  expect(want.length).toBeGreaterThan(0);
  expect(storedCounts(tenant)).toEqual(want);
  if (tenant === tenantId) await threeLetterTotalsAgree();
};

/** 3-letter terms' totals (counted from deal_gram_counts since version 12) with every filter combination: a reference count over the deals. */
async function threeLetterTotalsAgree() {
  const deals = dealsOf(t.ctx.db, tenantId);
  const users = [...new Set(deals.map((d) => d.assigned_to).filter((a) => a !== null))].sort() as string[];
  const query = createSqliteDealsQuery(t.ctx.db);
  let nonZero = 0;
  for (const search of ["ion", "ENT", "jaz", "q4 ", "yak", "🦊 e", "e l", "zzz"])
    for (const stages of [null, ["new"], ["won", "lost"], ["negotiation", "new", "qualified"]])
      for (const assignee of [null, "", ...users.slice(0, 2)]) {
        const q: DealListQuery = { page: 1, size: 5, search, stages, assignee, sortBy: "value", sortDir: "desc" };
        const want = referencePage(deals, q).total;
        if (want > 0) nonZero++;
        expect({ q, total: (await query.list(tenantId, q)).total }).toEqual({ q, total: want });
      }
  expect(nonZero).toBeGreaterThan(0);
}

beforeAll(async () => {
  org = await crmOrg(t, "searchgrams");
  tenantId = org.tenant.id;
  // A few live deals first: the bulk load adds its tally to the rows the triggers wrote.
  const acc = await org.account("Überbau Zeta");
  await org.deal({ title: "Ärger mit q4 Öl", account_id: acc.id, stage: "new" });
  bulkSeed(t.ctx.db, [{ tenantId, subdomain: "searchgrams", deals: 1200, passwordHash: await t.ctx.hasher.hash("demo password") }], t.ctx.now());
});

describe("deal_gram_counts", () => {
  test("after the bulk load (counted in JS beside rows the triggers wrote)", () => countsAgree());

  test("after every write path", async () => {
    const acc = await org.account("Quixotic Yak Ltd");
    const other = await org.account("Zephyr Works");
    const ct = await org.contact("Jo", "Ng", { account_id: acc.id });
    const member = await addUser(t, tenantId, "member@searchgrams.test", "Mem Ber");
    const d1 = await org.deal({ title: "Jazz fix", account_id: acc.id, contact_id: ct.id, stage: "new", notes: "line one\nline two" });
    const d2 = await org.deal({ title: "Vex 🦊 emoji", account_id: other.id, stage: "won", assigned_to: member });
    await countsAgree();
    await org.ok("PATCH", `/deals/${d1.id}`, { title: "Jazz hands", stage: "negotiation", assigned_to: member });
    await org.ok("PATCH", `/deals/${d2.id}`, { assigned_to: null, notes: "xq" });
    await countsAgree();
    // One column at a time: each must fire the trigger on its own.
    await org.ok("PATCH", `/deals/${d1.id}`, { assigned_to: null });
    await countsAgree();
    await org.ok("PATCH", `/deals/${d1.id}`, { stage: "won" });
    await countsAgree();
    // A member's deals handed to another (crm.ts) set only assigned_to.
    t.ctx.db.run("UPDATE deals SET assigned_to = ?2 WHERE tenant_id = ?1 AND assigned_to IS NULL AND seq % 3 = 0", [tenantId, member]);
    await countsAgree();
    await org.ok("PATCH", `/accounts/${acc.id}`, { name: "Quixote Yaks" });
    await org.ok("PATCH", `/contacts/${ct.id}`, { first_name: "Joy" });
    await countsAgree();
    await org.ok("DELETE", `/deals/${d2.id}`, undefined, 204);
    await countsAgree();
    const stage = await org.ok("POST", "/pipeline-stages", { key: "parked", name: "Parked" });
    await org.deal({ title: "Parked zq", account_id: acc.id, stage: "parked" });
    await org.ok("DELETE", `/pipeline-stages/${stage.id}?move_to=won`, undefined, 204);
    await countsAgree();
    const csv = ["title,account_name,contact_name,value", "Imported qz,Made Up Co,Mia Made,1", "Second jx,Made Up Co,,2"].join("\n");
    const r = await t.json("POST", "/api/v1/crm/deals/import?create_missing=true", { token: org.token, raw: csv, headers: { "content-type": "text/csv" } });
    expect(r.status).toBe(202);
    // The import is a job written after its answer.
    await t.ctx.jobs.settled();
    expect((await t.json("GET", `/api/v1/crm/jobs/${r.body.id}`, { token: org.token })).body).toMatchObject({ status: "succeeded", added: 2 });
    await countsAgree();
  }, 30_000);

  test("short and 3-letter terms: exact totals and the reference's pages, with every filter and sort", async () => {
    const deals = dealsOf(t.ctx.db, tenantId);
    const users = [...new Set(deals.map((d) => d.assigned_to).filter((a) => a !== null))] as string[];
    const queries = [
      createSqliteDealsQuery(t.ctx.db),
      createSqliteDealsQuery(t.ctx.db, forcedSqlitePlan("sort")),
      createSqliteDealsQuery(t.ctx.db, forcedSqlitePlan("index walk")),
      createSqliteDealsQuery(t.ctx.db, costPlan({ walkBudget: 30 })),
      createSqliteDealsQuery(t.ctx.db, threeLettersByTrigrams(costPlan({ rare: 1 }))),
    ];
    const r = randomSource("grams");
    let nonEmpty = 0;
    for (let i = 0; i < 200; i++) {
      const q: DealListQuery = {
        page: r.pick([1, 1, 2]),
        size: r.pick([5, 20]),
        search: r.pick(["e", "a", "q", "Z", "ö", "er", "an", "q4", "zz", "🦊", "x", "ion", "Ent", "q4 ", "ion", "e l", "zzz"]),
        stages: r.pick([null, null, ["new"], ["won", "lost"], ["negotiation"]]),
        assignee: r.pick([null, null, "", users[i % users.length]!]),
        sortBy: SORT_FIELDS[i % SORT_FIELDS.length] as SortField,
        sortDir: i % 2 === 0 ? "asc" : "desc",
      };
      const want = referencePage(deals, q);
      if (want.total > 0) nonEmpty++;
      for (const query of queries) expect({ q, got: await query.list(tenantId, q) }).toEqual({ q, got: want });
    }
    expect(nonEmpty).toBeGreaterThan(100);
  });

  test("migrations 11 and 12 count the deals already there", async () => {
    // 11's backfill (1-2 characters, a trigger per deal) on the counts emptied, then 12's recount
    // (1-3 characters, in memory, every row written anew): the same rows again.
    const sql11 = migration11.slice(migration11.indexOf("CREATE TEMP TABLE"), migration11.indexOf("CREATE TRIGGER deal_grams_insert"));
    expect(sql11).toContain("INSERT INTO deal_grams_backfill");
    expect(MIGRATIONS.find((m) => m.version === 12)?.after).toBe(recountDealGrams);
    // A recount counts the deals as they are: nothing may be pending beside it (in a migration to 12 the pending table does not exist yet).
    foldAll(t.ctx.db);
    t.ctx.db.transaction(() => {
      t.ctx.db.run("DELETE FROM deal_gram_counts");
      t.ctx.db.exec(sql11);
      // Version 11's counts alone: no 3-character gram yet.
      expect((t.ctx.db.query("SELECT count(*) AS n FROM deal_gram_counts WHERE length(gram) = 3").get() as { n: number }).n).toBe(0);
      recountDealGrams(t.ctx.db);
    })();
    await countsAgree();
    // Counts gone wrong (a stray row, a wrong number) are replaced, not added to.
    t.ctx.db.run("UPDATE deal_gram_counts SET n = n + 7 WHERE tenant_id = ?1 AND gram IN (SELECT gram FROM deal_gram_counts WHERE tenant_id = ?1 LIMIT 3)", [tenantId]);
    t.ctx.db.run("INSERT INTO deal_gram_counts (tenant_id, gram, stage, assignee, n) VALUES (?1, 'qqq', 'new', '', 5)", [tenantId]);
    t.ctx.db.transaction(() => recountDealGrams(t.ctx.db))();
    await countsAgree();
  }, 30_000);

  test("a version-11 database, written to under its own triggers, migrated to version 12: 3-letter totals exact", async () => {
    // Back to version 11: its triggers (1-2 characters), no 3-character rows.
    const db = t.ctx.db;
    foldAll(db);
    db.transaction(() => {
      // Nor version 15's pending rows (folded above) and their triggers.
      for (const tr of ["deal_search_pending_insert", "deal_search_pending_delete", "deal_search_pending_update"]) db.run(`DROP TRIGGER ${tr}`);
      db.run("DROP TABLE deal_search_pending");
      db.exec(migration11.slice(migration11.indexOf("CREATE TRIGGER deal_grams_insert")));
      db.run("DELETE FROM deal_gram_counts WHERE length(gram) = 3");
      // Nor version 13's key-gram counts, nor what 14 and 16 on made.
      db.run("DROP TABLE deal_key_grams");
      undoMigrationsAfter(db, 11);
      db.run("PRAGMA user_version = 11");
      // The session check of every request reads what 20 and 21 made: back for the writes below.
      redoForRequests(db);
    })();
    const acc = await org.account("Version Eleven Ltd");
    const d = await org.deal({ title: "Old yak deal", account_id: acc.id, stage: "new" });
    await org.ok("PATCH", `/deals/${d.id}`, { title: "Older yak deal", stage: "won" });
    await org.deal({ title: "Another jazz yak", account_id: acc.id, stage: "lost" });
    expect((db.query("SELECT count(*) AS n FROM deal_gram_counts WHERE length(gram) = 3").get() as { n: number }).n).toBe(0);
    undoAfterRequests(db);
    expect(migrate(db)).toMatchObject({ from: 11, to: MIGRATIONS[MIGRATIONS.length - 1]!.version });
    await countsAgree();
    // And later writes (version 15's pending rows, folded) keep the 3-character counts.
    await org.ok("PATCH", `/deals/${d.id}`, { title: "Yak renamed", assigned_to: null });
    await countsAgree();
  }, 30_000);

  test("the bulk seed's tally equals a plain count on many distinct grams (its tables grow)", () => {
    const r = randomSource("tally");
    const letters = [..."abcdefghijklmnopqrstuvwxyzäöüß0123456789 -.,'🦊😀\n"];
    const tally = new GramTally();
    const want = new Map<string, number>();
    for (let i = 0; i < 6000; i++) {
      const chars = Array.from({ length: 5 + r.int(40) }, () => r.pick(letters));
      const [stage, assignee] = [r.pick(["new", "won"]), r.pick([null, "u1", "u2"])];
      tally.add(stage, assignee, chars.join(""));
      const grams = new Set<string>();
      chars.forEach((c, k) => [1, 2, 3].forEach((n) => k + n <= chars.length && grams.add(chars.slice(k, k + n).join(""))));
      for (const g of grams) if (!g.includes("\n")) want.set(`${g}|${stage}|${assignee ?? ""}`, (want.get(`${g}|${stage}|${assignee ?? ""}`) ?? 0) + 1);
    }
    // Over 32,768 distinct longer grams: the tally's hash table grows at least once.
    expect(new Set([...want.keys()].map((k) => k.split("|")[0])).size).toBeGreaterThan(40_000);
    const db = new Database(":memory:");
    db.run("CREATE TABLE deal_gram_counts (tenant_id TEXT, gram TEXT, stage TEXT, assignee TEXT, n INTEGER, PRIMARY KEY (tenant_id, gram, stage, assignee))");
    tally.write(db as never, "t1");
    const rows = db.query("SELECT gram, stage, assignee, n FROM deal_gram_counts").all() as Array<Record<string, string | number>>;
    db.close();
    expect(rows.map((x) => `${x.gram}|${x.stage}|${x.assignee}|${x.n}`).sort()).toEqual([...want].map(([k, n]) => `${k}|${n}`).sort());
  }, 30_000);

  test("an organization's deletion takes its rows", () => {
    t.ctx.db.run("DELETE FROM tenants WHERE id = ?1", [tenantId]);
    expect(storedCounts(tenantId)).toEqual([]);
  });
});
