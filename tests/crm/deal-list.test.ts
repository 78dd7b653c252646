import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SORT_FIELDS } from "../../src/crm/model";
import { clock } from "../auth/support";
import { testApp } from "../helpers";
import { type CrmOrg, type Deal, addUser, crmOrg, items422, referenceSort } from "./support";

const c = clock();
const t = testApp({ now: c.now });
let org: CrmOrg;
let other: CrmOrg;
let deals: Deal[] = [];
let zoe: string;
let bob: string;

beforeAll(async () => {
  org = await crmOrg(t, "listorg");
  other = await crmOrg(t, "otherorg");
  zoe = await addUser(t, org.tenant.id, "zoe@listorg.test", "Zoë Zimmer");
  bob = await addUser(t, org.tenant.id, "bob@listorg.test", "bob Baker");
  const nameless = await addUser(t, org.tenant.id, "nn@listorg.test", null);
  const acme = await org.account("Acme");
  const alpha = await org.account("alpha");
  const alphaUpper = await org.account("Alpha");
  const jane = await org.contact("Jane", "Doe", { account_id: acme.id });
  const ann = await org.contact("ann", null);
  const specs: Array<Record<string, unknown>> = [
    { title: "Zeta", account_id: acme.id, value: "9.00", stage: "won", probability: 90, close_date: "2030-03-01", assigned_to: zoe, contact_id: jane.id },
    { title: "alpha", account_id: alpha.id, value: "10.00", stage: "new", probability: null, close_date: null, assigned_to: bob },
    { title: "Alpha", account_id: alphaUpper.id, value: 10, stage: "lost", probability: 10, close_date: "2030-01-15", contact_id: ann.id },
    { title: "beta", account_id: acme.id, value: "1000000.5", stage: "qualified", probability: 50, close_date: "2030-01-15", assigned_to: nameless },
    { title: "Émile deal", account_id: alpha.id, value: "0", stage: "proposal", contact_id: jane.id, assigned_to: org.user.id },
    { title: "gamma", account_id: acme.id, value: "99.99", stage: "negotiation", probability: 10, assigned_to: zoe },
    { title: "Beta", account_id: alpha.id, value: "9.5", stage: "won", close_date: "2029-12-31", contact_id: ann.id },
    { title: "delta", account_id: acme.id, stage: "new", probability: 0, assigned_to: bob },
  ];
  for (const [i, s] of specs.entries()) {
    if (i % 3 === 0) c.advance(1000); // some created_at ties, broken by id
    deals.push(await org.deal(s));
  }
  // A later update moves updated_at on some deals only.
  c.advance(5000);
  const changed = await org.ok("PATCH", `/deals/${deals[2]!.id}`, { notes: "touched" });
  deals[2] = changed;
  await other.deal({ title: "Other tenant deal", account_id: (await other.account("Acme")).id });
});
afterAll(() => t.close());

const ids = (page: { items: Deal[] }) => page.items.map((d) => d.id);

describe("sorting", () => {
  for (const field of SORT_FIELDS) {
    for (const dir of ["asc", "desc"] as const) {
      test(`sort_by=${field}&sort_dir=${dir}: key, nulls last, ties by id`, async () => {
        const page = await org.list(`sort_by=${field}&sort_dir=${dir}&size=100`);
        expect(page.total).toBe(deals.length);
        expect(ids(page)).toEqual(referenceSort(deals, field, dir));
      });
    }
  }

  test("default order is created_at desc; sort_by alone is ascending", async () => {
    expect(ids(await org.list())).toEqual(referenceSort(deals, "created_at", "desc"));
    expect(ids(await org.list("sort_by=title"))).toEqual(referenceSort(deals, "title", "asc"));
    expect(ids(await org.list("sort_dir=asc"))).toEqual(referenceSort(deals, "created_at", "asc"));
  });

  test("value sorts as a number and text case-insensitively", async () => {
    const byValue = (await org.list("sort_by=value")).items.map((d: Deal) => d.value);
    expect(byValue).toEqual(["0.00", "0.00", "9.00", "9.50", "10.00", "10.00", "99.99", "1000000.50"]);
    const byTitle = (await org.list("sort_by=title")).items.map((d: Deal) => d.title.toLowerCase());
    expect(byTitle.slice(0, 4)).toEqual(["alpha", "alpha", "beta", "beta"]);
    // Lower-cased, then by code point: "É" folds to "é", which follows every ASCII letter.
    expect(byTitle.slice(-2)).toEqual(["zeta", "émile deal"]);
  });
});

