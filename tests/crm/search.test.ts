import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createSqliteDealsQuery as createDealsQuery } from "../../src/stores/sqlite/deals-query";
import { costPlan } from "../../src/stores/sqlite/deals-plan";
import { forcedSqlitePlan } from "../support/deals-strategies";
import type { DealListQuery } from "../../src/crm/model";
import { testApp } from "../helpers";
import { ON_POSTGRES } from "../support/backend";
import { type CrmOrg, type Deal, addUser, crmOrg, items422 } from "./support";

const t = testApp();
let org: CrmOrg;
let other: CrmOrg;
const by: Record<string, Deal> = {};
let acme: { id: string };
let jane: { id: string };
let kim: string;

beforeAll(async () => {
  org = await crmOrg(t, "searchorg");
  other = await crmOrg(t, "searchother");
  kim = await addUser(t, org.tenant.id, "kim@searchorg.test", "Kim Park");
  acme = await org.account("Acme Holdings");
  const globex = await org.account("Globex Ünited");
  jane = await org.contact("Jane", "Doe-Smith", { account_id: acme.id });
  const sven = await org.contact("Sven", "Ørsted");
  by.title = await org.deal({ title: "Quarterly RENEWAL", account_id: globex.id, stage: "won", value: "500", assigned_to: kim });
  by.notes = await org.deal({ title: "Plain", account_id: globex.id, notes: "Customer wants a Fjord cruise", value: "20" });
  by.account = await org.deal({ title: "Second", account_id: acme.id, stage: "won", value: "700" });
  by.contact = await org.deal({ title: "Third", account_id: globex.id, contact_id: sven.id, value: "30", assigned_to: kim });
  by.syntax = await org.deal({ title: 'Deal "quoted" (x) OR *star* NEAR: ^a-b', account_id: globex.id, value: "40" });
  by.under = await org.deal({ title: "a_b 100% sure", account_id: globex.id, contact_id: jane.id, value: "50" });
  await other.deal({ title: "Quarterly renewal elsewhere", account_id: (await other.account("Acme Holdings")).id });
});
afterAll(() => t.close());

const titles = (page: { items: Deal[] }) => page.items.map((d) => d.title).sort();
const search = (term: string, extra = "") => org.list(`search=${encodeURIComponent(term)}${extra}`);

describe("search", () => {
  test("matches title, notes, account name and contact name, case-insensitively, as a substring", async () => {
    expect(titles(await search("renewal"))).toEqual(["Quarterly RENEWAL"]);
    expect(titles(await search("FJORD CRU"))).toEqual(["Plain"]);
    expect(titles(await search("cme hold"))).toEqual(["Second"]); // the deal's account, not its contact's
    expect(titles(await search("doe-SMITH"))).toEqual(["a_b 100% sure"]);
    expect((await search("renewal")).total).toBe(1); // the other tenant's renewal is not counted
  });

  test("non-ASCII text matches in any case", async () => {
    expect(titles(await search("ørsted"))).toEqual(["Third"]);
    expect(titles(await search("ØRSTED"))).toEqual(["Third"]);
    expect(titles(await search("ünited")).length).toBe(5);
    expect(titles(await search("ÜNI")).length).toBe(5);
  });

  test("one and two character terms still match", async () => {
    expect(titles(await search("_"))).toEqual(["a_b 100% sure"]);
    expect(titles(await search("%"))).toEqual(["a_b 100% sure"]);
    expect(titles(await search("ø"))).toEqual(["Third"]);
    expect(titles(await search("Ø"))).toEqual(["Third"]);
    expect((await search("*s")).total).toBe(1);
    expect((await search("zz")).total).toBe(0);
  });

  test("FTS syntax in a term is literal text, never an error", async () => {
    for (const term of ['"', '"quoted"', "(x)", "OR", "*star*", "NEAR:", "^a-b", 'a" OR "b', "AND NOT", "(", ")", "-", "\\", "'", "{x}", ":"]) {
      const r = await org.call("GET", `/deals?search=${encodeURIComponent(term)}`);
      expect(r.status).toBe(200);
    }
    expect(titles(await search('"quoted" (x) OR *star*'))).toEqual(['Deal "quoted" (x) OR *star* NEAR: ^a-b']);
    expect((await search('a" OR "b')).total).toBe(0);
    expect(titles(await search("100% s"))).toEqual(["a_b 100% sure"]);
  });

  test("the term is trimmed; blank means no search; over 200 characters is 422", async () => {
    expect(titles(await search("   renewal  "))).toEqual(["Quarterly RENEWAL"]);
    expect((await search("   ")).total).toBe(6);
    expect((await search("x".repeat(200))).total).toBe(0);
    const r = await org.call("GET", `/deals?search=${"x".repeat(201)}`);
    expect(r.status).toBe(422);
    expect(items422(r.body)).toEqual([{ loc: ["query", "search"], type: "string_too_long", ctx: { max_length: 200 } }]);
  });

  test("search combines with stage, assignee and sort", async () => {
    const p = await search("globex", "&stage=won&stage=new&sort_by=value&sort_dir=desc");
    expect(p.items.map((d: Deal) => d.title)).toEqual(["Quarterly RENEWAL", "a_b 100% sure", 'Deal "quoted" (x) OR *star* NEAR: ^a-b', "Third", "Plain"]);
    expect(p.total).toBe(5);
    expect((await search("globex", "&stage=won")).total).toBe(1);
    expect(titles(await search("globex", `&assigned_to=${kim}`))).toEqual(["Quarterly RENEWAL", "Third"]);
    expect(titles(await search("gl", "&unassigned=true&size=2"))).toHaveLength(2);
    expect((await search("gl", "&unassigned=true")).total).toBe(3);
  });

  test("renames show at once in search and in every deal", async () => {
    await org.ok("PATCH", `/accounts/${acme.id}`, { name: "Initech Partners" });
    expect((await search("acme")).total).toBe(0);
    const found = await search("initech");
    expect(titles(found)).toEqual(["Second"]);
    expect(found.items.every((d: Deal) => d.account_name === "Initech Partners")).toBe(true);
    await org.ok("PATCH", `/contacts/${jane.id}`, { last_name: "Roe" });
    expect((await search("doe-smith")).total).toBe(0);
    const roe = await search("jane roe");
    expect(roe.items.map((d: Deal) => d.contact_name)).toEqual(["Jane Roe"]);
  });
});

