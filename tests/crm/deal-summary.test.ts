// GET /api/v1/crm/deals/summary: the board's counts and exact sums per currency, by stage or
// assignee, within the deal list's filters and search; compared with a reference computed here
// from the deals themselves, for many filter shapes (both backends: the file runs on each).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { DEFAULT_STAGES, searchTextOf } from "../../src/crm/model";
import { testApp } from "../helpers";
import { type CrmOrg, type Deal, addUser, crmOrg, items422 } from "./support";

const t = testApp();
let org: CrmOrg;
let other: CrmOrg;
let deals: Deal[] = [];
let people: string[] = [];
const names = new Map<string, string>();
const texts = new Map<string, string>();

const CURRENCIES = ["USD", "EUR", "JPY"];
// Big enough that a few of them pass 2^53 cents together: a float sum would be off.
const VALUES = ["9999999999999.99", "0", "0.01", "1234.5", "7", "8888888888888.88", "19.99"];

beforeAll(async () => {
  org = await crmOrg(t, "summaryorg");
  other = await crmOrg(t, "summaryother");
  const zoe = await addUser(t, org.tenant.id, "zoe@summaryorg.test", "Zoë Zimmer");
  const nameless = await addUser(t, org.tenant.id, "nn@summaryorg.test", null);
  people = [org.user.id, zoe, nameless];
  names.set(org.user.id, org.user.full_name ?? org.user.email).set(zoe, "Zoë Zimmer").set(nameless, "nn@summaryorg.test");
  await org.ok("POST", "/pipeline-stages", { key: "empty", name: "Never used", position: 2 });
  const accounts = [await org.account("Acme Holdings"), await org.account("Émile & fils")];
  const stages = DEFAULT_STAGES.map((s) => s.key);
  for (let i = 0; i < 42; i++) {
    const account = accounts[i % 2]!;
    const d = await org.deal({
      title: `${["Renewal", "Expansion", "Pilot", "100% deal"][i % 4]} ${i}`,
      account_id: account.id,
      value: VALUES[i % VALUES.length],
      currency: CURRENCIES[i % 3],
      stage: stages[(i * 5) % stages.length],
      assigned_to: i % 4 === 3 ? null : people[i % 3],
      notes: i % 5 === 0 ? "Call about the quota" : null,
    });
    deals.push(d);
    texts.set(d.id, searchTextOf(d.title, d.notes, account.name, null, ""));
  }
  // Ten of the largest value in one stage and currency: 10^16 cents, past 2^53.
  for (let i = 0; i < 10; i++) {
    const d = await org.deal({ title: `Whale ${i}`, account_id: accounts[0]!.id, value: "9999999999999.99", currency: "USD", stage: "lost", assigned_to: zoe });
    deals.push(d);
    texts.set(d.id, searchTextOf(d.title, null, accounts[0]!.name, null, ""));
  }
  await other.deal({ title: "Renewal elsewhere", account_id: (await other.account("Acme Holdings")).id, value: "5", stage: "new" });
});
afterAll(() => t.close());

interface Shape {
  search?: string;
  stages?: string[];
  assignee?: string | null | "none";
  mine?: boolean;
  groupBy?: "stage" | "assigned_to";
}

/** The summary computed here: exact sums with BigInt, groups as the endpoint documents them. */
function reference(s: Shape, stageOrder: Array<{ key: string; name: string }>) {
  const term = s.search?.toLowerCase();
  const wantedAssignee = s.mine ? org.user.id : s.assignee === "none" ? null : s.assignee;
  const found = deals.filter(
    (d) =>
      (term === undefined || texts.get(d.id)!.includes(term)) &&
      (s.stages === undefined || s.stages.includes(d.stage)) &&
      (wantedAssignee === undefined ? true : d.assigned_to === wantedAssignee),
  );
  const groupOf = (key: string | null, label: string) => {
    const own = found.filter((d) => (s.groupBy === "assigned_to" ? d.assigned_to : d.stage) === key);
    const sums = new Map<string, bigint>();
    for (const d of own) sums.set(d.currency, (sums.get(d.currency) ?? 0n) + BigInt(d.value.replace(".", "")));
    const values = [...sums.keys()].sort().map((c) => ({ currency: c, sum: `${sums.get(c)! / 100n}.${String(sums.get(c)! % 100n).padStart(2, "0")}` }));
    return { key, label, count: own.length, values };
  };
  if (s.groupBy !== "assigned_to") return { groups: stageOrder.map((st) => groupOf(st.key, st.name)), total: found.length };
  const keys = [...new Set(found.map((d) => d.assigned_to).filter((a): a is string => a !== null))];
  const groups = keys.map((k) => groupOf(k, names.get(k)!)).sort((a, b) => a.label.localeCompare(b.label));
  return { groups: [...groups, groupOf(null, "Unassigned")], total: found.length };
}

const queryOf = (s: Shape): string => {
  const p = new URLSearchParams();
  if (s.search !== undefined) p.set("search", s.search);
  for (const st of s.stages ?? []) p.append("stage", st);
  if (s.assignee === "none") p.set("unassigned", "true");
  else if (s.assignee) p.set("assigned_to", s.assignee);
  if (s.mine) p.set("mine", "true");
  if (s.groupBy) p.set("group_by", s.groupBy);
  return p.toString();
};