describe("paging", () => {
  test("pages = ceil(total/size); a page past the end is empty; pages cover every deal once", async () => {
    const seen: string[] = [];
    for (let p = 1; p <= 3; p++) {
      const page = await org.list(`size=3&page=${p}&sort_by=title`);
      expect(page).toMatchObject({ total: 8, page: p, size: 3, pages: 3 });
      seen.push(...ids(page));
    }
    expect(seen).toEqual(referenceSort(deals, "title", "asc"));
    const past = await org.list("size=3&page=4");
    expect(past).toMatchObject({ items: [], total: 8, page: 4, size: 3, pages: 3 });
    expect(await org.list("size=100")).toMatchObject({ total: 8, pages: 1, size: 100 });
    expect(await org.list("page=99999999999")).toMatchObject({ items: [], total: 8 });
  });

  test("an empty result has pages 0", async () => {
    expect(await org.list("search=nothing-like-this")).toEqual({ items: [], total: 0, page: 1, size: 20, pages: 0 });
  });

  test("bounds: page >= 1, 1 <= size <= 100, integers", async () => {
    const r = await org.call("GET", "/deals?page=0&size=0");
    expect(r.status).toBe(422);
    expect(items422(r.body)).toEqual([
      { loc: ["query", "page"], type: "greater_than_equal", ctx: { ge: 1 } },
      { loc: ["query", "size"], type: "greater_than_equal", ctx: { ge: 1 } },
    ]);
    const big = await org.call("GET", "/deals?size=101");
    expect(items422(big.body)).toEqual([{ loc: ["query", "size"], type: "less_than_equal", ctx: { le: 100 } }]);
    const nan = await org.call("GET", "/deals?page=two&size=1.5");
    expect(items422(nan.body).map((i) => [i.loc[1], i.type])).toEqual([
      ["page", "int_parsing"],
      ["size", "int_parsing"],
    ]);
  });
});

