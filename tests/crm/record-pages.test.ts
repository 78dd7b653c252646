import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { testApp } from "../helpers";
import { type CrmOrg, crmOrg } from "./support";

// An account's and a contact's pages through the API: their timelines (what each write records,
// in its own transaction; paged; 404 elsewhere) and their deals (the deal list's account_id and
// contact_id filters, with the list's rules).

const t = testApp();
let org: CrmOrg;
let other: CrmOrg;

type Entry = { id: string; type: string; created_at: string; actor: { id: string; name: string } | null; data: Record<string, any> };
const timeline = (o: CrmOrg, kind: "accounts" | "contacts", id: string, query = "") => t.json("GET", `/api/v1/crm/${kind}/${id}/activities${query}`, { token: o.token });
const entries = async (kind: "accounts" | "contacts", id: string): Promise<Entry[]> => {
  const r = await timeline(org, kind, id, "?size=100");
  expect(r.status).toBe(200);
  return r.body.items;
};

beforeAll(async () => {
  org = await crmOrg(t, "recpages");
  other = await crmOrg(t, "recother");
});
afterAll(() => t.close());

describe("an account's and a contact's timeline", () => {
  test("an account: created, then each change (who, before → after), newest first; an unchanged write adds nothing", async () => {
    const a = await org.account("Initech", { domain: "initech.test" });
    let list = await entries("accounts", a.id);
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ type: "created", actor: { id: org.user.id }, data: { name: "Initech", domain: "initech.test", industry: null } });
    expect(list[0]!.actor!.name.length).toBeGreaterThan(0);
    await org.ok("PATCH", `/accounts/${a.id}`, { name: "Initech Ltd", industry: "Software" });
    await org.ok("PATCH", `/accounts/${a.id}`, { name: "Initech Ltd" });
    list = await entries("accounts", a.id);
    expect(list.map((e) => e.type)).toEqual(["updated", "created"]);
    expect(list[0]!.data.changes).toEqual([
      { field: "name", before: "Initech", after: "Initech Ltd" },
      { field: "industry", before: null, after: "Software" },
    ]);
  });

  test("a contact: its account by name with the ids; paged like the other lists; another organization's or none is a 404", async () => {
    const a1 = await org.account("Umbrella");
    const a2 = await org.account("Hooli");
    const c = await org.contact("Peter", "Gibbons", { account_id: a1.id });
    await org.ok("PATCH", `/contacts/${c.id}`, { account_id: a2.id, email: "Peter@Hooli.test" });
    const list = await entries("contacts", c.id);
    expect(list[1]).toMatchObject({ type: "created", data: { first_name: "Peter", last_name: "Gibbons", account: "Umbrella", account_id: a1.id } });
    expect(list[0]!.data.changes).toEqual([
      { field: "email", before: null, after: "peter@hooli.test" },
      { field: "account", before: "Umbrella", after: "Hooli", before_id: a1.id, after_id: a2.id },
    ]);
    const page = await timeline(org, "contacts", c.id, "?size=1&page=2");
    expect(page.body).toMatchObject({ total: 2, page: 2, size: 1, pages: 2 });
    expect(page.body.items.map((e: Entry) => e.type)).toEqual(["created"]);
    expect((await timeline(other, "contacts", c.id)).status).toBe(404);
    expect((await timeline(other, "accounts", a1.id)).status).toBe(404);
    expect((await timeline(org, "accounts", c.id)).status).toBe(404);
    expect((await timeline(org, "contacts", "no-such-contact")).status).toBe(404);
    const bad = await timeline(org, "accounts", a1.id, "?size=1000");
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(["query", "size"]);
  });
});

describe("imports write the timeline too", () => {
  const upload = (kind: string, csv: string) =>
    t.app.handle(new Request(`http://localhost/api/v1/crm/${kind}/import`, { method: "POST", headers: { authorization: `Bearer ${org.token}`, "content-type": "text/csv" }, body: csv }));
  async function imported(kind: string, csv: string) {
    const r = await upload(kind, csv);
    expect(r.status).toBe(202);
    const id = ((await r.json()) as { id: string }).id;
    for (let i = 0; i < 4000; i++) {
      const j = await t.json("GET", `/api/v1/crm/jobs/${id}`, { token: org.token });
      if (j.body.status !== "running") return { id, ...j.body };
      await Bun.sleep(5);
    }
    throw new Error("still running");
  }

  test("an account and a contact an import adds, then changes: an entry each time, by the job, with the changes", async () => {
    const added = await imported("accounts", "name,domain,external_id\nUmbrella Imports,umbrella.test,ext-umb\n");
    expect(added.status).toBe("succeeded");
    const account = (await org.ok("GET", "/accounts?search=Umbrella Imports")).items[0];
    let list = await entries("accounts", account.id);
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ type: "imported", actor: { id: org.user.id }, data: { job_id: added.id, action: "added" } });
    const changed = await imported("accounts", "name,domain,external_id\nUmbrella Imports,umbrella.example,ext-umb\n");
    list = await entries("accounts", account.id);
    expect(list.map((e) => e.type)).toEqual(["imported", "imported"]);
    expect(list[0]!.data).toEqual({ job_id: changed.id, action: "updated", changes: [{ field: "domain", before: "umbrella.test", after: "umbrella.example" }] });

    await imported("contacts", "first_name,last_name,account_name,external_id\nAlice,Imported,Umbrella Imports,ext-alice\n");
    const contact = (await org.ok("GET", "/contacts?search=alice imported")).items[0];
    expect(contact.account_id).toBe(account.id);
    await imported("contacts", "first_name,last_name,account_name,external_id\nAlice,Imported,,ext-alice\n");
    const byContact = await entries("contacts", contact.id);
    expect(byContact.map((e) => [e.type, e.data.action])).toEqual([["imported", "updated"], ["imported", "added"]]);
    expect(byContact[0]!.data.changes).toEqual([{ field: "account", before: null, after: null, before_id: account.id, after_id: null }]);
  });
});

