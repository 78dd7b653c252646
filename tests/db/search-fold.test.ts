// The search counters' pending rows, their fold (schema version 15) and a burst's sweep (version
// 34): totals and pages stay exact while deal changes wait to be folded and at every phase of a
// sweep, a step is one transaction (a process killed with SIGKILL in the middle of a sweep leaves
// the counters exact, and another connection finishes it), and the folded counters equal a recount.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bulkSeed } from "../../src/stores/sqlite/bulk-load";
import { recountDealGrams } from "../../src/db/deal-grams";
import { recountDealKeyGrams } from "../../src/db/deal-key-grams";
import { DEFER_ROWS_MAX, DROPPED_ROWS_STEP, FOLD_STEP_MS, foldAll, foldSearchCounters, holdFold, pendingSearchRows, releaseFold } from "../../src/db/search-fold";
import { SWEEP_FROM_ROWS, TALLY } from "../../src/db/search-sweep";
import { gramKeysOf, gramOfKey, gramsOf, nextChunkRows } from "../../src/db/fold-tally";
import { createSqliteDealsQuery } from "../../src/stores/sqlite/deals-query";
import type { DealListQuery, SortField } from "../../src/crm/model";
import { testApp } from "../helpers";
import { type CrmOrg, crmOrg, dealsOf, referencePage } from "../crm/support";

