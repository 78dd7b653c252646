/** Contract of the stages store (edit, reorder, delete with their checks and audit rows) on every backend. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { PipelineStageRow } from "../../src/crm/repo";
import type { AuditEntry } from "../../src/security/repo";
import { CRM_BACKENDS, type CrmBackend, dealFields } from "./crm-support";

const entry = (action: string, detail?: Record<string, unknown>): AuditEntry => ({ tenantId: "t1", userId: null, action, ip: null, userAgent: null, detail });

for (const backend of CRM_BACKENDS) {
  describe(`pipeline stages (${backend.name})`, () => {
    let b: CrmBackend;
    const stage = async (key: string) => (await b.crm.stage("t1", key)) as PipelineStageRow;
    const audits = (action: string) => b.rows<{ detail: string | null; created_at: number }>("SELECT detail, created_at FROM audit_log WHERE tenant_id = $1 AND action = $2 ORDER BY id", ["t1", action]);
    beforeAll(async () => {
      b = await backend.fresh();
      await b.addTenant("t1");
      await b.addTenant("t2");
      await b.crm.insertAccount({ id: "a1", tenant_id: "t1", name: "Acme", domain: null, industry: null, created_at: 1, updated_at: 1 });
      for (const [id, stage] of [["d1", "proposal"], ["d2", "proposal"], ["d3", "new"]]) await b.crm.deals.insert("t1", id!, dealFields({ account_id: "a1", stage: stage! }), 10);
    });
    afterAll(() => b.close());

    test("byId and hasDeals are tenant-scoped", async () => {
      const p = await stage("proposal");
      expect(await b.stages.byId("t1", p.id)).toEqual(p);
      expect(await b.stages.byId("t2", p.id)).toBeNull();
      expect(await b.stages.hasDeals("t1", "proposal")).toBe(true);
      expect(await b.stages.hasDeals("t1", "won")).toBe(false);
      expect(await b.stages.hasDeals("t2", "proposal")).toBe(false);
    });

    test("an edit shows in every deal of the stage, with its audit row in the same transaction", async () => {
      const p = await stage("proposal");
      await b.stages.update({ ...p, name: "Offer", color: "#abcdef", probability: 60, is_won: 0, is_lost: 0 }, entry("crm.stage_update"), 50);
      expect(await b.crm.deals.byId("t1", "d1")).toMatchObject({ stage_name: "Offer", stage_color: "#abcdef" });
      expect(await stage("proposal")).toMatchObject({ name: "Offer", probability: 60, position: p.position });
      expect(await audits("crm.stage_update")).toEqual([{ detail: null, created_at: 50 }]);
    });

    test("a reorder must name every stage exactly once", async () => {
      const ids = (await b.crm.stages("t1")).map((s) => s.id);
      const other = (await b.crm.stages("t2"))[0]!.id;
      expect(await b.stages.reorder("t1", ids.slice(1), entry("crm.stage_reorder"), 60)).toBe(false);
      expect(await b.stages.reorder("t1", [...ids.slice(1), ids[1]!], entry("crm.stage_reorder"), 60)).toBe(false);
      expect(await b.stages.reorder("t1", [...ids.slice(1), other], entry("crm.stage_reorder"), 60)).toBe(false);
      expect(await audits("crm.stage_reorder")).toEqual([]);
      const reversed = [...ids].reverse();
      expect(await b.stages.reorder("t1", reversed, entry("crm.stage_reorder"), 61)).toBe(true);
      expect((await b.crm.stages("t1")).map((s) => s.id)).toEqual(reversed);
      expect((await b.crm.stages("t1")).map((s) => s.position)).toEqual([0, 1, 2, 3, 4, 5]);
      expect((await audits("crm.stage_reorder")).length).toBe(1);
    });

    test("a delete: needs a target when it has deals, refuses an unknown one, moves the deals", async () => {
      const p = await stage("proposal");
      const audit = (moved: number) => entry("crm.stage_delete", { moved });
      expect(await b.stages.remove(p, null, audit, 70)).toBe("needs_target");
      expect(await b.stages.remove(p, "nope", audit, 70)).toBe("unknown_target");
      expect(await b.stages.remove(p, "won", audit, 71)).toBe(2);
      expect(await b.crm.stage("t1", "proposal")).toBeNull();
      expect(await b.crm.deals.byId("t1", "d1")).toMatchObject({ stage: "won", stage_name: "Won", is_won: 1, updated_at: 71 });
      expect(await b.crm.deals.byId("t1", "d3")).toMatchObject({ stage: "new", updated_at: 10 });
      expect(await b.stages.remove(await stage("lost"), null, audit, 72)).toBe(0);
      expect((await audits("crm.stage_delete")).map((a) => JSON.parse(a.detail!))).toEqual([{ moved: 2 }, { moved: 0 }]);
    });

    test("the last stage is never deleted", async () => {
      const stages = await b.crm.stages("t2");
      for (const s of stages.slice(1)) expect(await b.stages.remove(s, null, () => ({ ...entry("x"), tenantId: "t2" }), 80)).toBe(0);
      expect(await b.stages.remove(stages[0]!, null, () => ({ ...entry("x"), tenantId: "t2" }), 80)).toBe("last");
      expect((await b.crm.stages("t2")).length).toBe(1);
    });
  });
}
