/** Contract of the bulk deal store (issue 32): choosing deals, batches with their undo log, reverts; on every backend. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { JobRow } from "../../src/crm/export-import/jobs-repo";
import { BulkTargetGone, type BulkFilter } from "../../src/crm/bulk-repo";
import { CRM_BACKENDS, type CrmBackend, dealFields } from "./crm-support";

const USER = { type: "user" as const, id: "u1" };
const job = (id: string, kind = "deals_bulk"): JobRow => ({
  tenant_id: "t1", id, kind, status: "running", user_id: "u1", total: 0, done: 0, added: 0, updated: 0, unchanged: 0, error_count: 0,
  errors: "[]", message: null, created_at: 9_000, finished_at: null, lease_until: 99_000, detail: '{"action":"change"}',
});
const all: BulkFilter = { search: null, stages: null, assignee: null };

for (const backend of CRM_BACKENDS) {
  describe(`bulk deals (${backend.name})`, () => {
    let b: CrmBackend;
    beforeAll(async () => {
      b = await backend.fresh();
      await b.addTenant("t1");
      await b.addTenant("t2");
      await b.addUser("t1", "u1", "ann@x.test", "Ann");
      await b.addUser("t1", "u2", "zed@x.test", "Zed");
      await b.addUser("t2", "u9", "other@x.test", "Other");
      await b.crm.insertAccount({ id: "a1", tenant_id: "t1", name: "Acme", domain: null, industry: null, created_at: 1, updated_at: 1 });
      await b.crm.insertAccount({ id: "a9", tenant_id: "t2", name: "Acme", domain: null, industry: null, created_at: 1, updated_at: 1 });
      const rows = [
        ["d1", "Globex one", "u1", "new"],
        ["d2", "Globex two", null, "won"],
        ["d3", "Initech", "u2", "new"],
        ["d4", "globex three", null, "new"],
      ] as const;
      for (const [id, title, assigned_to, stage] of rows) expect(await b.crm.deals.insert("t1", id, dealFields({ title, account_id: "a1", assigned_to, stage }), 1_000)).toEqual({ ok: true });
      expect(await b.crm.deals.insert("t2", "d9", dealFields({ title: "Globex elsewhere", account_id: "a9" }), 1_000)).toEqual({ ok: true });
    });
    afterAll(() => b.close());

    const choose = async (tenant: string, f: BulkFilter, window = 2) => {
      const { lo, hi } = await b.bulkDeals.seqRange(tenant);
      const out: string[] = [];
      for (let from = lo; from < hi; from += window) for (const t of await b.bulkDeals.matching(tenant, f, from, Math.min(hi, from + window))) out.push(t.id);
      return out;
    };
    const stageOf = async (id: string) => (await b.crm.deals.byId("t1", id))?.stage;
    /** The counters the list and the board read (counts and sums per assignee and stage) agree with the deals themselves. */
    const countersAgree = async () => {
      const norm = (rows: Array<Record<string, unknown>>) => rows.map((r) => Object.values(r).map(String).join("|")).sort();
      const counted = await b.rows("SELECT assignee, stage, n FROM deal_counts WHERE tenant_id = $1 AND assignee <> '*' AND n <> 0", ["t1"]);
      const real = await b.rows("SELECT coalesce(assigned_to, '') AS assignee, stage, count(*) AS n FROM deals WHERE tenant_id = $1 GROUP BY coalesce(assigned_to, ''), stage", ["t1"]);
      expect(norm(counted)).toEqual(norm(real));
      const summed = await b.rows("SELECT assignee, stage, currency, n, cents FROM deal_sums WHERE tenant_id = $1 AND n <> 0", ["t1"]);
      const sums = await b.rows("SELECT coalesce(assigned_to, '') AS assignee, stage, currency, count(*) AS n, sum(value_cents) AS cents FROM deals WHERE tenant_id = $1 GROUP BY coalesce(assigned_to, ''), stage, currency", ["t1"]);
      expect(norm(summed)).toEqual(norm(sums));
    };

    test("matching walks the tenant's number range in windows with the list's filters and search; byIds keeps to the tenant", async () => {
      expect(await choose("t1", all)).toEqual(["d1", "d2", "d3", "d4"]);
      expect(await choose("t1", { ...all, search: "GLOBEX" })).toEqual(["d1", "d2", "d4"]);
      expect(await choose("t1", { ...all, search: "globex", stages: ["new"] })).toEqual(["d1", "d4"]);
      expect(await choose("t1", { ...all, assignee: "" })).toEqual(["d2", "d4"]);
      expect(await choose("t1", { ...all, assignee: "u2" })).toEqual(["d3"]);
      expect(await choose("t2", all)).toEqual(["d9"]);
      expect((await b.bulkDeals.byIds("t1", ["d3", "d1", "d9", "nope"])).map((t) => t.id)).toEqual(["d1", "d3"]);
      expect(await b.bulkDeals.memberExists("t1", "u2")).toBe(true);
      expect(await b.bulkDeals.memberExists("t1", "u9")).toBe(false);
    });

    test("a batch sets stage and assignee with timeline entries, events and undo entries; a revert puts back what still holds the change's value", async () => {
      expect(await b.jobs.create(job("j1"))).toBe(true);
      const targets = await b.bulkDeals.byIds("t1", ["d1", "d2", "d3"]);
      await b.bulkDeals.setTotal("t1", "j1", 3, 99_000);
      expect(await b.bulkDeals.apply("t1", "j1", 5_000, 99_000, targets, { set: { stage: "won", assigned_to: "u2" } }, USER)).toEqual({ updated: 3, unchanged: 0 });
      expect(await b.jobs.get("t1", "j1")).toMatchObject({ total: 3, done: 3, updated: 3, unchanged: 0 });
      await countersAgree();
      expect(await b.crm.deals.byId("t1", "d1")).toMatchObject({ stage: "won", assigned_to: "u2", assignee_name: "Zed", stage_changed_at: 5_000, updated_at: 5_000 });
      // d1's stage and assignee both moved: two entries numbered after its first (newest first: the stage, then the assignee).
      const t1 = await b.crm.activities.timeline("t1", "d1", 10, 0);
      expect(t1.rows.map((r) => [r.type, JSON.parse(r.data).job_id ?? null])).toEqual([["stage_changed", "j1"], ["updated", "j1"], ["created", null]]);
      // d3 was already Zed's: only its stage moved.
      const t3 = await b.crm.activities.timeline("t1", "d3", 10, 0);
      expect(t3.rows.map((r) => r.type)).toEqual(["stage_changed", "created"]);
      expect(JSON.parse(t3.rows[0]!.data)).toEqual({ from: "new", to: "won", job_id: "j1" });
      const events = await b.rows<{ type: string; data: string }>("SELECT type, data FROM events WHERE tenant_id = $1 ORDER BY seq", ["t1"]);
      const mine = events.filter((e) => JSON.parse(e.data).job_id === "j1");
      expect(mine.map((e) => [e.type, JSON.parse(e.data).id])).toEqual([["deal.stage_changed", "d1"], ["deal.updated", "d2"], ["deal.stage_changed", "d3"]]);
      expect(Number((await b.rows<{ n: number }>("SELECT count(*) AS n FROM crm_job_undo WHERE tenant_id = $1 AND job_id = $2", ["t1", "j1"]))[0]!.n)).toBe(3);
      await b.jobs.finish("t1", "j1", 6_000, "succeeded", null, "[]", 0, null);
      // Someone moves d2 on since: its stage stays, its assignee goes back.
      expect(await b.crm.deals.update("t1", "d2", (c) => ({ ...c, stage: "lost" }), 7_000)).toEqual({ ok: true });
      expect(await b.jobs.create(job("u1", "deals_bulk_undo"))).toBe(true);
      const r = await b.bulkDeals.revert("t1", "j1", "u1", 8_000, 99_000, 2, USER);
      expect(r).toEqual({ entries: 2, reverted: 2, restored: 0, skipped: 0 });
      expect(await b.bulkDeals.revert("t1", "j1", "u1", 8_000, 99_000, 2, USER)).toEqual({ entries: 1, reverted: 1, restored: 0, skipped: 0 });
      expect(await b.bulkDeals.revert("t1", "j1", "u1", 8_000, 99_000, 2, USER)).toEqual({ entries: 0, reverted: 0, restored: 0, skipped: 0 });
      expect(await b.crm.deals.byId("t1", "d1")).toMatchObject({ stage: "new", assigned_to: "u1", assignee_name: "Ann", stage_changed_at: 1_000 });
      expect(await b.crm.deals.byId("t1", "d2")).toMatchObject({ stage: "lost", assigned_to: null, assignee_name: null });
      expect(await b.crm.deals.byId("t1", "d3")).toMatchObject({ stage: "new", assigned_to: "u2" });
      expect(await b.jobs.get("t1", "u1")).toMatchObject({ done: 3, updated: 3, added: 0, unchanged: 0 });
      expect(JSON.parse((await b.crm.activities.timeline("t1", "d1", 10, 0)).rows[0]!.data)).toMatchObject({ job_id: "u1", undo_of: "j1" });
      expect(await b.bulkDeals.undoLeft("t1", "j1")).toBe(0);
      await countersAgree();
      await b.jobs.finish("t1", "u1", 9_000, "succeeded", null, "[]", 0, null);
      expect((await b.bulkDeals.lastOf("t1", "u1"))?.id).toBe("j1");
    });

    test("a delete keeps the row, timeline and notes in the log; the revert brings them back as they were", async () => {
      expect(await b.crm.activities.insertNote({ tenant_id: "t1", id: "n1", deal_id: "d4", author_id: "u1", body: "Remember", created_at: 2_000, updated_at: 2_000 })).toBe(true);
      const before = await b.crm.deals.byId("t1", "d4");
      const timeline = await b.crm.activities.timeline("t1", "d4", 10, 0);
      expect(await b.jobs.create(job("j2"))).toBe(true);
      expect(await b.bulkDeals.apply("t1", "j2", 10_000, 99_000, await b.bulkDeals.byIds("t1", ["d4"]), { delete: true }, USER)).toEqual({ updated: 1, unchanged: 0 });
      expect(await b.crm.deals.byId("t1", "d4")).toBeNull();
      await countersAgree();
      const r = await b.bulkDeals.revert("t1", "j2", null, 11_000, 99_000, 10, USER);
      expect(r).toEqual({ entries: 1, reverted: 0, restored: 1, skipped: 0 });
      expect(await b.crm.deals.byId("t1", "d4")).toEqual(before);
      const after = await b.crm.activities.timeline("t1", "d4", 10, 0);
      expect(after.rows[0]).toMatchObject({ type: "restored" });
      expect(after.rows.slice(1)).toEqual(timeline.rows);
      expect(await choose("t1", { ...all, search: "three" })).toEqual(["d4"]);
      await countersAgree();
      await b.jobs.finish("t1", "j2", 12_000, "failed", "x", "[]", 0, null);
    });

    test("a stage or assignee removed meanwhile fails the batch, writing nothing of it", async () => {
      expect(await b.jobs.create(job("j3"))).toBe(true);
      const targets = await b.bulkDeals.byIds("t1", ["d1"]);
      await expect(b.bulkDeals.apply("t1", "j3", 13_000, 99_000, targets, { set: { stage: "gone" } }, USER)).rejects.toBeInstanceOf(BulkTargetGone);
      await expect(b.bulkDeals.apply("t1", "j3", 13_000, 99_000, targets, { set: { assigned_to: "u9" } }, USER)).rejects.toBeInstanceOf(BulkTargetGone);
      expect(await stageOf("d1")).toBe("new");
      expect(await b.jobs.get("t1", "j3")).toMatchObject({ done: 0, updated: 0 });
      await b.jobs.finish("t1", "j3", 14_000, "failed", "x", "[]", 0, null);
    });

    test("recovery's orphans: a bulk change inside its undo window keeps its log; after it, the log is listed for clean-up", async () => {
      expect(await b.jobs.create(job("j4"))).toBe(true);
      await b.bulkDeals.apply("t1", "j4", 15_000, 99_000, await b.bulkDeals.byIds("t1", ["d1"]), { set: { stage: "qualified" } }, USER);
      await b.jobs.finish("t1", "j4", 16_000, "succeeded", null, "[]", 0, null);
      expect((await b.jobs.orphans(Number.MAX_SAFE_INTEGER, 16_000)).map((o) => o.id)).not.toContain("j4");
      expect((await b.jobs.orphans(Number.MAX_SAFE_INTEGER, 16_001)).map((o) => o.id)).toContain("j4");
    });
  });
}