// SQLite's own search strategies (FTS5 token counts, walks, sorts) checked against each other; the
// PostgreSQL deal list's strategies have their own store tests (tests/stores).
describe.skipIf(ON_POSTGRES)("both search strategies agree", () => {
  const make = (o?: Parameters<typeof createDealsQuery>[1]) => (ON_POSTGRES ? (null as never) : createDealsQuery(t.ctx.db, o));
  // rare: 1 makes every term "common": counts come from the index with stage tokens, pages from walking the order.
  const common = make(costPlan({ rare: 1 }));
  const rare = make();
  // A rare term's page either from sorting its looked-up matches or from walking the order's index.
  const sorted = make(forcedSqlitePlan("sort"));
  const walked = make(forcedSqlitePlan("index walk"));
  const base: DealListQuery = { page: 1, size: 2, search: null, stages: null, assignee: null, sortBy: "created_at", sortDir: "desc" };
  const cases: Array<Partial<DealListQuery>> = [
    { search: "globex" },
    { search: "globex", page: 2 },
    { search: "globex", page: 3 },
    { search: "globex", stages: ["won"] },
    { search: "globex", stages: ["new", "won"], sortBy: "value", sortDir: "asc" },
    { search: "globex", assignee: "" },
    { search: "quarterly", stages: ["won"] },
    { search: "nothing here" },
    { search: "globex", stages: ["new"], sortBy: "title", sortDir: "desc", size: 100 },
    { search: "globex", stages: ["new", "won"], assignee: "", sortBy: "probability", sortDir: "desc" },
    { search: "globex", sortBy: "close_date", sortDir: "asc", page: 2 },
    { search: "globex", sortBy: "contact_name", sortDir: "desc", size: 3 },
    { search: "globex", sortBy: "assignee_name", sortDir: "asc", page: 9 },
  ];
  for (const c of cases) {
    test(JSON.stringify(c), async () => {
      const q = { ...base, ...c };
      const a = await common.list(org.tenant.id, q);
      const b = await rare.list(org.tenant.id, q);
      expect(a).toEqual(b);
      expect(await sorted.list(org.tenant.id, q)).toEqual(b);
      expect(await walked.list(org.tenant.id, q)).toEqual(b);
      if (c.search === "globex" && !c.stages && c.assignee === undefined) expect(a.total).toBe(5);
    });
  }

  test("assignee filter with a common term", async () => {
    const q = { ...base, search: "globex", assignee: kim, size: 10 };
    const a = await common.list(org.tenant.id, q);
    expect(a).toEqual(await rare.list(org.tenant.id, q));
    expect(a).toEqual(await walked.list(org.tenant.id, q));
    expect(a).toEqual(await sorted.list(org.tenant.id, q));
    expect(a.total).toBe(2);
    const withStage = { ...q, stages: ["won"] };
    const w = await common.list(org.tenant.id, withStage);
    expect(w).toEqual(await rare.list(org.tenant.id, withStage));
    expect(w.total).toBe(1);
  });
});
