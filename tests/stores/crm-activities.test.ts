/**
 * Contract of a deal's timeline and notes on every backend: each deal write adds its entries in
 * its own transaction, notes add and remove theirs, and every read stays within its tenant.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { CRM_BACKENDS, type CrmBackend, dealFields } from "./crm-support";

/** The store writes name their actor as the event log does. */
const user = (id: string) => ({ type: "user" as const, id });

const note = (tenant_id: string, id: string, deal_id: string, author_id: string, body: string, at: number) =>
  ({ tenant_id, id, deal_id, author_id, body, created_at: at, updated_at: at });

for (const backend of CRM_BACKENDS) {
  describe(`deal timeline and notes (${backend.name})`, () => {
    let b: CrmBackend;
    const types = async (tenantId: string, dealId: string) => (await b.crm.activities.timeline(tenantId, dealId, 100, 0)).rows.map((r) => r.type);
    beforeAll(async () => {
      b = await backend.fresh();
      await b.addTenant("t1");
      await b.addTenant("t2");
      await b.addUser("t1", "u1", "ann@x.test", "Ann Zed");
      await b.addUser("t1", "u2", "bob@x.test", null);
      await b.addUser("t2", "u9", "eve@x.test", "Eve");
      await b.crm.insertAccount({ id: "a1", tenant_id: "t1", name: "Acme", domain: null, industry: null, created_at: 1, updated_at: 1 });
      await b.crm.insertAccount({ id: "a2", tenant_id: "t1", name: "Beta", domain: null, industry: null, created_at: 1, updated_at: 1 });
      await b.crm.insertAccount({ id: "a9", tenant_id: "t2", name: "Theirs", domain: null, industry: null, created_at: 1, updated_at: 1 });
    });
    afterAll(() => b.close());

    test("insert: a 'created' entry by its actor, stage_changed_at = created_at", async () => {
      expect(await b.crm.deals.insert("t1", "d1", dealFields({ account_id: "a1", title: "One", value_cents: 1050 }), 100, user("u1"))).toEqual({ ok: true });
      expect(await b.crm.deals.byId("t1", "d1")).toMatchObject({ stage_changed_at: 100 });
      const { rows, total } = await b.crm.activities.timeline("t1", "d1", 10, 0);
      expect(total).toBe(1);
      expect(rows[0]).toMatchObject({ type: "created", actor_id: "u1", actor_name: "Ann Zed", created_at: 100, note_body: null });
      expect(JSON.parse(rows[0]!.data)).toEqual({ title: "One", stage: "new", value: "10.50", currency: "USD" });
      // A missing reference writes nothing.
      expect(await b.crm.deals.insert("t1", "dx", dealFields({ account_id: "nope" }), 100, user("u1"))).toEqual({ ok: false, missing: "account_id" });
      expect((await b.crm.activities.timeline("t1", "dx", 10, 0)).total).toBe(0);
    });

    test("update: field changes and a stage change are entries, newest first; nothing changed is no entry", async () => {
      await b.crm.deals.update("t1", "d1", (c) => ({ ...c, title: "One B", account_id: "a2", assigned_to: "u2" }), 200, user("u2"));
      expect(await b.crm.deals.byId("t1", "d1")).toMatchObject({ stage_changed_at: 100, updated_at: 200 });
      await b.crm.deals.update("t1", "d1", (c) => ({ ...c, stage: "won" }), 300, user("u1"));
      expect(await b.crm.deals.byId("t1", "d1")).toMatchObject({ stage_changed_at: 300 });
      await b.crm.deals.update("t1", "d1", (c) => ({ ...c }), 400, user("u1"));
      const { rows, total } = await b.crm.activities.timeline("t1", "d1", 10, 0);
      expect(total).toBe(3);
      expect(rows.map((r) => [r.type, r.actor_id, r.created_at])).toEqual([["stage_changed", "u1", 300], ["updated", "u2", 200], ["created", "u1", 100]]);
      // A member without a name is named by their address.
      expect(rows[1]!.actor_name).toBe("bob@x.test");
      expect(JSON.parse(rows[0]!.data)).toEqual({ from: "new", to: "won" });
      expect(JSON.parse(rows[1]!.data).changes).toEqual([
        { field: "title", before: "One", after: "One B" },
        { field: "account", before: "Acme", after: "Beta", before_id: "a1", after_id: "a2" },
        { field: "assignee", before: null, after: "bob@x.test", before_id: null, after_id: "u2" },
      ]);
      // Paged: limit and offset.
      expect((await b.crm.activities.timeline("t1", "d1", 1, 1)).rows.map((r) => r.type)).toEqual(["updated"]);
      // Another tenant reads none of it.
      expect(await b.crm.activities.timeline("t2", "d1", 10, 0)).toEqual({ rows: [], total: 0 });
    });

    test("a deal written before stage times were kept: its next write without a stage change keeps its last write's time", async () => {
      await b.crm.deals.insert("t1", "old", dealFields({ account_id: "a1" }), 500, user("u1"));
      await b.exec("UPDATE deals SET stage_changed_at = NULL, updated_at = 550 WHERE tenant_id = $1 AND id = $2", ["t1", "old"]);
      await b.crm.deals.update("t1", "old", (c) => ({ ...c, title: "Later" }), 600, user("u1"));
      expect(await b.crm.deals.byId("t1", "old")).toMatchObject({ stage_changed_at: 550, updated_at: 600 });
    });

    test("notes: insert adds its entry (the note's current text joined), update changes the text, remove takes both", async () => {
      expect(await b.crm.activities.insertNote(note("t1", "n1", "d1", "u2", "First", 700))).toBe(true);
      expect(await b.crm.activities.insertNote(note("t1", "n2", "d1", "u1", "Second", 710))).toBe(true);
      // Not the tenant's deal, or no deal: nothing written.
      expect(await b.crm.activities.insertNote(note("t2", "n9", "d1", "u9", "Theirs", 720))).toBe(false);
      expect(await b.crm.activities.note("t2", "n9")).toBeNull();
      expect(await b.crm.activities.note("t1", "n1")).toEqual({ ...note("t1", "n1", "d1", "u2", "First", 700), author_name: "bob@x.test" });
      expect(await b.crm.activities.note("t2", "n1")).toBeNull();
      await b.crm.activities.updateNote("t1", "n1", "First, edited", 800);
      const { rows } = await b.crm.activities.timeline("t1", "d1", 2, 0);
      expect(rows.map((r) => [r.id, r.type, r.note_body, r.note_updated_at])).toEqual([["n2", "note", "Second", 710], ["n1", "note", "First, edited", 800]]);
      await b.crm.activities.removeNote("t2", "n1");
      expect(await b.crm.activities.note("t1", "n1")).not.toBeNull();
      await b.crm.activities.removeNote("t1", "n1");
      expect(await b.crm.activities.note("t1", "n1")).toBeNull();
      expect(await types("t1", "d1")).toEqual(["note", "stage_changed", "updated", "created"]);
    });

    test("a deal's entries and notes go with it; other deals keep theirs", async () => {
      await b.crm.deals.insert("t1", "d2", dealFields({ account_id: "a1" }), 900, user("u1"));
      await b.crm.activities.insertNote(note("t1", "n3", "d2", "u1", "On two", 910));
      expect(await b.crm.deals.remove("t1", "d2")).toBe(true);
      expect((await b.rows<{ n: number }>("SELECT count(*) AS n FROM deal_activities WHERE tenant_id = $1 AND deal_id = $2", ["t1", "d2"]))[0]!.n).toBe(0);
      expect(await b.crm.activities.note("t1", "n3")).toBeNull();
      expect((await b.crm.activities.timeline("t1", "d1", 10, 0)).total).toBe(4);
    });
  });
}
