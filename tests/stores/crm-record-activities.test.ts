/**
 * Contract of an account's and a contact's timeline on every backend: each create and change adds
 * its entry in its own transaction (before → after, names for a contact's account), nothing
 * changed adds none, deleting the record removes its entries, and reads stay within the tenant.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { CRM_BACKENDS, type CrmBackend, dealFields } from "./crm-support";

const user = (id: string) => ({ type: "user" as const, id });
const account = (tenant_id: string, id: string, name: string, at: number) => ({ id, tenant_id, name, domain: null, industry: null, created_at: at, updated_at: at });
const contact = (tenant_id: string, id: string, first_name: string, account_id: string | null, at: number) =>
  ({ id, tenant_id, first_name, last_name: null, email: null, phone: null, account_id, created_at: at, updated_at: at });

for (const backend of CRM_BACKENDS) {
  describe(`account and contact timelines (${backend.name})`, () => {
    let b: CrmBackend;
    const read = (kind: "account" | "contact", tenantId: string, id: string) => b.crm.recordActivities.timeline(kind, tenantId, id, 100, 0);
    beforeAll(async () => {
      b = await backend.fresh();
      await b.addTenant("t1");
      await b.addTenant("t2");
      await b.addUser("t1", "u1", "ann@x.test", "Ann Zed");
      await b.addUser("t1", "u2", "bob@x.test", null);
    });
    afterAll(() => b.close());

    test("an account: created, then each change before → after by its actor, newest first; nothing changed is no entry", async () => {
      await b.crm.insertAccount(account("t1", "a1", "Acme", 100), user("u1"));
      await b.crm.updateAccount({ ...account("t1", "a1", "Acme Corp", 100), domain: "acme.test", updated_at: 200 }, true, user("u2"));
      await b.crm.updateAccount({ ...account("t1", "a1", "Acme Corp", 100), domain: "acme.test", updated_at: 300 }, false, user("u2"));
      const { rows, total } = await read("account", "t1", "a1");
      expect(total).toBe(2);
      expect(rows.map((r) => [r.type, r.actor_id, r.actor_name, r.created_at])).toEqual([["updated", "u2", "bob@x.test", 200], ["created", "u1", "Ann Zed", 100]]);
      expect(JSON.parse(rows[1]!.data)).toEqual({ name: "Acme", domain: null, industry: null });
      expect(JSON.parse(rows[0]!.data)).toEqual({ changes: [{ field: "name", before: "Acme", after: "Acme Corp" }, { field: "domain", before: null, after: "acme.test" }] });
      // Paged.
      expect((await b.crm.recordActivities.timeline("account", "t1", "a1", 1, 1)).rows.map((r) => r.type)).toEqual(["created"]);
    });

    test("a contact: its account shown by name, with the ids beside; system writes have no actor", async () => {
      await b.crm.insertAccount(account("t1", "a2", "Beta", 100));
      await b.crm.insertContact(contact("t1", "c1", "Jane", "a1", 100), user("u1"));
      await b.crm.updateContact({ ...contact("t1", "c1", "Janet", "a2", 100), updated_at: 200 }, true);
      const { rows } = await read("contact", "t1", "c1");
      expect(rows.map((r) => [r.type, r.actor_id])).toEqual([["updated", null], ["created", "u1"]]);
      expect(JSON.parse(rows[1]!.data)).toEqual({ first_name: "Jane", last_name: null, email: null, phone: null, account: "Acme Corp", account_id: "a1" });
      expect(JSON.parse(rows[0]!.data).changes).toEqual([
        { field: "first_name", before: "Jane", after: "Janet" },
        { field: "account", before: "Acme Corp", after: "Beta", before_id: "a1", after_id: "a2" },
      ]);
    });

    test("an account's contacts: the contact list within one account, with its search and paging", async () => {
      await b.crm.insertContact(contact("t1", "c5", "Zed", "a2", 900));
      const all = await b.crm.listContacts("t1", null, 10, 0, "a2");
      expect(all.rows.map((c) => c.id)).toEqual(["c5", "c1"]);
      expect(all.total).toBe(2);
      expect(await b.crm.listContacts("t1", "%zed%", 10, 0, "a2")).toMatchObject({ total: 1, rows: [{ id: "c5" }] });
      expect((await b.crm.listContacts("t1", null, 1, 1, "a2")).rows.map((c) => c.id)).toEqual(["c1"]);
      expect(await b.crm.listContacts("t2", null, 10, 0, "a2")).toEqual({ rows: [], total: 0 });
    });

    test("another tenant reads nothing; deleting a record removes its entries (and only its)", async () => {
      expect(await read("account", "t2", "a1")).toEqual({ rows: [], total: 0 });
      expect(await read("contact", "t2", "c1")).toEqual({ rows: [], total: 0 });
      await b.crm.insertAccount(account("t1", "a3", "Gone", 100), user("u1"));
      await b.crm.insertContact(contact("t1", "c3", "Gone", "a3", 100), user("u1"));
      expect((await read("contact", "t1", "c3")).total).toBe(1);
      await b.crm.deleteContact("t1", "c3", 500, user("u1"));
      expect(await b.crm.deleteAccount("t1", "a3", 500, user("u1"))).toBe(true);
      expect((await read("account", "t1", "a3")).total).toBe(0);
      expect((await read("contact", "t1", "c3")).total).toBe(0);
      const left = await b.rows<{ n: number }>("SELECT count(*) AS n FROM account_activities WHERE tenant_id = $1 AND account_id = $2", ["t1", "a3"]);
      expect(Number(left[0]!.n)).toBe(0);
      expect((await read("account", "t1", "a1")).total).toBe(2);
      // An account with deals is kept, and so is its timeline.
      expect(await b.crm.deals.insert("t1", "d1", dealFields({ account_id: "a1" }), 600, user("u1"))).toEqual({ ok: true });
      expect(await b.crm.deleteAccount("t1", "a1", 700, user("u1"))).toBe(false);
      expect((await read("account", "t1", "a1")).total).toBe(2);
    });
  });
}
