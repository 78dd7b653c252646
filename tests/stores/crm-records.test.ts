/**
 * Contract of the CRM stores (accounts, contacts, deals, the copied names) on every backend: the
 * same calls give the same results on SQLite and PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { CRM_BACKENDS, type CrmBackend, dealFields } from "./crm-support";

const account = (tenant_id: string, id: string, name: string, at: number, domain: string | null = null) =>
  ({ id, tenant_id, name, domain, industry: null, created_at: at, updated_at: at, external_id: null });
const contact = (tenant_id: string, id: string, first_name: string, last_name: string | null, at: number, account_id: string | null = null) =>
  ({ id, tenant_id, first_name, last_name, email: `${id}@x.test`, phone: null, account_id, created_at: at, updated_at: at, external_id: null });

for (const backend of CRM_BACKENDS) {
  describe(`CRM records (${backend.name})`, () => {
    let b: CrmBackend;
    beforeAll(async () => {
      b = await backend.fresh();
      await b.addTenant("t1");
      await b.addTenant("t2");
      await b.addUser("t1", "u1", "ann@x.test", "Ann Zed");
      await b.addUser("t1", "u2", "bob@x.test", null);
      await b.addUser("t2", "u9", "eve@x.test", "Eve");
    });
    afterAll(() => b.close());

    test("a new tenant gets the default pipeline, in order", async () => {
      const stages = await b.crm.stages("t1");
      expect(stages.map((s) => [s.key, s.position])).toEqual([["new", 0], ["qualified", 1], ["proposal", 2], ["negotiation", 3], ["won", 4], ["lost", 5]]);
      expect(stages[4]).toMatchObject({ tenant_id: "t1", name: "Won", is_won: 1, is_lost: 0, probability: 100, created_at: 1_000 });
      expect(await b.crm.stage("t1", "won")).toEqual(stages[4]!);
      expect(await b.crm.stage("t1", "nope")).toBeNull();
    });

    test("a stage is inserted last unless placed, and a duplicate key is refused", async () => {
      const s = await b.crm.insertStage({ id: "s-extra", tenant_id: "t2", key: "extra", name: "Extra", color: "#000000", probability: 5, is_won: 0, is_lost: 0, created_at: 2, position: null });
      expect(s.position).toBe(6);
      expect(await b.crm.stage("t2", "extra")).toMatchObject({ id: "s-extra", position: 6 });
      await expect(b.crm.insertStage({ ...s, id: "s-extra2", position: 9 })).rejects.toThrow();
      expect((await b.crm.stages("t2")).length).toBe(7);
    });

    test("accounts: insert, read, list with search and total, update, tenant-scoped", async () => {
      await b.crm.insertAccount(account("t1", "a1", "Acme Corp", 10, "acme.test"));
      await b.crm.insertAccount(account("t1", "a2", "Beta_Ltd", 20));
      await b.crm.insertAccount(account("t1", "a3", "Gamma", 30, "beta.test"));
      await b.crm.insertAccount(account("t2", "a9", "Acme Elsewhere", 40));
      expect(await b.crm.account("t1", "a1")).toEqual(account("t1", "a1", "Acme Corp", 10, "acme.test"));
      expect(await b.crm.account("t2", "a1")).toBeNull();
      const all = await b.crm.listAccounts("t1", null, 2, 0);
      expect(all.total).toBe(3);
      expect(all.rows.map((r) => r.id)).toEqual(["a3", "a2"]);
      expect((await b.crm.listAccounts("t1", null, 2, 2)).rows.map((r) => r.id)).toEqual(["a1"]);
      const beta = await b.crm.listAccounts("t1", "%beta%", 10, 0);
      expect(beta.rows.map((r) => r.id)).toEqual(["a3", "a2"]);
      // An escaped underscore matches only itself.
      expect((await b.crm.listAccounts("t1", "%a\\_l%", 10, 0)).rows.map((r) => r.id)).toEqual(["a2"]);
      await b.crm.updateAccount({ ...account("t1", "a3", "Gamma", 30, null), industry: "Tools", updated_at: 31 }, false);
      expect(await b.crm.account("t1", "a3")).toMatchObject({ domain: null, industry: "Tools", updated_at: 31 });
    });

    test("contacts: insert, read, list with search and total, update", async () => {
      await b.crm.insertContact(contact("t1", "c1", "Carla", "Diaz", 10, "a1"));
      await b.crm.insertContact(contact("t1", "c2", "Dan", null, 20));
      await b.crm.insertContact(contact("t2", "c9", "Carla", "Other", 30));
      expect(await b.crm.contact("t1", "c1")).toEqual(contact("t1", "c1", "Carla", "Diaz", 10, "a1"));
      expect(await b.crm.contact("t1", "c9")).toBeNull();
      expect(await b.crm.listContacts("t1", null, 10, 0)).toEqual({ rows: [contact("t1", "c2", "Dan", null, 20), contact("t1", "c1", "Carla", "Diaz", 10, "a1")], total: 2 });
      expect((await b.crm.listContacts("t1", "%carla d%", 10, 0)).rows.map((r) => r.id)).toEqual(["c1"]);
      expect((await b.crm.listContacts("t1", "%c2@x%", 10, 0)).total).toBe(1);
    });

    test("deals: insert copies names and keys; a missing reference is named; reads join the stage", async () => {
      const f = dealFields({ title: "Big Sale", account_id: "a1", contact_id: "c1", assigned_to: "u1", stage: "proposal", value_cents: 12345, notes: "Note", custom_data: '{"k":1}', close_date: "2026-01-02", probability: 40 });
      expect(await b.crm.deals.insert("t1", "d1", f, 100)).toEqual({ ok: true });
      const d = (await b.crm.deals.byId("t1", "d1"))!;
      expect(d).toMatchObject({ ...f, id: "d1", tenant_id: "t1", created_at: 100, updated_at: 100, account_name: "Acme Corp", contact_name: "Carla Diaz",
        assignee_name: "Ann Zed", assignee_email: "ann@x.test", stage_name: "Proposal", stage_color: "#8b5cf6", is_won: 0, is_lost: 0 });
      expect(typeof d.seq).toBe("number");
      const keys = (await b.rows<Record<string, unknown>>("SELECT title_key, account_key, contact_key, assignee_key, search_text FROM deals WHERE tenant_id = $1 AND id = $2", ["t1", "d1"]))[0];
      expect(keys).toEqual({ title_key: "big sale", account_key: "acme corp", contact_key: "carla diaz", assignee_key: "ann zed", search_text: "big sale\nnote\nacme corp\ncarla diaz" });
      expect(await b.crm.deals.byId("t2", "d1")).toBeNull();
      for (const [o, missing] of [[{ account_id: "a9" }, "account_id"], [{ contact_id: "c9" }, "contact_id"], [{ assigned_to: "u9" }, "assigned_to"], [{ stage: "nope" }, "stage"]] as const) {
        expect(await b.crm.deals.insert("t1", `dx-${missing}`, { ...f, ...o }, 100)).toEqual({ ok: false, missing });
      }
      expect(await b.crm.deals.byId("t1", "dx-stage")).toBeNull();
    });

    test("deal numbers are distinct and increasing within a tenant; bySeqs keeps the order asked", async () => {
      await b.crm.deals.insert("t1", "d2", dealFields({ title: "Two", account_id: "a2" }), 101);
      await b.crm.deals.insert("t1", "d3", dealFields({ title: "Three", account_id: "a2", assigned_to: "u2" }), 102);
      await b.crm.deals.insert("t2", "d9", dealFields({ title: "Nine", account_id: "a9" }), 103);
      const [d1, d2, d3, d9] = await Promise.all(["d1", "d2", "d3"].map((id) => b.crm.deals.byId("t1", id)).concat(b.crm.deals.byId("t2", "d9")));
      expect(d1!.seq).toBeLessThan(d2!.seq);
      expect(d2!.seq).toBe(d1!.seq + 1);
      expect(d3!.seq).toBe(d2!.seq + 1);
      expect(Math.floor(d9!.seq / 2 ** 32)).not.toBe(Math.floor(d1!.seq / 2 ** 32));
      const page = await b.crm.deals.bySeqs("t1", [d3!.seq, d1!.seq, d9!.seq, 999]);
      expect(page.map((r) => r.id)).toEqual(["d3", "d1"]);
      expect(page[0]).toMatchObject({ assignee_name: null, assignee_email: "bob@x.test", stage_name: "New" });
      expect(await b.crm.deals.bySeqs("t1", [])).toEqual([]);
      const raw = { ...d2!, stage_id: null, stage_name: null, stage_color: null, is_won: null, is_lost: null };
      expect((await b.crm.deals.withStages("t1", [raw]))[0]).toMatchObject({ stage_name: "New", stage_id: d2!.stage_id });
    });

    test("deals: update sees the stored fields, rewrites the copies; not found and missing are answered", async () => {
      let seen: unknown = null;
      const r = await b.crm.deals.update("t1", "d2", (cur) => ((seen = cur), { ...cur, title: "Two B", contact_id: "c2", assigned_to: "u1", stage: "won" }), 200);
      expect(r).toEqual({ ok: true });
      expect(seen).toMatchObject({ title: "Two", account_id: "a2", contact_id: null, stage: "new" });
      expect(await b.crm.deals.byId("t1", "d2")).toMatchObject({ title: "Two B", contact_name: "Dan", assignee_name: "Ann Zed", stage_name: "Won", is_won: 1, updated_at: 200, created_at: 101 });
      expect(await b.crm.deals.update("t1", "nope", (c) => c, 200)).toEqual({ ok: false, notFound: true });
      expect(await b.crm.deals.update("t1", "d2", (c) => ({ ...c, account_id: "a9" }), 201)).toEqual({ ok: false, missing: "account_id" });
      expect(await b.crm.deals.byId("t1", "d2")).toMatchObject({ account_id: "a2", updated_at: 200 });
    });

    test("renaming an account or contact rewrites every deal's copy; deleting a contact detaches it", async () => {
      await b.crm.updateAccount({ ...account("t1", "a1", "Zeta Inc", 10, "acme.test"), updated_at: 300 }, true);
      await b.crm.updateContact({ ...contact("t1", "c1", "Carla", "Vega", 10, "a1"), updated_at: 300 }, true);
      expect(await b.crm.deals.byId("t1", "d1")).toMatchObject({ account_name: "Zeta Inc", contact_name: "Carla Vega" });
      const [k] = await b.rows("SELECT account_key, contact_key, search_text FROM deals WHERE tenant_id = $1 AND id = $2", ["t1", "d1"]);
      expect(k).toEqual({ account_key: "zeta inc", contact_key: "carla vega", search_text: "big sale\nnote\nzeta inc\ncarla vega" });
      await b.crm.deleteContact("t1", "c1");
      expect(await b.crm.contact("t1", "c1")).toBeNull();
      expect(await b.crm.deals.byId("t1", "d1")).toMatchObject({ contact_id: null, contact_name: null, account_name: "Zeta Inc" });
      const [k2] = await b.rows("SELECT contact_key, search_text FROM deals WHERE tenant_id = $1 AND id = $2", ["t1", "d1"]);
      expect(k2).toEqual({ contact_key: null, search_text: "big sale\nnote\nzeta inc\n" });
    });

    test("an account with deals is not deleted; one without is", async () => {
      expect(await b.crm.deleteAccount("t1", "a1")).toBe(false);
      expect(await b.crm.account("t1", "a1")).not.toBeNull();
      expect(await b.crm.deleteAccount("t1", "a3")).toBe(true);
      expect(await b.crm.account("t1", "a3")).toBeNull();
    });

    test("a member's rename shows in their deals; removing them moves their deals", async () => {
      await b.renameUser("t1", "u1", "Ann Young", "ann2@x.test");
      expect(await b.crm.deals.byId("t1", "d1")).toMatchObject({ assignee_name: "Ann Young", assignee_email: "ann2@x.test" });
      const [k] = await b.rows("SELECT assignee_key FROM deals WHERE tenant_id = $1 AND id = $2", ["t1", "d1"]);
      expect(k).toEqual({ assignee_key: "ann young" });
      expect(await b.removeUser("t1", "u1", { id: "u2", full_name: null, email: "bob@x.test" }, 500)).toBe(2);
      for (const id of ["d1", "d2"]) expect(await b.crm.deals.byId("t1", id)).toMatchObject({ assigned_to: "u2", assignee_name: null, assignee_email: "bob@x.test", updated_at: 500 });
      expect(await b.removeUser("t1", "u2", null, 600)).toBe(3);
      expect(await b.crm.deals.byId("t1", "d3")).toMatchObject({ assigned_to: null, assignee_name: null, assignee_email: null, updated_at: 600 });
    });

    test("a deal is removed once, in its tenant only", async () => {
      expect(await b.crm.deals.remove("t2", "d3")).toBe(false);
      expect(await b.crm.deals.remove("t1", "d3")).toBe(true);
      expect(await b.crm.deals.remove("t1", "d3")).toBe(false);
      expect(await b.crm.deals.byId("t1", "d3")).toBeNull();
    });
  });
}
