// SQLite's batch writers (an import's batch, a bulk change's batch and its undo) add ONE segment to
// the deal search's full-text index a batch, not one a deal. FTS5 writes what a statement's
// triggers gave it as a segment when the next statement of the transaction opens a savepoint (any
// deal write with triggers does), so a statement a deal made a segment a deal, each merged again
// later (a whole level at once, inside a batch, at `crisismerge` segments). The batches write
// their deals in one statement; this checks the segment count each batch leaves.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { JobRow } from "../../src/crm/export-import/jobs-repo";
import type { ImportItem } from "../../src/crm/export-import/import-rows";
import { levelsOf } from "../../src/db/fts-structure";
import { CRM_BACKENDS, type CrmBackend, dealFields } from "./crm-support";

const USER = { type: "user" as const, id: "u1" };
const DEALS = 30;
const job = (id: string, kind: string): JobRow => ({
  tenant_id: "t1", id, kind, status: "running", user_id: "u1", total: 0, done: 0, added: 0, updated: 0, unchanged: 0, error_count: 0,
  errors: "[]", message: null, created_at: 9_000, finished_at: null, lease_until: 99_000, detail: '{"action":"change"}',
});

describe("full-text index segments a batch (sqlite)", () => {
  let b: CrmBackend;
  /** Segments in the index, all levels (nothing merges them here: no upkeep runs). */
  const segments = async () => {
    const [row] = await b.rows<{ block: Uint8Array }>("SELECT block FROM deals_fts_data WHERE id = 10");
    return row ? levelsOf(row.block).reduce((n, l) => n + l.segments.length, 0) : 0;
  };
  const matches = async (term: string) => (await b.rows<{ n: number }>("SELECT count(*) AS n FROM deals_fts WHERE deals_fts MATCH $1", [term]))[0]!.n;
  beforeAll(async () => {
    b = await CRM_BACKENDS.find((x) => x.name === "sqlite")!.fresh();
    await b.addTenant("t1");
    await b.addUser("t1", "u1", "ann@x.test", "Ann");
    await b.crm.insertAccount({ id: "a1", tenant_id: "t1", name: "Acme", domain: null, industry: null, created_at: 1, updated_at: 1 });
  });
  afterAll(() => b.close());

  test("an import batch of 30 new deals adds one segment, and every deal is found", async () => {
    expect(await b.jobs.create(job("imp", "deals"))).toBe(true);
    const items = Array.from({ length: DEALS }, (_, i): ImportItem => {
      const row = { ...dealFields({ account_id: "a1", title: `Zebrafish ${i}` }), id: `imp${i}`, account_name: "Acme", contact_name: null, assignee_name: null, assignee_email: null };
      return { entity: "deal", row, line: i + 2, fromFile: true, matchId: null, externalId: null } as ImportItem;
    });
    const before = await segments();
    expect(await b.jobs.applyBatch("t1", "imp", 9_000, 99_000, items, new Set(["title", "account_name"]), DEALS)).toEqual({ added: DEALS, updated: 0, unchanged: 0 });
    expect(await segments()).toBe(before + 1);
    expect(await matches('search_text:"zebrafish"')).toBe(DEALS);
    await b.jobs.finish("t1", "imp", 9_100, "succeeded", null, "[]", 0, null);
  });

  test("a bulk change's batch adds one segment, its undo's batch one more; the stage filter finds them where they are", async () => {
    const targets = (await b.rows<{ seq: number; id: string }>("SELECT seq, id FROM deals WHERE tenant_id = $1 ORDER BY seq", ["t1"])).slice(0, DEALS);
    expect(targets).toHaveLength(DEALS);
    expect(await b.jobs.create(job("bulk", "deals_bulk"))).toBe(true);
    let before = await segments();
    expect(await b.bulkDeals.apply("t1", "bulk", 10_000, 99_000, targets, { set: { stage: "won", assigned_to: "u1" } }, USER)).toEqual({ updated: DEALS, unchanged: 0 });
    expect(await segments()).toBe(before + 1);
    const stageToken = (await b.rows<{ t: string }>("SELECT stage_token AS t FROM deals WHERE tenant_id = $1 AND id = $2", ["t1", targets[0]!.id]))[0]!.t;
    expect(await matches(`search_text:"zebrafish" AND stage_token:"${stageToken}"`)).toBe(DEALS);
    before = await segments();
    expect(await b.bulkDeals.revert("t1", "bulk", null, 11_000, 99_000, DEALS, USER)).toEqual({ entries: DEALS, reverted: DEALS, restored: 0, skipped: 0 });
    expect(await segments()).toBe(before + 1);
    expect(await matches(`search_text:"zebrafish" AND stage_token:"${stageToken}"`)).toBe(0);
    await b.jobs.finish("t1", "bulk", 11_100, "succeeded", null, "[]", 0, null);
  });

  test("a bulk delete's batch adds one segment and the deals leave the index", async () => {
    const targets = (await b.rows<{ seq: number; id: string }>("SELECT seq, id FROM deals WHERE tenant_id = $1 ORDER BY seq", ["t1"])).slice(0, 10);
    expect(await b.jobs.create(job("del", "deals_bulk"))).toBe(true);
    const before = await segments();
    expect(await b.bulkDeals.apply("t1", "del", 12_000, 99_000, targets, { delete: true }, USER)).toEqual({ updated: 10, unchanged: 0 });
    expect(await segments()).toBe(before + 1);
    expect(await matches('search_text:"zebrafish"')).toBe(DEALS - 10);
  });
});