describe("an account's contacts (the contact list's account_id)", () => {
  test("only its contacts, newest first, with the search; an unknown id or another organization's lists nothing", async () => {
    const a = await org.account("Vandelay");
    const c1 = await org.contact("Art", "Vandelay", { account_id: a.id });
    const c2 = await org.contact("George", "Costanza", { account_id: a.id });
    await org.contact("Cosmo", "Kramer");
    const page = await org.ok("GET", `/contacts?account_id=${a.id}`);
    expect(page.total).toBe(2);
    expect(page.items.map((c: { id: string }) => c.id).sort()).toEqual([c1.id, c2.id].sort());
    expect((await org.ok("GET", `/contacts?account_id=${a.id}&search=art`)).items.map((c: { id: string }) => c.id)).toEqual([c1.id]);
    expect((await org.ok("GET", `/contacts?account_id=${a.id}&size=1&page=2`))).toMatchObject({ total: 2, pages: 2 });
    expect((await org.ok("GET", "/contacts?account_id=nope")).total).toBe(0);
    expect((await other.ok("GET", `/contacts?account_id=${a.id}`)).total).toBe(0);
  });
});

describe("an account's and a contact's deals (the deal list's account_id and contact_id)", () => {
  test("only theirs, exact totals, with the other filters, the search and the order; an unknown id lists nothing; another organization's too", async () => {
    const a = await org.account("Massive Dynamic");
    const b = await org.account("Soylent");
    const c = await org.contact("Nina", "Sharp", { account_id: a.id });
    const d1 = await org.deal({ title: "Alpha renewal", account_id: a.id, contact_id: c.id, value: "10" });
    const d2 = await org.deal({ title: "Beta upgrade", account_id: a.id, value: "30", stage: "won" });
    const d3 = await org.deal({ title: "Gamma renewal", account_id: b.id, contact_id: c.id, value: "20" });
    await org.deal({ title: "Delta", account_id: b.id });
    const ids = (page: { items: Array<{ id: string }> }) => page.items.map((d) => d.id);

    let page = await org.list(`account_id=${a.id}&sort_by=value`);
    expect(page.total).toBe(2);
    expect(ids(page)).toEqual([d1.id, d2.id]);
    page = await org.list(`contact_id=${c.id}&sort_by=title&sort_dir=desc`);
    expect(ids(page)).toEqual([d3.id, d1.id]);
    expect((await org.list(`account_id=${a.id}&contact_id=${c.id}`)).total).toBe(1);
    expect(ids(await org.list(`account_id=${a.id}&search=RENEWAL`))).toEqual([d1.id]);
    expect(ids(await org.list(`account_id=${a.id}&stage=won`))).toEqual([d2.id]);
    expect((await org.list(`account_id=${a.id}&unassigned=true`)).total).toBe(2);
    expect((await org.list(`account_id=${a.id}&mine=true`)).total).toBe(0);
    expect((await org.list(`account_id=${a.id}&size=1&page=2`))).toMatchObject({ total: 2, pages: 2 });
    expect((await org.list("account_id=no-such-account")).total).toBe(0);
    const theirs = await other.call("GET", `/deals?account_id=${a.id}`);
    expect(theirs.status).toBe(200);
    expect(theirs.body.total).toBe(0);
    // The list's 422 rules are kept, in their order, beside the new filters.
    const bad = await org.call("GET", `/deals?account_id=${a.id}&sort_by=nope&mine=true&unassigned=true`);
    expect(bad.status).toBe(422);
    expect(bad.body.detail.map((i: { loc: unknown[] }) => i.loc)).toEqual([["query", "sort_by"], ["query", "mine"]]);
  });
});
