import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Db } from "../../src/db/database";
import { foldAll as sqliteFoldAll } from "../../src/db/search-fold";
import type { Pg } from "../../src/stores/postgres/database";
import { DEFER_ROWS_MAX, foldAll as pgFoldAll, foldNext, foldTenant } from "../../src/stores/postgres/search-fold";
import { testApp } from "../helpers";
import { testSql } from "../support/sql";
import { type CrmOrg, crmOrg } from "./support";

// A 1-3 letter search's totals are its gram counters plus the deal writes not folded into them yet
// (SQLite: schema version 15; PostgreSQL: 73-deal-search-pending.sql). Through a bulk change, a
// stage deleted with its deals moved, and the fold (partly, then wholly), every total stays exact.

const t = testApp();
let org: CrmOrg;
const holder = t.ctx as unknown as { db?: Db; pg?: Pg };
const fold = async () => (holder.pg ? pgFoldAll(holder.pg) : sqliteFoldAll(holder.db!));
const pendingRows = async () => (await testSql(t.ctx).get<{ n: number }>("SELECT count(*) AS n FROM deal_search_pending WHERE tenant_id = ?", org.tenant.id))!.n;

/** Titles: "alpha 0" …; what each search and stage filter must count, worked out from the deals' stages here. */
const TITLES = Array.from({ length: 24 }, (_, i) => `${["alpha", "beta", "gamma"][i % 3]} ${i}`);
const stageOf = new Map<string, string>();

async function finished(id: string) {
  for (let i = 0; i < 4000; i++) {
    const j = await org.ok("GET", `/jobs/${id}`);
    if (j.status !== "running") return j;
    await Bun.sleep(5);
  }
  throw new Error("still running");
}

/** Each search and stage filter's total against the deals' titles and stages as this test moved them. */
async function totalsAgree(): Promise<void> {
  const stages = [null, "new", "won", "parked", "qualified", "proposal"];
  for (const term of ["a", "al", "lph", "e", "ta", "mm", "a 1", "1"]) {
    for (const stage of stages) {
      const want = TITLES.filter((title) => title.includes(term) && (stage === null || stageOf.get(title) === stage)).length;
      const got = (await org.list(`search=${encodeURIComponent(term)}${stage ? `&stage=${stage}` : ""}`)).total;
      expect({ term, stage, total: got }).toEqual({ term, stage, total: want });
    }
  }
  // Two stages at once in stage order (PostgreSQL counts them stage by stage).
  const two = (await org.list("search=a&stage=won&stage=new&sort=stage")).total;
  expect(two).toBe(TITLES.filter((x) => x.includes("a") && ["won", "new"].includes(stageOf.get(x)!)).length);
}

beforeAll(async () => {
  org = await crmOrg(t, "pendingorg");
  await org.ok("POST", "/pipeline-stages", { key: "parked", name: "Parked" });
  // The account's name is in every deal's search text: "Zq" shares no piece with the terms below.
  const account = await org.account("Zq");
  for (const title of TITLES) {
    await org.deal({ title, account_id: account.id });
    stageOf.set(title, "new");
  }
});
afterAll(() => t.close());

describe("search totals with pending counter rows", () => {
  test("through a bulk change, a stage deleted with its deals moved, and the fold", async () => {
    await fold();
    // A bulk change: every "alpha" deal to parked.
    const r = await org.call("POST", "/deals/bulk", { filter: { search: "alpha" }, set: { stage: "parked" } });
    expect(r.status).toBe(202);
    expect(await finished(r.body.id)).toMatchObject({ status: "succeeded", updated: 8 });
    for (const title of TITLES) if (title.startsWith("alpha")) stageOf.set(title, "parked");
    expect(await pendingRows()).toBeGreaterThan(0);
    await totalsAgree();
    // The parked stage goes, its deals to won: its counters and pending rows with it.
    const parked = (await org.ok("GET", "/pipeline-stages")).find((s: { key: string }) => s.key === "parked");
    await org.ok("DELETE", `/pipeline-stages/${parked.id}?move_to=won`, undefined, 204);
    for (const [title, stage] of stageOf) if (stage === "parked") stageOf.set(title, "won");
    await totalsAgree();
    expect(await fold()).toBeGreaterThan(0);
    expect(await pendingRows()).toBe(0);
    await totalsAgree();
    // No counter left below zero, nor counting anything in the deleted stage (zero rows may stay).
    const sql = testSql(t.ctx);
    expect(await sql.all("SELECT gram, stage, n FROM deal_gram_counts WHERE tenant_id = ? AND (n < 0 OR (stage = 'parked' AND n <> 0))", org.tenant.id)).toEqual([]);
  });

  test.skipIf(!holder.pg)("PostgreSQL: the rows wait for the organization's running job, a fold takes them in parts, skips an organization another fold holds, and the totals stay exact between", async () => {
    const pg = holder.pg!;
    const listed: Array<{ id: string; title: string }> = (await org.list("size=100")).items;
    for (const d of listed.slice(0, 6)) {
      await org.ok("PATCH", `/deals/${d.id}`, { stage: "qualified" });
      stageOf.set(d.title, "qualified");
    }
    const before = await pendingRows();
    expect(before).toBeGreaterThanOrEqual(12);
    // The organization's job running: its rows wait for its end, unless it has written past the bound.
    const sql = testSql(t.ctx);
    await sql.run(
      `INSERT INTO crm_jobs (tenant_id, id, kind, status, user_id, total, done, added, updated, unchanged, error_count, errors, message, created_at, finished_at, lease_until)
       VALUES (?, 'fold-job', 'deals_bulk', 'running', NULL, 0, 0, 0, 0, 0, 0, '[]', NULL, ?, NULL, ?)`,
      org.tenant.id, Date.now(), Date.now() + 60_000,
    );
    expect(await foldNext(pg, "")).toBeNull();
    expect(await pendingRows()).toBe(before);
    await sql.run("UPDATE crm_jobs SET done = ? WHERE tenant_id = ? AND id = 'fold-job'", DEFER_ROWS_MAX / 2, org.tenant.id);
    expect(await foldNext(pg, "")).toEqual({ tenantId: org.tenant.id, folded: before });
    await totalsAgree();
    await sql.run("UPDATE crm_jobs SET status = 'succeeded', done = 0 WHERE tenant_id = ? AND id = 'fold-job'", org.tenant.id);
    // Once the job ends, in parts.
    for (const d of listed.slice(6, 9)) {
      await org.ok("PATCH", `/deals/${d.id}`, { stage: "proposal" });
      stageOf.set(d.title, "proposal");
    }
    expect(await pendingRows()).toBe(6);
    expect(await foldTenant(pg, org.tenant.id, 5)).toBe(5);
    expect(await pendingRows()).toBe(1);
    await totalsAgree();
    for (const d of listed.slice(9, 12)) {
      await org.ok("PATCH", `/deals/${d.id}`, { stage: "proposal" });
      stageOf.set(d.title, "proposal");
    }
    // Another fold (another instance) holds the organization: this one stands aside.
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let held!: () => void;
    const holding = new Promise<void>((r) => (held = r));
    const other = pg.begin(async (tx) => {
      await tx.run`SELECT deal_search_fold_lock(${org.tenant.id})`;
      held();
      await released;
    });
    await holding;
    expect(await foldTenant(pg, org.tenant.id)).toBe(0);
    release();
    await other;
    expect(await foldTenant(pg, org.tenant.id)).toBe(7);
    expect(await pendingRows()).toBe(0);
    await totalsAgree();
  });
});
