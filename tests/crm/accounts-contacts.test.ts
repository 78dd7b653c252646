import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { addMember, login } from "../auth/support";
import { testApp } from "../helpers";
import { type CrmOrg, type Deal, crmOrg, items422 } from "./support";

const t = testApp();
let org: CrmOrg;
let other: CrmOrg;

beforeAll(async () => {
  org = await crmOrg(t, "acctorg");
  other = await crmOrg(t, "acctother");
});
afterAll(() => t.close());

describe("pipeline stages", () => {
  test("signup seeds new, qualified, proposal, negotiation, won, lost, in order", async () => {
    const stages = await org.ok("GET", "/pipeline-stages");
    expect(stages.map((s: { key: string }) => s.key)).toEqual(["new", "qualified", "proposal", "negotiation", "won", "lost"]);
    expect(stages[4]).toMatchObject({ key: "won", name: "Won", color: "#22c55e", position: 4, probability: 100, is_won: true, is_lost: false });
    expect(stages[5]).toMatchObject({ is_won: false, is_lost: true });
    for (const s of stages) expect(Object.keys(s).sort()).toEqual(["color", "created_at", "id", "is_lost", "is_won", "key", "name", "position", "probability", "tenant_id"]);
  });

  test("an admin adds a stage; deals may then use its key; its data shows on them", async () => {
    const s = await org.ok("POST", "/pipeline-stages", { key: "on-hold", name: "On hold", color: "#AABBCC", probability: 5 });
    expect(s).toMatchObject({ key: "on-hold", name: "On hold", color: "#aabbcc", position: 6, probability: 5, is_won: false, is_lost: false });
    const acc = await org.account("Staged");
    const d = await org.deal({ title: "held", account_id: acc.id, stage: "on-hold" });
    expect(d).toMatchObject({ stage: "on-hold", pipeline_stage_id: s.id, pipeline_stage_name: "On hold", pipeline_stage_color: "#aabbcc" });
    expect((await org.list("stage=on-hold")).total).toBe(1);
    // Another tenant does not have it.
    const r = await other.call("POST", "/deals", { title: "x", account_id: (await other.account("O")).id, stage: "on-hold" });
    expect(r.status).toBe(422);
  });

  test("a taken key is 409; bad fields are 422 with their loc", async () => {
    const dup = await org.call("POST", "/pipeline-stages", { key: "won", name: "Again" });
    expect(dup.status).toBe(409);
    expect(dup.body.code).toBe("stage_exists");
    const bad = await org.call("POST", "/pipeline-stages", { key: "Bad Key", name: "", color: "red", probability: 101 });
    expect(items422(bad.body).map((i) => [i.loc[1], i.type])).toEqual([
      ["key", "string_pattern_mismatch"],
      ["name", "string_too_short"],
      ["color", "string_pattern_mismatch"],
      ["probability", "less_than_equal"],
    ]);
    const both = await org.call("POST", "/pipeline-stages", { key: "odd", name: "Odd", is_won: true, is_lost: true });
    expect(both.status).toBe(422);
    expect(both.body.detail[0].loc).toEqual(["body", "is_lost"]);
  });

  test("members read the pipeline but do not change it", async () => {
    const m = await addMember(t, org.tenant.id, "member@acctorg.test", "member password 1");
    const tokens = (await login(t, m.email, m.password, { "x-tenant": "acctorg" })).body;
    const r = await t.json("POST", "/api/v1/crm/pipeline-stages", { token: tokens.access_token, body: { key: "x", name: "X" } });
    expect(r.status).toBe(403);
    expect(r.body.code).toBe("forbidden");
    expect((await t.json("GET", "/api/v1/crm/pipeline-stages", { token: tokens.access_token })).status).toBe(200);
    // Members work with deals.
    const acc = await org.account("For member");
    const made = await t.json("POST", "/api/v1/crm/deals", { token: tokens.access_token, body: { title: "member deal", account_id: acc.id } });
    expect(made.status).toBe(201);
    expect((await t.json("GET", "/api/v1/crm/deals?mine=true", { token: tokens.access_token })).body.total).toBe(0);
  });
});

