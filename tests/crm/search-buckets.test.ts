// deal_key_grams (schema version 13) tells a 3-letter search where along the title, account and
// contact orders its term occurs, so a walk seeks to those buckets instead of crossing the order.
// Its rows must equal what the deals hold after every write path, the bulk load, the migration's
// recount and the tally; and the pages of terms clustered along each text order (both directions,
// every filter, several pages, deals without a contact last) must equal a reference's, through the
// bucket walk forced, the default plan, a walk that runs out of budget and sorting.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { bulkSeed } from "../../src/stores/sqlite/bulk-load";
import { KeyGramTally, bucketOf, recountDealKeyGrams, trigramsOf } from "../../src/db/deal-key-grams";
import { foldAll } from "../../src/db/search-fold";
import migration12 from "../../src/db/migrations/0012-deal-gram-counts-3.sql" with { type: "text" };
import { bucketRange, keyAfter } from "../../src/stores/sqlite/deals-text-walk";
import { MIGRATIONS, afterVersion13 } from "../../src/db/migrations";
import { migrate } from "../../src/db/migrate";
import { createSqliteDealsQuery } from "../../src/stores/sqlite/deals-query";
import { costPlan } from "../../src/stores/sqlite/deals-plan";
import { forcedSqlitePlan } from "../support/deals-strategies";
import { randomSource } from "../../src/crm/demo-data";
import type { DealListQuery, SortField } from "../../src/crm/model";
import { testApp } from "../helpers";
import { type CrmOrg, addUser, crmOrg, dealsOf, referencePage } from "./support";
import { redoForRequests, undoAfterRequests, undoMigrationsAfter } from "../support/rewind";

const t = testApp();
afterAll(() => t.close());
let org: CrmOrg;
let tenantId: string;

type KeyRow = { title_key: string; account_key: string; contact_key: string | null; search_text: string };

/** The rows the triggers should hold, counted here: per sort and bucket, each deal once under '' and once under each distinct 3-character piece. */
function expectedCounts(rows: KeyRow[]): string[] {
  const counts = new Map<string, number>();
  const add = (k: string) => counts.set(k, (counts.get(k) ?? 0) + 1);
  for (const r of rows) {
    const grams = ["", ...trigramsOf(r.search_text)];
    for (const [ord, key] of [["t", r.title_key], ["a", r.account_key], ["c", r.contact_key]] as const) {
      if (key === null) continue;
      const bucket = [...key].slice(0, 6).join("");
      for (const g of grams) add(`${ord}|${bucket}|${g}`);
    }
  }
  return [...counts].map(([k, n]) => `${k}|${n}`).sort();
}
const dealKeys = (tenant: string) =>
  t.ctx.db.query("SELECT title_key, account_key, contact_key, search_text FROM deals WHERE tenant_id = ?1").all(tenant) as KeyRow[];
const storedCounts = (tenant: string): string[] =>
  (t.ctx.db.query("SELECT ord, bucket, gram, n FROM deal_key_grams WHERE tenant_id = ?1 AND n <> 0").all(tenant) as Array<Record<string, string | number>>)
    .map((r) => `${r.ord}|${r.bucket}|${r.gram}|${r.n}`)
    .sort();
/** The stored rows once the writes pending (schema version 15) are folded in. */
const countsAgree = (tenant = tenantId) => {
  foldAll(t.ctx.db);
  const want = expectedCounts(dealKeys(tenant));
  expect(want.length).toBeGreaterThan(0);
  expect(storedCounts(tenant)).toEqual(want);
};

/** A deal's text columns rewritten in SQL (the triggers follow): ASCII only, so lower() is JS's toLowerCase. */
function rewrite(where: string, set: { title?: string; account?: string; contact?: string | null }) {
  const cols = [
    ...(set.title !== undefined ? [`title = '${set.title}' || ' ' || seq`, `title_key = lower('${set.title}' || ' ' || seq)`] : []),
    ...(set.account !== undefined ? [`account_name = '${set.account}'`, `account_key = lower('${set.account}')`] : []),
    ...(set.contact !== undefined
      ? set.contact === null
        ? ["contact_name = NULL", "contact_key = NULL", "contact_id = NULL"]
        : [`contact_name = '${set.contact}'`, `contact_key = lower('${set.contact}')`]
      : []),
  ];
  t.ctx.db.run(`UPDATE deals SET ${cols.join(", ")} WHERE tenant_id = ?1 AND (${where})`, [tenantId]);
  t.ctx.db.run(
    `UPDATE deals SET search_text = lower(title || char(10) || coalesce(notes, '') || char(10) || account_name || char(10) || coalesce(contact_name, ''))
      WHERE tenant_id = ?1 AND (${where})`,
    [tenantId],
  );
}

