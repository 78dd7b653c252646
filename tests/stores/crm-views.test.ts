/**
 * Contract of saved views on every backend: visibility (own and shared), the per-owner limit in
 * the insert's transaction, each member's one default, and that deleting a view clears the
 * defaults that named it; every read stays within its tenant.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { SavedViewRow } from "../../src/crm/views-repo";
import { CRM_BACKENDS, type CrmBackend } from "./crm-support";

const view = (tenant_id: string, id: string, owner_id: string, name: string, shared = 0, at = 1): SavedViewRow => ({
  tenant_id, id, owner_id, name, kind: "table", query: '{"mine":true}', columns: null, shared, created_at: at, updated_at: at,
});

for (const backend of CRM_BACKENDS) {
  describe(`saved views (${backend.name})`, () => {
    let b: CrmBackend;
    const ids = async (tenantId: string, userId: string) => (await b.crm.views.visible(tenantId, userId)).map((v) => v.id);
    beforeAll(async () => {
      b = await backend.fresh();
      await b.addTenant("t1");
      await b.addTenant("t2");
      await b.addUser("t1", "u1", "ann@x.test", "Ann Zed");
      await b.addUser("t1", "u2", "bob@x.test", null);
      await b.addUser("t2", "u9", "eve@x.test", "Eve");
    });
    afterAll(() => b.close());

    test("insert and read back; visible = the user's own and the shared ones, by name; never another tenant's", async () => {
      expect(await b.crm.views.insert(view("t1", "v1", "u1", "beta"), 50)).toBe(true);
      expect(await b.crm.views.insert(view("t1", "v2", "u2", "Alpha shared", 1), 50)).toBe(true);
      expect(await b.crm.views.insert(view("t1", "v3", "u2", "Bob's own"), 50)).toBe(true);
      expect(await b.crm.views.insert(view("t2", "v9", "u9", "Theirs", 1), 50)).toBe(true);
      expect(await b.crm.views.byId("t1", "v1")).toMatchObject({ ...view("t1", "v1", "u1", "beta"), owner_name: "Ann Zed" });
      expect((await b.crm.views.byId("t1", "v2"))!.owner_name).toBe("bob@x.test");
      expect(await ids("t1", "u1")).toEqual(["v2", "v1"]);
      expect(await ids("t1", "u2")).toEqual(["v2", "v3"]);
      expect(await b.crm.views.byId("t1", "v9")).toBeNull();
      expect(await ids("t2", "u1")).toEqual(["v9"]);
    });

    test("the limit counts the owner's views only, inside the insert", async () => {
      expect(await b.crm.views.insert(view("t1", "v4", "u1", "second"), 2)).toBe(true);
      expect(await b.crm.views.insert(view("t1", "v5", "u1", "third"), 2)).toBe(false);
      expect(await b.crm.views.byId("t1", "v5")).toBeNull();
      expect(await b.crm.views.insert(view("t1", "v5", "u1", "third"), 3)).toBe(true);
    });

    test("update changes the fields, within the tenant", async () => {
      await b.crm.views.update("t1", "v1", { name: "Beta B", kind: "board", query: "{}", columns: '["title"]', shared: 1, updated_at: 9 });
      expect(await b.crm.views.byId("t1", "v1")).toMatchObject({ name: "Beta B", kind: "board", query: "{}", columns: '["title"]', shared: 1, updated_at: 9, created_at: 1 });
      await b.crm.views.update("t2", "v1", { name: "Nope", kind: "table", query: "{}", columns: null, shared: 0, updated_at: 10 });
      expect((await b.crm.views.byId("t1", "v1"))!.name).toBe("Beta B");
    });

    test("one default per user and tenant; removing a view clears every default naming it", async () => {
      expect(await b.crm.views.defaultOf("t1", "u1")).toBeNull();
      await b.crm.views.setDefault("t1", "u1", "v2");
      await b.crm.views.setDefault("t1", "u2", "v2");
      await b.crm.views.setDefault("t1", "u1", "v1");
      expect(await b.crm.views.defaultOf("t1", "u1")).toBe("v1");
      expect(await b.crm.views.defaultOf("t2", "u1")).toBeNull();
      await b.crm.views.remove("t1", "v2");
      expect(await b.crm.views.byId("t1", "v2")).toBeNull();
      expect(await b.crm.views.defaultOf("t1", "u2")).toBeNull();
      expect(await b.crm.views.defaultOf("t1", "u1")).toBe("v1");
      await b.crm.views.setDefault("t1", "u1", null);
      expect(await b.crm.views.defaultOf("t1", "u1")).toBeNull();
      // Another tenant's remove touches nothing here.
      await b.crm.views.remove("t2", "v1");
      expect(await b.crm.views.byId("t1", "v1")).not.toBeNull();
    });
  });
}