describe("accounts", () => {
  test("create, read, patch, list with paging and search, delete", async () => {
    const team = await crmOrg(t, "acctcrud");
    const a = await team.ok("POST", "/accounts", { name: " Umbrella ", domain: "umbrella.example", industry: "Pharma", tenant_id: other.tenant.id });
    expect(a).toMatchObject({ name: "Umbrella", domain: "umbrella.example", industry: "Pharma", tenant_id: team.tenant.id });
    expect(Object.keys(a).sort()).toEqual(["created_at", "domain", "id", "industry", "name", "tenant_id", "updated_at"]);
    expect(await team.ok("GET", `/accounts/${a.id}`)).toEqual(a);
    const p = await team.ok("PATCH", `/accounts/${a.id}`, { industry: null });
    expect(p).toMatchObject({ name: "Umbrella", industry: null, domain: "umbrella.example" });
    for (let i = 0; i < 4; i++) await team.account(`Filler ${i}`);
    const page = await team.ok("GET", "/accounts?size=2&page=3");
    expect(page).toMatchObject({ total: 5, page: 3, size: 2, pages: 3 });
    expect(page.items).toHaveLength(1);
    expect((await team.ok("GET", "/accounts?search=UMBREL")).items.map((x: { id: string }) => x.id)).toEqual([a.id]);
    expect((await team.ok("GET", "/accounts?search=filler")).total).toBe(4);
    expect((await team.ok("GET", "/accounts?search=%25")).total).toBe(0);
    const bad = await team.call("GET", "/accounts?size=101&page=0");
    expect(items422(bad.body).map((i) => i.loc[1])).toEqual(["page", "size"]);
    expect((await team.call("DELETE", `/accounts/${a.id}`)).status).toBe(204);
    expect((await team.call("GET", `/accounts/${a.id}`)).status).toBe(404);
  });

  test("an account with deals cannot be deleted (409); another tenant's account is 404", async () => {
    const a = await org.account("Busy");
    await org.deal({ title: "keeps it", account_id: a.id });
    const r = await org.call("DELETE", `/accounts/${a.id}`);
    expect(r.status).toBe(409);
    expect(r.body.code).toBe("account_has_deals");
    for (const [m, body] of [["GET", undefined], ["PATCH", { name: "x" }], ["DELETE", undefined]] as const) {
      expect((await other.call(m, `/accounts/${a.id}`, body)).status).toBe(404);
    }
    expect((await other.ok("GET", "/accounts")).items.every((x: { tenant_id: string }) => x.tenant_id === other.tenant.id)).toBe(true);
  });

  test("validation", async () => {
    const r = await org.call("POST", "/accounts", { name: "", domain: 5 });
    expect(items422(r.body).map((i) => [i.loc[1], i.type])).toEqual([
      ["name", "string_too_short"],
      ["domain", "string_type"],
    ]);
    expect((await org.call("PATCH", "/accounts/x", { name: null })).status).toBe(422);
  });
});

describe("contacts", () => {
  test("create, read, patch, list, search by name or email", async () => {
    const team = await crmOrg(t, "contactcrud");
    const acc = await team.account("Initech");
    const c = await team.ok("POST", "/contacts", { first_name: "Peter", last_name: "Gibbons", email: " Peter@Initech.Example ", phone: "+1 555", account_id: acc.id });
    expect(c).toMatchObject({ first_name: "Peter", last_name: "Gibbons", name: "Peter Gibbons", email: "peter@initech.example", phone: "+1 555", account_id: acc.id });
    expect(await team.ok("GET", `/contacts/${c.id}`)).toEqual(c);
    await team.contact("Milton", null);
    expect((await team.ok("GET", "/contacts?search=gibb")).items.map((x: { id: string }) => x.id)).toEqual([c.id]);
    expect((await team.ok("GET", "/contacts?search=peter gib")).total).toBe(1);
    expect((await team.ok("GET", "/contacts?search=initech.example")).total).toBe(1);
    expect((await team.ok("GET", "/contacts")).total).toBe(2);
    const p = await team.ok("PATCH", `/contacts/${c.id}`, { account_id: null, phone: null });
    expect(p).toMatchObject({ account_id: null, phone: null, name: "Peter Gibbons" });
  });

  test("an unknown or another tenant's account_id is 404; another tenant's contact is 404", async () => {
    const theirs = await other.account("Theirs");
    expect((await org.call("POST", "/contacts", { first_name: "X", account_id: theirs.id })).status).toBe(404);
    expect((await org.call("POST", "/contacts", { first_name: "X", account_id: "nope" })).status).toBe(404);
    const c = await other.contact("Their", "Person");
    expect((await org.call("GET", `/contacts/${c.id}`)).status).toBe(404);
    expect((await org.call("PATCH", `/contacts/${c.id}`, { first_name: "Mine" })).status).toBe(404);
    expect((await org.call("DELETE", `/contacts/${c.id}`)).status).toBe(404);
    expect((await other.ok("GET", `/contacts/${c.id}`)).first_name).toBe("Their");
  });

  test("deleting a contact leaves its deals without a contact, and out of searches by its name", async () => {
    const team = await crmOrg(t, "contactdel");
    const acc = await team.account("Acc");
    const c = await team.contact("Samir", "Nagheenanajar");
    const d = await team.deal({ title: "with contact", account_id: acc.id, contact_id: c.id });
    expect((await team.list("search=nagheen")).total).toBe(1);
    expect((await team.call("DELETE", `/contacts/${c.id}`)).status).toBe(204);
    const after: Deal = await team.ok("GET", `/deals/${d.id}`);
    expect([after.contact_id, after.contact_name]).toEqual([null, null]);
    expect((await team.list("search=nagheen")).total).toBe(0);
    expect((await team.list("sort_by=contact_name")).items[0].id).toBe(d.id);
  });

  test("validation", async () => {
    const r = await org.call("POST", "/contacts", { last_name: "x".repeat(101) });
    expect(items422(r.body).map((i) => [i.loc[1], i.type])).toEqual([
      ["first_name", "missing"],
      ["last_name", "string_too_long"],
    ]);
  });
});