beforeAll(async () => {
  org = await crmOrg(t, "searchbuckets");
  tenantId = org.tenant.id;
  const acc = await org.account("Überbau Zeta");
  await org.deal({ title: "Ärger mit q4 Öl", account_id: acc.id, stage: "new" });
  bulkSeed(t.ctx.db, [{ tenantId, subdomain: "searchbuckets", deals: 1500, passwordHash: await t.ctx.hasher.hash("demo password") }], t.ctx.now());
  // Terms clustered along each text order, with a few stray matches elsewhere (before and after
  // the cluster, in buckets of their own, and among deals without a contact):
  // "wqk" in titles "Mid wqk ..." (and two "Aa wqk"/"Zz wqk" strays: keys shorter than a bucket too);
  // "vjx" in the account "Nnnvjx Holdings"; "yfz" in the contact "Pyfz Person" (and in the titles
  // of some deals without a contact).
  rewrite("seq % 5 = 0", { title: "Mid wqk deal" });
  rewrite("seq % 97 = 1", { title: "Aa wqk" });
  rewrite("seq % 89 = 2", { title: "Zz wqk" });
  t.ctx.db.run(
    "UPDATE deals SET title = 'Aa', title_key = 'aa', search_text = lower('Aa' || char(10) || coalesce(notes, '') || char(10) || account_name || char(10) || coalesce(contact_name, '')) WHERE tenant_id = ?1 AND seq % 101 = 3",
    [tenantId],
  );
  rewrite("seq % 6 = 1", { account: "Nnnvjx Holdings" });
  rewrite("seq % 211 = 4", { account: "Avjx" });
  rewrite("seq % 7 = 2", { contact: "Pyfz Person" });
  rewrite("seq % 11 = 3", { contact: null });
  rewrite("seq % 11 = 3 AND seq % 3 = 0", { title: "Nocontact yfz" });
  rewrite("seq % 11 = 4", { contact: "Ab" });
});

