import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { testApp } from "../helpers";
import type { JobRow } from "../../src/crm/export-import/jobs-repo";
import { type CrmOrg, crmOrg } from "./support";

// A bulk change lands whole or not at all (issue 32): a failing batch reverts the batches before
// it; a job a dead server left running is reverted by recovery; an undo it left running is
// finished; a log past its undo window is dropped.

const t = testApp();
let org: CrmOrg;
let account: { id: string };

async function finished(id: string) {
  for (let i = 0; i < 4000; i++) {
    const j = await t.json("GET", `/api/v1/crm/jobs/${id}`, { token: org.token });
    if (j.body.status !== "running") return j.body;
    await Bun.sleep(5);
  }
  throw new Error("still running");
}
async function deals(prefix: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await org.deal({ title: `${prefix} ${i}`, account_id: account.id })).id);
  return ids;
}
const stages = async (ids: string[]) => Promise.all(ids.map(async (id) => (await org.call("GET", `/deals/${id}`)).body.stage as string));
const orphan = (id: string, kind: string, o: Partial<JobRow> = {}): JobRow => ({
  tenant_id: org.tenant.id, id, kind, status: "running", user_id: org.user.id, total: 0, done: 0, added: 0, updated: 0, unchanged: 0, error_count: 0,
  errors: "[]", message: null, created_at: Date.now(), finished_at: null, lease_until: Date.now() - 1, detail: JSON.stringify({ action: "change", set: { stage: "won" } }), ...o,
});

beforeAll(async () => {
  org = await crmOrg(t, "bulkcrash");
  account = await org.account("Acme");
});
afterAll(() => t.close());

describe("whole or not at all", () => {
  test("a batch that fails after others committed: the job reverts them all and fails with a sentence", async () => {
    const ids = await deals("Failing", 60);
    const store = t.ctx.repos.bulkDeals;
    const apply = store.apply;
    let calls = 0;
    store.apply = async (...a) => {
      if (++calls === 3) throw new Error("disk on fire");
      return apply.apply(store, a);
    };
    try {
      const r = await org.call("POST", "/deals/bulk", { filter: { search: "failing" }, set: { stage: "won" } });
      expect(r.status).toBe(202);
      const job = await finished(r.body.id);
      expect(calls).toBe(3);
      expect(job).toMatchObject({ status: "failed", total: 60, message: "The bulk change failed on our side, so nothing of it was kept. Try again later." });
      expect(job.done).toBeGreaterThan(0);
    } finally {
      store.apply = apply;
    }
    expect(new Set(await stages(ids))).toEqual(new Set(["new"]));
    expect(await store.undoLeft(org.tenant.id, (await t.json("GET", "/api/v1/crm/jobs", { token: org.token })).body.items[0].id)).toBe(0);
    // A failed change has nothing to undo.
    const failed = (await t.json("GET", "/api/v1/crm/jobs", { token: org.token })).body.items[0];
    expect(failed.bulk.undo_until).toBeNull();
    const u = await org.call("POST", `/jobs/${failed.id}/undo`);
    expect(u.status).toBe(409);
    expect(u.body).toMatchObject({ code: "nothing_to_undo" });
  });
});

describe("recovery after a crash", () => {
  test("a bulk change a dead server left running is reverted and failed; an undo left running is finished", async () => {
    const ids = await deals("Crashed", 5);
    const repos = t.ctx.repos;
    const targets = await repos.bulkDeals.byIds(org.tenant.id, ids);
    expect(await repos.jobs.create(orphan("crashed-bulk", "deals_bulk"))).toBe(true);
    await repos.bulkDeals.apply(org.tenant.id, "crashed-bulk", Date.now(), Date.now() - 1, targets.slice(0, 3), { set: { stage: "won" } }, { type: "user", id: org.user.id });
    expect(await stages(ids)).toEqual(["won", "won", "won", "new", "new"]);
    expect(await t.ctx.jobs.recover(Date.now())).toBe(1);
    expect(await stages(ids)).toEqual(["new", "new", "new", "new", "new"]);
    expect(await finished("crashed-bulk")).toMatchObject({ status: "failed", message: expect.stringMatching(/server stopped/) });

    // A finished change whose undo was under way when the server died: recovery finishes the undo.
    const done = orphan("done-bulk", "deals_bulk");
    expect(await repos.jobs.create(done)).toBe(true);
    await repos.bulkDeals.apply(org.tenant.id, "done-bulk", Date.now(), Date.now() + 60_000, targets, { set: { stage: "lost" } }, { type: "user", id: org.user.id });
    await repos.jobs.finish(org.tenant.id, "done-bulk", Date.now(), "succeeded", null, "[]", 0, null);
    expect(await repos.jobs.create(orphan("crashed-undo", "deals_bulk_undo", { total: 5, detail: JSON.stringify({ action: "undo", undo_of: "done-bulk" }) }))).toBe(true);
    await repos.bulkDeals.revert(org.tenant.id, "done-bulk", "crashed-undo", Date.now(), Date.now() - 1, 2, { type: "user", id: org.user.id });
    expect((await stages(ids)).filter((s) => s === "new")).toHaveLength(2);
    expect(await t.ctx.jobs.recover(Date.now())).toBe(1);
    expect(await stages(ids)).toEqual(["new", "new", "new", "new", "new"]);
    expect(await finished("crashed-undo")).toMatchObject({ status: "succeeded", done: 5, updated: 5 });
  });

  test("a log inside its undo window survives recovery; past it, recovery drops it", async () => {
    const ids = await deals("Window", 2);
    const repos = t.ctx.repos;
    expect(await repos.jobs.create(orphan("recent-bulk", "deals_bulk"))).toBe(true);
    await repos.bulkDeals.apply(org.tenant.id, "recent-bulk", Date.now(), Date.now() + 60_000, await repos.bulkDeals.byIds(org.tenant.id, ids), { set: { stage: "won" } }, { type: "user", id: org.user.id });
    await repos.jobs.finish(org.tenant.id, "recent-bulk", Date.now(), "succeeded", null, "[]", 0, null);
    await t.ctx.jobs.recover(Number.MAX_SAFE_INTEGER);
    expect(await repos.bulkDeals.undoLeft(org.tenant.id, "recent-bulk")).toBe(2);
    await repos.jobs.finish(org.tenant.id, "recent-bulk", Date.now() - 11 * 60_000, "succeeded", null, "[]", 0, null);
    await t.ctx.jobs.recover(Number.MAX_SAFE_INTEGER);
    expect(await repos.bulkDeals.undoLeft(org.tenant.id, "recent-bulk")).toBe(0);
    // The deals keep the change: only the way back is gone.
    expect(await stages(ids)).toEqual(["won", "won"]);
  });
});
