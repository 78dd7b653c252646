// Every way the deal list can answer a search, against a reference computed in the test: one- and
// two-letter terms (the narrow index), rare and common trigram terms (the trigram index), stages
// matched by a trigram of their own or by their whole key, each sort in both directions, walks
// that run out of budget and fall back to sorting. Totals must be exact and pages in the list's order (docs/interface.md#the-deal-list).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bulkSeed } from "../../src/stores/sqlite/bulk-load";
import { createSqliteDealsQuery as createDealsQuery } from "../../src/stores/sqlite/deals-query";
import { costPlan } from "../../src/stores/sqlite/deals-plan";
import { forcedSqlitePlan, threeLettersByTrigrams } from "../support/deals-strategies";
import { randomSource } from "../../src/crm/demo-data";
import { type DealListQuery, SORT_FIELDS, type SortField } from "../../src/crm/model";
import { testApp } from "../helpers";
import { type Deal, dealsOf, referencePage } from "./support";

const t = testApp();
afterAll(() => t.close());
let tenantId: string;
let deals: Deal[];
let users: string[];

beforeAll(async () => {
  const a = await t.signup("searchpaths");
  tenantId = a.tenant.id;
  bulkSeed(t.ctx.db, [{ tenantId, subdomain: "searchpaths", deals: 2500, passwordHash: await t.ctx.hasher.hash("demo password") }], t.ctx.now());
  // Stages whose keys share trigrams with the pipeline's ("newer" and "new", "negotiation"): a
  // stage must then be matched by a trigram no other stage has, or by its whole key.
  t.ctx.db.run("UPDATE deals SET stage = 'newer' WHERE tenant_id = ?1 AND seq % 13 = 0", [tenantId]);
  t.ctx.db.run("UPDATE deals SET stage = 'ne' WHERE tenant_id = ?1 AND seq % 17 = 0", [tenantId]);
  deals = dealsOf(t.ctx.db, tenantId);
  users = [...new Set(deals.map((r) => r.assigned_to).filter((u) => u !== null))].sort() as string[];
});

const reference = (q: DealListQuery) => referencePage(deals, q);

const base: DealListQuery = { page: 1, size: 20, search: null, stages: null, assignee: null, sortBy: "created_at", sortDir: "desc" };
const TERMS = ["a", "e", "q", "ü", "%", "er", "an", "zu", "q4", "ion", "ent", "pro", "renewal", "xyzzy", "ø"];
const STAGES: Array<string[] | null> = [null, ["new"], ["negotiation"], ["new", "won"], ["newer"], ["ne"], ["lost", "newer", "qualified"]];

describe("search paths agree with the reference", () => {
  const strategies = {
    default: createDealsQuery(t.ctx.db),
    // Every term with a match is "common": counts from the index with stage tokens.
    common: createDealsQuery(t.ctx.db, costPlan({ rare: 1 })),
    // Walks give up at once: every page comes from sorting the matches.
    noBudget: createDealsQuery(t.ctx.db, costPlan({ walkBudget: 1, rare: 1 })),
    // Walks start but may run out of budget (matches cluster along an order) and fall back.
    smallBudget: createDealsQuery(t.ctx.db, costPlan({ walkBudget: 60, rare: 1 })),
    smallBudgetRare: createDealsQuery(t.ctx.db, costPlan({ walkBudget: 20 })),
    walk: createDealsQuery(t.ctx.db, forcedSqlitePlan("index walk")),
    sort: createDealsQuery(t.ctx.db, forcedSqlitePlan("sort", { rare: 1 })),
    // 3-letter terms counted over the trigram index's matches, as before schema version 12.
    ftsCounted: createDealsQuery(t.ctx.db, threeLettersByTrigrams(costPlan({ rare: 1 }))),
  };

  test("each sort in both directions, with stages and assignee filters, for short, common and rare terms", async () => {
    const r = randomSource("search-paths");
    let checked = 0;
    for (let i = 0; i < 260; i++) {
      const assignees = [null, "", users[r.int(users.length)]!];
      const q: DealListQuery = {
        ...base,
        search: r.pick(TERMS),
        stages: r.pick(STAGES),
        assignee: r.pick(assignees),
        sortBy: SORT_FIELDS[i % SORT_FIELDS.length] as SortField,
        sortDir: i % 2 === 0 ? "asc" : "desc",
        page: r.pick([1, 1, 2, 7]),
        size: r.pick([5, 20]),
      };
      const want = reference(q);
      for (const [name, s] of Object.entries(strategies)) {
        const got = await s.list(tenantId, q);
        expect({ name, q, ...got }).toEqual({ name, q, ...want });
        checked++;
      }
    }
    expect(checked).toBe(260 * 8);
  });

  test("one- and two-letter terms with every filter shape count exactly", async () => {
    for (const search of ["a", "r", "q", "er", "zu", "ü"])
      for (const stages of STAGES)
        for (const assignee of [null, "", users[0]!]) {
          const q = { ...base, search, stages, assignee };
          expect((await strategies.default.list(tenantId, q)).total).toBe(reference(q).total);
        }
  });

  test("a term matching nearly every deal, sorted where matches cluster, still pages exactly", async () => {
    for (const sortBy of SORT_FIELDS)
      for (const search of ["e", "q1", "annual"]) {
        const q = { ...base, search, sortBy: sortBy as SortField, sortDir: "asc" as const, stages: ["won"], page: 3 };
        expect(await strategies.default.list(tenantId, q)).toEqual(reference(q));
      }
  });
});