describe("deal_key_grams", () => {
  test("after the bulk load and SQL rewrites", () => countsAgree(), 30_000);

  test("after every write path", async () => {
    const acc = await org.account("Quixotic Yak Ltd");
    const other = await org.account("Zephyr Works");
    const ct = await org.contact("Jo", "Ng", { account_id: acc.id });
    const member = await addUser(t, tenantId, "member@searchbuckets.test", "Mem Ber");
    const d1 = await org.deal({ title: "Jazz fix", account_id: acc.id, contact_id: ct.id, stage: "new", notes: "line one\nline two" });
    const d2 = await org.deal({ title: "Vex 🦊 emoji", account_id: other.id, stage: "won", assigned_to: member });
    countsAgree();
    await org.ok("PATCH", `/deals/${d1.id}`, { title: "Jazz hands", stage: "negotiation", assigned_to: member });
    await org.ok("PATCH", `/deals/${d2.id}`, { assigned_to: null, notes: "xq", account_id: acc.id, contact_id: ct.id });
    countsAgree();
    await org.ok("PATCH", `/deals/${d1.id}`, { contact_id: null });
    countsAgree();
    await org.ok("PATCH", `/accounts/${acc.id}`, { name: "Quixote Yaks" });
    await org.ok("PATCH", `/contacts/${ct.id}`, { first_name: "Joy" });
    countsAgree();
    await org.ok("DELETE", `/deals/${d2.id}`, undefined, 204);
    countsAgree();
    const stage = await org.ok("POST", "/pipeline-stages", { key: "parked", name: "Parked" });
    await org.deal({ title: "Parked zq", account_id: acc.id, stage: "parked" });
    await org.ok("DELETE", `/pipeline-stages/${stage.id}?move_to=won`, undefined, 204);
    countsAgree();
    const csv = ["title,account_name,contact_name,value", "Imported qz,Made Up Co,Mia Made,1", "Second jx,Made Up Co,,2"].join("\n");
    const r = await t.json("POST", "/api/v1/crm/deals/import?create_missing=true", { token: org.token, raw: csv, headers: { "content-type": "text/csv" } });
    expect(r.status).toBe(202);
    // The import is a job written after its answer.
    await t.ctx.jobs.settled();
    expect((await t.json("GET", `/api/v1/crm/jobs/${r.body.id}`, { token: org.token })).body).toMatchObject({ status: "succeeded", added: 2 });
    countsAgree();
  }, 30_000);

  test("the migration's recount replaces the rows; a version-12 database migrates to 13 with exact rows and pages", async () => {
    expect(MIGRATIONS.find((m) => m.version === 13)?.after).toBe(afterVersion13);
    foldAll(t.ctx.db);
    t.ctx.db.run("UPDATE deal_key_grams SET n = n + 3 WHERE tenant_id = ?1 AND ord = 't' AND gram = ''", [tenantId]);
    t.ctx.db.run("INSERT INTO deal_key_grams (tenant_id, ord, gram, bucket, n) VALUES (?1, 't', 'qqq', 'zzz', 5)", [tenantId]);
    t.ctx.db.transaction(() => recountDealKeyGrams(t.ctx.db))();
    countsAgree();
    // Back to version 12: no table, no triggers; deals written there; then migrated.
    const db = t.ctx.db;
    foldAll(db);
    db.transaction(() => {
      // What 14 and 16 on made out; version 15's pending rows (folded above) and triggers out, version 12's gram triggers back.
      undoMigrationsAfter(db, 12);
      for (const tr of ["deal_search_pending_insert", "deal_search_pending_delete", "deal_search_pending_update"]) db.run(`DROP TRIGGER ${tr}`);
      db.run("DROP TABLE deal_search_pending");
      db.exec(migration12.slice(migration12.indexOf("CREATE TRIGGER deal_grams_insert")));
      db.run("DROP TABLE deal_key_grams");
      db.run("PRAGMA user_version = 12");
      // The session check of every request reads what 20 and 21 made: back for the writes below.
      redoForRequests(db);
    })();
    const acc = await org.account("Version Twelve Ltd");
    const d = await org.deal({ title: "Old wqk deal", account_id: acc.id, stage: "new" });
    await org.ok("PATCH", `/deals/${d.id}`, { title: "Older wqk deal" });
    const statOf = (idx: string) => db.query("SELECT stat FROM sqlite_stat1 WHERE idx = ?1").get(idx) as { stat: string } | null;
    expect(statOf("deals_by_created")).not.toBeNull();
    undoAfterRequests(db);
    expect(migrate(db)).toMatchObject({ from: 12, to: MIGRATIONS[MIGRATIONS.length - 1]!.version });
    countsAgree();
    // The rebuilt order indexes have statistics again, like the others (the seed analyzed the deals).
    for (const idx of ["deals_by_title", "deals_by_value", "deals_by_contact_asc", "deals_by_assignee_asc"]) expect({ idx, stat: statOf(idx)?.stat.split(" ").length }).toEqual({ idx, stat: 7 - (idx.endsWith("title") || idx.endsWith("value") ? 1 : 0) });
    await org.ok("PATCH", `/deals/${d.id}`, { title: "Newer wqk deal" });
    countsAgree();
  }, 30_000);

  test("the tally equals a plain count on many distinct grams and buckets (its table grows), astral characters and short keys", () => {
    const r = randomSource("key-tally");
    const letters = [..."abcdefghijklmnopqrstuvwxyzäöüß0123456789 -.,'🦊😀\n"];
    const word = (n: number) => Array.from({ length: n }, () => r.pick(letters.filter((c) => c !== "\n"))).join("");
    const tally = new KeyGramTally();
    const rows: KeyRow[] = [];
    for (let i = 0; i < 4000; i++) {
      const row = { title_key: word(1 + r.int(9)), account_key: word(1 + r.int(9)), contact_key: r.int(3) === 0 ? null : word(2 + r.int(8)), search_text: Array.from({ length: 5 + r.int(40) }, () => r.pick(letters)).join("") };
      rows.push(row);
      tally.add(row.search_text, row.title_key, row.account_key, row.contact_key);
    }
    expect(tally.rows()).toBeGreaterThan(49_152);
    const db = new Database(":memory:");
    db.run("CREATE TABLE deal_key_grams (tenant_id TEXT, ord TEXT, gram TEXT, bucket TEXT, n INTEGER, PRIMARY KEY (tenant_id, ord, gram, bucket))");
    tally.write(db as never, "t1");
    const got = (db.query("SELECT ord, bucket, gram, n FROM deal_key_grams").all() as Array<Record<string, string | number>>).map((x) => `${x.ord}|${x.bucket}|${x.gram}|${x.n}`);
    db.close();
    expect(got.sort()).toEqual(expectedCounts(rows));
  }, 30_000);

  test("a bucket's key range holds exactly the keys of that bucket", () => {
    expect(bucketOf("managed services")).toBe("manage");
    expect(bucketOf("a🦊bcdefg")).toBe("a🦊bcde");
    expect(keyAfter("manage")).toBe("managf");
    expect(keyAfter("ab\u{10ffff}")).toBe("ac");
    expect(keyAfter("a\ud7ff")).toBe("a\ue000");
    expect(keyAfter("\u{10ffff}")).toBeNull();
    const keys = ["ab", "ab\u0000x", "abc", "abcdef", "abcdefg", "abcdeg", "abcdf", "abd", "a🦊bcdefg", "a🦊bcdezz", "a🦊bcdf"];
    for (const k of keys) {
      const [lo, hi] = bucketRange(bucketOf(k));
      const inRange = keys.filter((x) => Buffer.compare(Buffer.from(x), Buffer.from(lo)) >= 0 && (hi === null || Buffer.compare(Buffer.from(x), Buffer.from(hi)) < 0));
      expect({ k, inRange }).toEqual({ k, inRange: keys.filter((x) => bucketOf(x) === bucketOf(k)) });
    }
  });
});