const dir = mkdtempSync(join(tmpdir(), "search-fold-"));
const file = join(dir, "fold.db");
const t = testApp({ db: file, backend: "sqlite" });
let org: CrmOrg;
let tenantId: string;
afterAll(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Both counter tables' rows (zeros aside), as text. */
const counters = () =>
  [
    ...(t.ctx.db.query("SELECT tenant_id, gram, stage, assignee, n FROM deal_gram_counts WHERE n <> 0 ORDER BY 1, 2, 3, 4").values() as unknown[][]),
    ...(t.ctx.db.query("SELECT tenant_id, ord, gram, bucket, n FROM deal_key_grams WHERE n <> 0 ORDER BY 1, 2, 3, 4").values() as unknown[][]),
  ].map((r) => r.join("|"));

/** The counters as folded equal a recount from the deals (which then replaces them). */
function countersEqualRecount() {
  const folded = counters();
  t.ctx.db.transaction(() => {
    recountDealGrams(t.ctx.db);
    recountDealKeyGrams(t.ctx.db);
  })();
  expect(folded).toEqual(counters());
}

/** Another organization with a few deals, all folded; the counters of everyone else as they stand. */
async function anotherOrgFolded(subdomain: string, name: string) {
  const other = await crmOrg(t, subdomain);
  const acc = await other.account(`${name} Ltd`);
  for (let i = 0; i < 3; i++) await other.deal({ title: `${name} ${i}`, account_id: acc.id, stage: "new" });
  foldAll(t.ctx.db);
  return { other, acc, before: counters().filter((r) => !r.startsWith(other.tenant.id)) };
}

/** Totals and pages of short terms, with filters and the text sorts (the bucket walk), against a reference over the deals. */
async function pagesAgree(label: string) {
  const deals = dealsOf(t.ctx.db, tenantId);
  const users = [...new Set(deals.map((d) => d.assigned_to).filter((a) => a !== null))] as string[];
  const query = createSqliteDealsQuery(t.ctx.db);
  let nonEmpty = 0;
  for (const search of ["e", "kq", "kqz", "ion", "zzz"])
    for (const stages of [null, ["won"], ["new", "lost"]])
      for (const assignee of [null, "", users[0]!])
        for (const sortBy of ["title", "account_name", "contact_name", "value"] as SortField[]) {
          const q: DealListQuery = { page: 1, size: 10, search, stages, assignee, sortBy, sortDir: sortBy === "title" ? "desc" : "asc" };
          const want = referencePage(deals, q);
          if (want.total > 0) nonEmpty++;
          expect({ label, q, got: await query.list(tenantId, q) }).toEqual({ label, q, got: want });
        }
  expect(nonEmpty).toBeGreaterThan(50);
}

beforeAll(async () => {
  org = await crmOrg(t, "foldco");
  tenantId = org.tenant.id;
  bulkSeed(t.ctx.db, [{ tenantId, subdomain: "foldco", deals: 1500, passwordHash: await t.ctx.hasher.hash("demo password") }], t.ctx.now());
}, 60_000);

describe("pending search counter rows", () => {
  test("a deal write appends its counted states, not counter rows; an edit of other fields appends nothing", async () => {
    const before = counters();
    const acc = await org.account("Kqz Holdings");
    const d = await org.deal({ title: "Kqz first", account_id: acc.id, stage: "new" });
    expect(pendingSearchRows(t.ctx.db, tenantId)).toBe(1);
    await org.ok("PATCH", `/deals/${d.id}`, { value: "12.50", probability: 40 });
    expect(pendingSearchRows(t.ctx.db, tenantId)).toBe(1);
    await org.ok("PATCH", `/deals/${d.id}`, { title: "Kqz second" });
    expect(pendingSearchRows(t.ctx.db, tenantId)).toBe(3);
    await org.ok("DELETE", `/deals/${d.id}`, undefined, 204);
    expect(pendingSearchRows(t.ctx.db, tenantId)).toBe(4);
    expect(counters()).toEqual(before);
    // Created, renamed and deleted: folded, the counters are what they were.
    foldAll(t.ctx.db);
    expect(pendingSearchRows(t.ctx.db)).toBe(0);
    expect(counters()).toEqual(before);
  });

  test("totals and pages are exact with changes pending, partly folded and folded, and the fold equals a recount", async () => {
    const run = (sql: string) => t.ctx.db.run(sql, [tenantId]);
    run("UPDATE deals SET title = title || ' kqz', title_key = title_key || ' kqz', search_text = search_text || ' kqz' WHERE tenant_id = ?1 AND seq % 3 = 0");
    run("UPDATE deals SET stage = 'won' WHERE tenant_id = ?1 AND seq % 5 = 0");
    run("UPDATE deals SET assigned_to = NULL, assignee_key = NULL, assignee_name = NULL, assignee_email = NULL WHERE tenant_id = ?1 AND seq % 7 = 0");
    // Renamed accounts and a contact: their deals' names, keys (another bucket) and search text follow, in the rename's transaction.
    const named = t.ctx.db.query("SELECT account_id, contact_id FROM deals WHERE tenant_id = ?1 AND contact_id IS NOT NULL ORDER BY seq LIMIT 3").all(tenantId) as Array<{ account_id: string; contact_id: string }>;
    for (const [i, n] of named.entries()) await org.ok("PATCH", `/accounts/${n.account_id}`, { name: `Kqaccount ${i}` });
    await org.ok("PATCH", `/contacts/${named[0]!.contact_id}`, { first_name: "Akqa" });
    run("DELETE FROM deals WHERE tenant_id = ?1 AND seq % 13 = 0");
    const pending = pendingSearchRows(t.ctx.db, tenantId);
    expect(pending).toBeGreaterThan(1000);
    await pagesAgree("all pending");
    let steps = 0;
    while (pendingSearchRows(t.ctx.db) > pending / 2) {
      expect(foldSearchCounters(t.ctx.db, 1)).toBeGreaterThan(0);
      steps++;
    }
    expect(steps).toBeGreaterThan(1);
    await pagesAgree("half folded");
    foldAll(t.ctx.db);
    await pagesAgree("folded");
    countersEqualRecount();
  }, 60_000);

  test("a process killed with SIGKILL while folding leaves exact totals, and the rest folds to a recount's rows", async () => {
    t.ctx.db.run("UPDATE deals SET title = title || ' zq', title_key = title_key || ' zq', search_text = search_text || ' zq' WHERE tenant_id = ?1 AND seq % 2 = 0", [tenantId]);
    const pending = pendingSearchRows(t.ctx.db);
    expect(pending).toBeGreaterThan(1000);
    // Another process folds in steps of 1 ms until it is killed.
    const child = Bun.spawn(
      [
        process.execPath,
        "-e",
        `const { openDatabase } = await import(${JSON.stringify(join(import.meta.dir, "../../src/db/database.ts"))});
         const { foldSearchCounters } = await import(${JSON.stringify(join(import.meta.dir, "../../src/db/search-fold.ts"))});
         const db = openDatabase(${JSON.stringify(file)});
         for (;;) foldSearchCounters(db, 1);`,
      ],
      { stdout: "ignore", stderr: "ignore" },
    );
    // So many rows make a sweep (search-sweep.ts): killed once it has written some of the
    // counters, not all of them (its cursor moved; the tally in the killed process's memory is lost).
    const deadline = Date.now() + 30_000;
    const writing = () => t.ctx.db.query("SELECT 1 AS x FROM deal_search_sweeps WHERE (gram <> '' AND grams_done = 0) OR (key_ord <> '' AND keys_done = 0)").get() !== null;
    while (!writing() && Date.now() < deadline) await Bun.sleep(1);
    child.kill("SIGKILL");
    await child.exited;
    // Killed within the sweep (its rows are deleted only once every counter is written).
    expect(t.ctx.db.query("SELECT count(*) AS n FROM deal_search_sweeps").get()).toEqual({ n: 1 });
    const left = pendingSearchRows(t.ctx.db);
    expect(left).toBeLessThanOrEqual(pending);
    expect(left).toBeGreaterThan(0);
    await pagesAgree("after SIGKILL");
    foldAll(t.ctx.db);
    await pagesAgree("folded after SIGKILL");
    countersEqualRecount();
  }, 90_000);

  test("a sweep: totals and pages exact at each of its phases, with writes coming in meanwhile; it ends with a recount's counters", async () => {
    const run = (sql: string) => t.ctx.db.run(sql, [tenantId]);
    // A bulk change's shape: many deals to another stage, and some renamed.
    run("UPDATE deals SET stage = 'lost' WHERE tenant_id = ?1 AND stage = 'new'");
    run("UPDATE deals SET title = title || ' kqz', title_key = title_key || ' kqz', search_text = search_text || ' kqz' WHERE tenant_id = ?1 AND seq % 4 = 1");
    const pending = pendingSearchRows(t.ctx.db, tenantId);
    expect(pending).toBeGreaterThanOrEqual(SWEEP_FROM_ROWS);
    const phase = () => {
      const s = t.ctx.db.query("SELECT * FROM deal_search_sweeps WHERE tenant_id = ?1").get(tenantId) as Record<string, string | number> | null;
      if (!s) return "none";
      if (s.grams_done && s.keys_done) return "deleting";
      if (s.grams_done) return s.key_ord === "" ? "grams written" : "keys partly written";
      return s.gram === "" ? "tallying" : "grams partly written";
    };
    const seen: string[] = [];
    const acc = await org.account("Kqz Meanwhile");
    // The tally handed to the temporary tables many times (each part added up in memory first).
    const keys = TALLY.keys;
    TALLY.keys = 2_000;
    for (let steps = 0; steps < 100_000; steps++) {
      const now = phase();
      if (!seen.includes(now)) {
        seen.push(now);
        await pagesAgree(`sweep ${now}`);
        // A write meanwhile: its rows come after those the sweep covers, counted whole until folded.
        await org.deal({ title: `Kqz during ${now}`, account_id: acc.id, stage: "won" });
        await pagesAgree(`sweep ${now}, a deal written meanwhile`);
      }
      if (foldSearchCounters(t.ctx.db, 0.2) === 0) break;
    }
    TALLY.keys = keys;
    expect(seen).toEqual(["none", "tallying", "grams partly written", "grams written", "keys partly written", "deleting"]);
    expect(pendingSearchRows(t.ctx.db)).toBe(0);
    await pagesAgree("swept");
    countersEqualRecount();
    // Nothing of its tally is left in the connection's temporary tables.
    expect(t.ctx.db.query("SELECT (SELECT count(*) FROM temp.sweep_grams) + (SELECT count(*) FROM temp.sweep_keys) AS n").get()).toEqual({ n: 0 });
  }, 90_000);

  test("a deleted organization's pending rows (its deals cascade away) are dropped by the fold", async () => {
    const { other, acc, before } = await anotherOrgFolded("goneco", "Gone");
    await other.deal({ title: "Gone late", account_id: acc.id, stage: "new" });
    t.ctx.db.run("DELETE FROM tenants WHERE id = ?1", [other.tenant.id]);
    expect(pendingSearchRows(t.ctx.db, other.tenant.id)).toBeGreaterThan(0);
    foldAll(t.ctx.db);
    expect(pendingSearchRows(t.ctx.db)).toBe(0);
    expect(counters()).toEqual(before);
  });

  test("an organization's rows wait while it has a job running (an import, a bulk change), others' go on; a job whose lease ran out holds nothing", async () => {
    const { other, acc } = await anotherOrgFolded("busyco", "Busy");
    await other.deal({ title: "Busy late", account_id: acc.id, stage: "new" });
    const now = Date.now();
    const job = (lease: number) =>
      t.ctx.db.run("INSERT INTO crm_jobs (tenant_id, id, kind, status, total, created_at, lease_until) VALUES (?1, 'j_busy', 'deals', 'running', 1, ?2, ?3)", [other.tenant.id, now, lease]);
    job(now + 60_000);
    const before = pendingSearchRows(t.ctx.db, other.tenant.id);
    expect(before).toBeGreaterThan(0);
    // Only the busy organization has rows pending: nothing to fold now.
    expect(pendingSearchRows(t.ctx.db)).toBe(before);
    expect(foldSearchCounters(t.ctx.db, FOLD_STEP_MS, now)).toBe(0);
    // Another organization's row is folded, the busy one's still waits.
    const third = await anotherOrgFolded("calmco", "Calm");
    await third.other.deal({ title: "Calm late", account_id: third.acc.id, stage: "new" });
    expect(pendingSearchRows(t.ctx.db, third.other.tenant.id)).toBeGreaterThan(0);
    while (foldSearchCounters(t.ctx.db, FOLD_STEP_MS, now) > 0);
    expect(pendingSearchRows(t.ctx.db)).toBe(before);
    // A lease that ran out (its server died) holds nothing; neither does a finished job.
    expect(foldSearchCounters(t.ctx.db, FOLD_STEP_MS, now + 61_000)).toBe(before);
    await other.deal({ title: "Busy later", account_id: acc.id, stage: "new" });
    t.ctx.db.run("UPDATE crm_jobs SET status = 'succeeded', finished_at = ?2 WHERE tenant_id = ?1 AND id = 'j_busy'", [other.tenant.id, now]);
    foldAll(t.ctx.db);
    expect(pendingSearchRows(t.ctx.db)).toBe(0);
    countersEqualRecount();
  });

  test("a hold (a seed writing an organization from another process) keeps every organization's rows until it runs out or is released", async () => {
    const { other, acc } = await anotherOrgFolded("heldco", "Held");
    const bystander = await anotherOrgFolded("besideco", "Beside");
    await other.deal({ title: "Held late", account_id: acc.id, stage: "new" });
    const now = Date.now();
    holdFold(t.ctx.db, other.tenant.id, now + 60_000);
    const held = pendingSearchRows(t.ctx.db, other.tenant.id);
    expect(held).toBeGreaterThan(0);
    expect(foldSearchCounters(t.ctx.db, FOLD_STEP_MS, now)).toBe(0);
    // Another organization's rows wait too (a fold step beside the seed reads pages its commits made stale).
    await bystander.other.deal({ title: "Beside late", account_id: bystander.acc.id, stage: "new" });
    const beside = pendingSearchRows(t.ctx.db, bystander.other.tenant.id);
    expect(beside).toBeGreaterThan(0);
    expect(foldSearchCounters(t.ctx.db, FOLD_STEP_MS, now)).toBe(0);
    expect(pendingSearchRows(t.ctx.db, bystander.other.tenant.id)).toBe(beside);
    releaseFold(t.ctx.db, other.tenant.id);
    foldAll(t.ctx.db);
    expect(pendingSearchRows(t.ctx.db)).toBe(0);
    await other.deal({ title: "Held again", account_id: acc.id, stage: "new" });
    const again = pendingSearchRows(t.ctx.db, other.tenant.id);
    holdFold(t.ctx.db, other.tenant.id, now + 60_000);
    // A renewal moves the end; a hold past its end holds nothing (its seed was killed).
    holdFold(t.ctx.db, other.tenant.id, now + 120_000);
    expect(foldSearchCounters(t.ctx.db, FOLD_STEP_MS, now + 61_000)).toBe(0);
    expect(pendingSearchRows(t.ctx.db, other.tenant.id)).toBe(again);
    expect(foldSearchCounters(t.ctx.db, FOLD_STEP_MS, now + 121_000)).toBeGreaterThan(0);
    expect(pendingSearchRows(t.ctx.db, other.tenant.id)).toBe(0);
    // Released, the next rows are folded at once.
    holdFold(t.ctx.db, other.tenant.id, now + 60_000);
    await other.deal({ title: "Held later", account_id: acc.id, stage: "new" });
    expect(foldSearchCounters(t.ctx.db, FOLD_STEP_MS, now)).toBe(0);
    releaseFold(t.ctx.db, other.tenant.id);
    foldAll(t.ctx.db);
    expect(pendingSearchRows(t.ctx.db)).toBe(0);
    expect(t.ctx.db.query("SELECT count(*) AS n FROM deal_search_holds").get()).toEqual({ n: 0 });
    countersEqualRecount();
  });

  test("past DEFER_ROWS_MAX pending rows an organization is folded though its job runs", async () => {
    const { other, acc } = await anotherOrgFolded("pileco", "Pile");
    await other.deal({ title: "Pile late", account_id: acc.id, stage: "new" });
    const now = Date.now();
    t.ctx.db.run("INSERT INTO crm_jobs (tenant_id, id, kind, status, total, created_at, lease_until) VALUES (?1, 'j_pile', 'deals', 'running', 1, ?2, ?3)", [other.tenant.id, now, now + 60_000]);
    expect(foldSearchCounters(t.ctx.db, FOLD_STEP_MS, now)).toBe(0);
    // A -1 and a +1 of one text far along the ids: they cancel in the counters, and the rows now span the bound.
    const first = (t.ctx.db.query("SELECT min(id) AS id FROM deal_search_pending WHERE tenant_id = ?1").get(other.tenant.id) as { id: number }).id;
    const add = t.ctx.db.query("INSERT INTO deal_search_pending (tenant_id, id, sign, stage, assigned_to, search_text, title_key, account_key, contact_key) VALUES (?1, ?2, ?3, 'new', NULL, 'pile', 'pile', 'pile', NULL)");
    add.run(other.tenant.id, first + DEFER_ROWS_MAX - 1, -1);
    add.run(other.tenant.id, first + DEFER_ROWS_MAX, 1);
    // One step with time enough for every row: with FOLD_STEP_MS a loaded machine's step stopped
    // after the first rows, and the two left (a span of 2) waited for the job's end, as they should.
    try {
      expect(foldSearchCounters(t.ctx.db, 60_000, now)).toBeGreaterThan(0);
      expect(pendingSearchRows(t.ctx.db)).toBe(0);
    } finally {
      t.ctx.db.run("UPDATE crm_jobs SET status = 'succeeded', finished_at = ?2 WHERE tenant_id = ?1 AND id = 'j_pile'", [other.tenant.id, now]);
    }
    countersEqualRecount();
  });

  test("passing over an organization whose job runs costs the same at 200,000 pending rows as at 100 (seeks, not a read of its rows)", async () => {
    const { other } = await anotherOrgFolded("waitco", "Wait");
    const now = Date.now();
    t.ctx.db.run("INSERT INTO crm_jobs (tenant_id, id, kind, status, total, created_at, lease_until) VALUES (?1, 'j_wait', 'deals', 'running', 1, ?2, ?3)", [other.tenant.id, now, now + 60_000]);
    const add = t.ctx.db.query("INSERT INTO deal_search_pending (tenant_id, id, sign, stage, assigned_to, search_text, title_key, account_key, contact_key) VALUES (?1, ?2, 1, 'new', NULL, 'wait', 'wait', 'wait', NULL)");
    const pendingUpTo = (n: number) =>
      t.ctx.db.transaction(() => {
        for (let id = pendingSearchRows(t.ctx.db, other.tenant.id) + 1; id <= n; id++) add.run(other.tenant.id, id);
      })();
    // The median of many steps, each passing over the organization (nothing else is pending).
    const stepMs = () => {
      const took: number[] = [];
      for (let i = 0; i < 60; i++) {
        const started = performance.now();
        expect(foldSearchCounters(t.ctx.db, FOLD_STEP_MS, now)).toBe(0);
        took.push(performance.now() - started);
      }
      return took.sort((a, b) => a - b)[30]!;
    };
    pendingUpTo(100);
    const few = stepMs();
    pendingUpTo(200_000);
    const many = stepMs();
    // Reading the rows took 10-25 ms a step at 100,000 (a few µs at 100): a ratio, so a loaded machine does not matter.
    expect(many).toBeLessThan(Math.max(few * 10, 0.5));
    t.ctx.db.run("DELETE FROM deal_search_pending WHERE tenant_id = ?1", [other.tenant.id]);
    t.ctx.db.run("UPDATE crm_jobs SET status = 'succeeded', finished_at = ?2 WHERE tenant_id = ?1 AND id = 'j_wait'", [other.tenant.id, now]);
  }, 30_000);

  test("a deleted organization's many pending rows go a bounded step at a time, oldest first", () => {
    const gone = "t_deleted_with_a_backlog";
    const rows = 2 * DROPPED_ROWS_STEP + 1;
    const add = t.ctx.db.query("INSERT INTO deal_search_pending (tenant_id, id, sign, stage, assigned_to, search_text, title_key, account_key, contact_key) VALUES (?1, ?2, 1, 'new', NULL, 'gone deal', 'gone deal', 'gone', NULL)");
    t.ctx.db.transaction(() => {
      for (let id = 1; id <= rows; id++) add.run(gone, id);
    })();
    const oldest = () => (t.ctx.db.query("SELECT min(id) AS id FROM deal_search_pending WHERE tenant_id = ?1").get(gone) as { id: number | null }).id;
    expect(foldSearchCounters(t.ctx.db)).toBe(DROPPED_ROWS_STEP);
    expect(oldest()).toBe(DROPPED_ROWS_STEP + 1);
    expect(foldSearchCounters(t.ctx.db)).toBe(DROPPED_ROWS_STEP);
    expect(foldSearchCounters(t.ctx.db)).toBe(1);
    expect(pendingSearchRows(t.ctx.db, gone)).toBe(0);
  });

  test("an organization deleted in the middle of its sweep: its rows, sweep and tally go, the others' counters stay", async () => {
    const { other, acc, before } = await anotherOrgFolded("sweptaway", "Swept");
    t.ctx.db.run("UPDATE deals SET title = title || ' x', search_text = search_text || ' x' WHERE tenant_id = ?1", [other.tenant.id]);
    for (let i = 0; i < SWEEP_FROM_ROWS; i++) await other.deal({ title: `Swept more ${i}`, account_id: acc.id, stage: "won" });
    // The tally's tables exist once this connection has swept (not yet when this test runs alone).
    const made = () => t.ctx.db.query("SELECT 1 AS x FROM temp.sqlite_master WHERE name = 'sweep_grams'").get() !== null;
    const tallied = () => (made() ? (t.ctx.db.query("SELECT count(*) AS n FROM temp.sweep_grams WHERE tenant_id = ?1").get(other.tenant.id) as { n: number }) : { n: 0 });
    while (tallied().n === 0) expect(foldSearchCounters(t.ctx.db, 0.2)).toBeGreaterThan(0);
    t.ctx.db.run("DELETE FROM tenants WHERE id = ?1", [other.tenant.id]);
    expect(t.ctx.db.query("SELECT count(*) AS n FROM deal_search_sweeps").get()).toEqual({ n: 0 });
    foldAll(t.ctx.db);
    expect(pendingSearchRows(t.ctx.db)).toBe(0);
    expect(tallied()).toEqual({ n: 0 });
    expect(counters()).toEqual(before);
  });

  test("gramsOf cuts what the seed's tally counts: 1-3 characters, code points, none across a newline", () => {
    expect([...gramsOf("ab\nc🦊")].sort()).toEqual(["a", "ab", "b", "c", "c🦊", "🦊"].sort());
  });

  test("gramKeysOf's keys stand for gramsOf's pieces one to one (astral characters, lone surrogates, NUL, newlines)", () => {
    const letters = ["a", "b", "\n", "c", "🦊", "😀", "é", "\u{10FFFF}", "\u0000", "\ud800", "\udc00", "\uffff"];
    const set = new Set<number | string>();
    let seed = 7;
    const next = (n: number) => (seed = (seed * 1103515245 + 12345) % 2147483648) % n;
    for (let i = 0; i < 5_000; i++) {
      const text = Array.from({ length: next(12) }, () => letters[next(letters.length)]).join("");
      const keys = [...gramKeysOf(text, set)];
      expect({ text, grams: keys.map(gramOfKey).sort() }).toEqual({ text, grams: [...gramsOf(text)].sort() });
    }
  });
});

describe("a fold step's chunk sizes", () => {
  test("grow at most by doubling, whatever pace the first rows promise (their pages may have been cached)", () => {
    // One row in 0.1 ms of a 10 ms budget promises 99 more; the next chunk takes 1.
    expect(nextChunkRows(1, 0.1, 10)).toBe(1);
    expect(nextChunkRows(2, 0.2, 10)).toBe(2);
    expect(nextChunkRows(32, 1, 10)).toBe(32);
    expect(nextChunkRows(100, 1, 10)).toBe(64);
    // The pace still cuts a chunk short, and a spent budget stops the step.
    expect(nextChunkRows(8, 8, 10)).toBe(2);
    expect(nextChunkRows(8, 10, 10)).toBeLessThan(1);
  });
});