describe("filters", () => {
  test("stage is repeatable and any-of; an unknown stage matches nothing", async () => {
    const won = await org.list("stage=won");
    expect(won.total).toBe(2);
    expect(won.items.every((d: Deal) => d.stage === "won" && d.is_won && !d.is_lost)).toBe(true);
    const two = await org.list("stage=won&stage=lost");
    expect(two.total).toBe(3);
    expect(new Set(two.items.map((d: Deal) => d.stage))).toEqual(new Set(["won", "lost"]));
    expect((await org.list("stage=nope")).total).toBe(0);
    expect((await org.list("stage=won&stage=nope")).total).toBe(2);
  });

  test("assigned_to, unassigned and mine", async () => {
    const z = await org.list(`assigned_to=${zoe}`);
    expect(z.total).toBe(2);
    expect(z.items.every((d: Deal) => d.assigned_to === zoe && d.assignee_name === "Zoë Zimmer" && d.assignee_email === "zoe@listorg.test")).toBe(true);
    const none = await org.list("unassigned=true");
    expect(none.total).toBe(2);
    expect(none.items.every((d: Deal) => d.assigned_to === null && d.assignee_name === null)).toBe(true);
    const mine = await org.list("mine=yes");
    expect(ids(mine)).toEqual([deals[4]!.id]);
    expect((await org.list(`assigned_to=${bob}&stage=new`)).total).toBe(2);
    expect((await org.list("assigned_to=unknown-user")).total).toBe(0);
    // false flags name nobody
    expect((await org.list("unassigned=false&mine=0")).total).toBe(8);
    expect((await org.list(`assigned_to=${zoe}&mine=off`)).total).toBe(2);
  });

  test("more than one assignee filter is 422 value_error", async () => {
    for (const q of [`assigned_to=${zoe}&mine=true`, "unassigned=1&mine=1", `assigned_to=${zoe}&unassigned=on`]) {
      const r = await org.call("GET", `/deals?${q}`);
      expect(r.status).toBe(422);
      expect(r.body.detail).toHaveLength(1);
      expect(r.body.detail[0].type).toBe("value_error");
      expect(r.body.detail[0].loc[0]).toBe("query");
    }
  });

  test("booleans: true/false/1/0/yes/no/on/off in any case; anything else bool_parsing", async () => {
    for (const v of ["true", "TRUE", "1", "yes", "Yes", "on", "ON"]) expect((await org.list(`unassigned=${v}`)).total).toBe(2);
    for (const v of ["false", "False", "0", "no", "NO", "off", "Off"]) expect((await org.list(`unassigned=${v}`)).total).toBe(8);
    for (const v of ["maybe", "2", "", "tru", "y"]) {
      const r = await org.call("GET", `/deals?mine=${v}`);
      expect(r.status).toBe(422);
      expect(items422(r.body)).toEqual([{ loc: ["query", "mine"], type: "bool_parsing" }]);
    }
  });

  test("sort whitelist: unknown sort_by or sort_dir is literal_error with ctx.expected", async () => {
    const r = await org.call("GET", "/deals?sort_by=password&sort_dir=up");
    expect(r.status).toBe(422);
    const [by, dir] = r.body.detail;
    expect(by).toMatchObject({ loc: ["query", "sort_by"], type: "literal_error", input: "password" });
    expect(by.ctx.expected).toContain("'assignee_name'");
    expect(dir).toEqual({ loc: ["query", "sort_dir"], type: "literal_error", input: "up", msg: "Input should be 'asc' or 'desc'", ctx: { expected: "'asc' or 'desc'" } });
  });

  test("several bad parameters: one item each", async () => {
    const r = await org.call("GET", "/deals?page=0&size=500&sort_by=x&unassigned=maybe");
    expect(r.body.detail.map((d: { loc: unknown[] }) => d.loc[1])).toEqual(["page", "size", "sort_by", "unassigned"]);
  });
});

describe("tenancy and access", () => {
  test("another tenant's deals are never listed, counted or fetched", async () => {
    const mine = await org.list("size=100");
    expect(mine.total).toBe(8);
    expect(mine.items.every((d: Deal) => d.tenant_id === org.tenant.id)).toBe(true);
    const theirs = await other.list();
    expect(theirs.total).toBe(1);
    expect(theirs.items[0].title).toBe("Other tenant deal");
    expect((await other.list("search=zeta")).total).toBe(0);
    expect((await other.list("search=a")).total).toBe(1);
    expect((await org.call("GET", `/deals/${theirs.items[0].id}`)).status).toBe(404);
  });

  test("a token used on another tenant's host is refused", async () => {
    const r = await t.json("GET", "/api/v1/crm/deals", { token: org.token, tenant: "otherorg" });
    expect(r.status).toBe(403);
    expect(r.body.code).toBe("tenant_mismatch");
  });

  test("without credentials: 401", async () => {
    const r = await t.json("GET", "/api/v1/crm/deals");
    expect(r.status).toBe(401);
  });

  test("a tenant without the crm module gets 403 module_disabled on every CRM route", async () => {
    const bare = await crmOrg(t, "nocrm", { initial_modules: ["users"] });
    for (const [method, path, body] of [
      ["GET", "/deals?page=0", undefined],
      ["POST", "/deals", { title: "x" }],
      ["GET", "/pipeline-stages", undefined],
      ["GET", "/accounts", undefined],
      ["POST", "/contacts", {}],
    ] as const) {
      const r = await bare.call(method, path, body);
      expect(r.status).toBe(403);
      expect(r.body).toEqual({ detail: "The crm module is not enabled for this organization.", code: "module_disabled" });
    }
  });
});