describe("terms clustered along a text order page exactly", () => {
  test("each text sort both ways, every filter, several pages: bucket walk, default plan, small budget and sort agree with the reference", async () => {
    const deals = dealsOf(t.ctx.db, tenantId);
    const users = [...new Set(deals.map((d) => d.assigned_to).filter((a) => a !== null))].sort() as string[];
    const strategies = {
      default: createSqliteDealsQuery(t.ctx.db),
      buckets: createSqliteDealsQuery(t.ctx.db, forcedSqlitePlan("bucket walk")),
      smallBudget: createSqliteDealsQuery(t.ctx.db, costPlan({ walkBudget: 40 })),
      sort: createSqliteDealsQuery(t.ctx.db, forcedSqlitePlan("sort")),
    };
    const r = randomSource("clustered");
    let nonEmpty = 0;
    let checked = 0;
    for (const search of ["wqk", "vjx", "yfz", "Ion", "zzq"])
      for (const sortBy of ["title", "account_name", "contact_name"] as SortField[])
        for (const sortDir of ["asc", "desc"] as const)
          for (const stages of [null, ["new"], ["won", "lost"]])
            for (const assignee of [null, "", users[0]!]) {
              const q: DealListQuery = { page: r.pick([1, 1, 2, 4]), size: r.pick([5, 20]), search, stages, assignee, sortBy, sortDir };
              const want = referencePage(deals, q);
              if (want.seqs.length > 0) nonEmpty++;
              for (const [name, s] of Object.entries(strategies)) {
                expect({ name, q, got: await s.list(tenantId, q) }).toEqual({ name, q, got: want });
                checked++;
              }
            }
    expect(checked).toBe(5 * 3 * 2 * 3 * 3 * 4);
    expect(nonEmpty).toBeGreaterThan(100);
  }, 60_000);

  test("the last page of a clustered term and a page past the end", async () => {
    const deals = dealsOf(t.ctx.db, tenantId);
    const query = createSqliteDealsQuery(t.ctx.db, forcedSqlitePlan("bucket walk"));
    for (const sortBy of ["title", "account_name", "contact_name"] as SortField[])
      for (const sortDir of ["asc", "desc"] as const)
        for (const search of ["wqk", "yfz"]) {
          const total = referencePage(deals, { page: 1, size: 20, search, stages: null, assignee: null, sortBy, sortDir }).total;
          for (const page of [Math.ceil(total / 20), Math.ceil(total / 20) + 1]) {
            const q: DealListQuery = { page, size: 20, search, stages: null, assignee: null, sortBy, sortDir };
            expect({ q, got: await query.list(tenantId, q) }).toEqual({ q, got: referencePage(deals, q) });
          }
        }
  });
});