describe("exact counts and sums against a reference", () => {
  const searches = [undefined, "a", "re", "ren", "renewal", "100%", "%", "émile", "QUOTA", "acme holdings", "nothing-like-this"];
  const stageSets = [undefined, ["new"], ["won", "lost"], ["qualified", "proposal", "negotiation", "empty"], ["nosuchstage"]];
  const shapes: Shape[] = [];
  let k = 0;
  for (const search of searches)
    for (const stages of stageSets) {
      k++;
      const assignee = [undefined, "none", "p0", "p1", "mine"][k % 5]!;
      shapes.push({ search, stages, groupBy: k % 2 ? "stage" : "assigned_to", ...(assignee === "mine" ? { mine: true } : assignee === "p0" || assignee === "p1" ? { assignee } : { assignee: assignee as Shape["assignee"] }) });
    }
  test(`${shapes.length} shapes: filters × searches × group_by`, async () => {
    const stageOrder = (await org.ok("GET", "/pipeline-stages")) as Array<{ key: string; name: string }>;
    expect(stageOrder.map((s) => s.key)).toEqual(["new", "qualified", "empty", "proposal", "negotiation", "won", "lost"]);
    for (const raw of shapes) {
      const s = { ...raw, assignee: raw.assignee === "p0" ? people[0] : raw.assignee === "p1" ? people[1] : raw.assignee };
      const got = await org.ok("GET", `/deals/summary?${queryOf(s)}`);
      expect({ shape: queryOf(s), ...got }).toEqual({ shape: queryOf(s), ...reference(s, stageOrder) });
      // The same filters give the list's total.
      const listed = await org.ok("GET", `/deals?size=1&${queryOf({ ...s, groupBy: undefined })}`);
      expect(got.total).toBe(listed.total);
    }
  });

  test("sums past 2^53 cents are exact, and every kind of deal write changes the columns at once", async () => {
    const all = await org.ok("GET", "/deals/summary");
    const lostUsd = all.groups.find((g: any) => g.key === "lost").values.find((v: any) => v.currency === "USD");
    expect(BigInt(lostUsd.sum.replace(".", ""))).toBeGreaterThan(2n ** 53n);
    const moved = deals.find((d) => d.stage === "new")!;
    const after = await org.ok("PATCH", `/deals/${moved.id}`, { stage: "won" });
    deals = deals.map((d) => (d.id === moved.id ? after : d));
    // A value, a currency and an assignee changed, and a deal deleted: the counters follow each.
    const [a, b, c] = deals.filter((d) => d.stage !== "lost");
    const changed = [
      await org.ok("PATCH", `/deals/${a!.id}`, { value: "4321.09" }),
      await org.ok("PATCH", `/deals/${b!.id}`, { currency: "CHF", assigned_to: null }),
    ];
    await org.ok("DELETE", `/deals/${c!.id}`, undefined, 204);
    deals = deals.filter((d) => d.id !== c!.id).map((d) => changed.find((x) => x.id === d.id) ?? d);
    const stageOrder = await org.ok("GET", "/pipeline-stages");
    expect(await org.ok("GET", "/deals/summary")).toEqual(reference({}, stageOrder));
    expect(await org.ok("GET", "/deals/summary?search=re")).toEqual(reference({ search: "re" }, stageOrder));
    expect(await org.ok("GET", "/deals/summary?group_by=assigned_to")).toEqual(reference({ groupBy: "assigned_to" }, stageOrder));
  });
});

describe("answers", () => {
  test("stage is the default grouping; every stage in pipeline order, empty ones with count 0", async () => {
    const got = await org.ok("GET", "/deals/summary");
    expect(got.groups.map((g: any) => g.key)).toEqual(["new", "qualified", "empty", "proposal", "negotiation", "won", "lost"]);
    expect(got.groups.find((g: any) => g.key === "empty")).toEqual({ key: "empty", label: "Never used", count: 0, values: [] });
    expect(got.total).toBe(deals.length);
  });

  test("by assignee: one group per assignee with deals, by name, then the unassigned", async () => {
    const got = await org.ok("GET", "/deals/summary?group_by=assigned_to");
    expect(got.groups.at(-1)).toMatchObject({ key: null, label: "Unassigned" });
    expect(got.groups.map((g: any) => g.label)).toContain("nn@summaryorg.test");
  });

  test("another organization's deals are never counted", async () => {
    const got = await other.ok("GET", "/deals/summary");
    expect(got.total).toBe(1);
    expect(got.groups.find((g: any) => g.key === "new")).toEqual({ key: "new", label: "New", count: 1, values: [{ currency: "USD", sum: "5.00" }] });
    const searched = await other.ok("GET", "/deals/summary?search=expansion&group_by=assigned_to");
    expect(searched).toEqual({ groups: [{ key: null, label: "Unassigned", count: 0, values: [] }], total: 0 });
    expect((await other.ok("GET", `/deals/summary?assigned_to=${people[1]}`)).total).toBe(0);
  });

  test("422: an unknown group_by, and the list's own parameter rules", async () => {
    const bad = await org.call("GET", "/deals/summary?group_by=account");
    expect(bad.status).toBe(422);
    expect(items422(bad.body)).toEqual([{ loc: ["query", "group_by"], type: "literal_error", ctx: { expected: "'stage' or 'assigned_to'" } }]);
    const both = await org.call("GET", "/deals/summary?mine=true&unassigned=true");
    expect(both.status).toBe(422);
    expect((await org.call("GET", `/deals/summary?search=${"x".repeat(201)}`)).status).toBe(422);
  });

  test("401 without a token", async () => {
    const r = await t.json("GET", "/api/v1/crm/deals/summary", {});
    expect(r.status).toBe(401);
  });
});
