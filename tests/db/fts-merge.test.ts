// The deal search's full-text index merged in the background (schema version 32, src/db/fts-merge.ts):
// FTS5's automerge is off and its crisis merge a backstop, so a deal write adds its segment and
// merges nothing; bounded `merge` steps (the server's upkeep, beside the search counters' fold)
// bring the index back to at most 3 segments a level; the bulk seed leaves it in that shape; and
// search finds the same deals at every stage of it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { migrate } from "../../src/db/migrate";
import { MIN_CHUNK_PAGES, PARKED_LEVEL, chunkPages, ftsMergeStep, mergeAll, parkBulkLoad } from "../../src/db/fts-merge";
import { ftsLevels } from "../../src/db/fts-structure";
import { startSearchFold } from "../../src/db/search-fold";
import { testApp } from "../helpers";
import { undoMigrationsAfter } from "../support/rewind";
import { type CrmOrg, crmOrg } from "../crm/support";

const settings = (db: Database) => Object.fromEntries((db.query("SELECT k, v FROM deals_fts_config WHERE k <> 'version'").all() as { k: string; v: number }[]).map((r) => [r.k, r.v]));
const segmentsOf = (db: Database) => ftsLevels(db, "deals_fts").map((l) => l.segments.length);
/** In shape: no level holds `usermerge` (4) segments, no merge is left half done. */
const inShape = (db: Database) => ftsLevels(db, "deals_fts").every((l) => l.segments.length < 4 && l.merging === 0);

test("a new database and a migrated one turn FTS5's automerge off and keep the crisis merge as a backstop", () => {
  const db = new Database(":memory:");
  migrate(db);
  expect(settings(db)).toEqual({ automerge: 0, crisismerge: 64, usermerge: 4 });
  undoMigrationsAfter(db, 31);
  db.run("PRAGMA user_version = 31");
  expect(settings(db)).toEqual({ automerge: 4, crisismerge: 16, usermerge: 4 });
  migrate(db);
  expect(settings(db)).toEqual({ automerge: 0, crisismerge: 64, usermerge: 4 });
});

describe("the index's segments, written one transaction at a time", () => {
  let db: Database;
  const words = ["renewal", "expansion", "pilot", "migration", "upgrade", "onboarding", "licence", "audit"];
  /** `n` transactions of `rows` index entries each, the way deal writes add them (the index alone: deals_fts keeps its content in deals). */
  const write = (from: number, n: number, rows: number) => {
    const add = db.prepare("INSERT INTO deals_fts (rowid, search_text, stage_token, unassigned_token) VALUES (?1, ?2, 'snew', 'u1')");
    for (let tx = 0; tx < n; tx++)
      db.transaction(() => {
        for (let r = 0; r < rows; r++) {
          const id = from + tx * rows + r;
          add.run(id, `${words[id % words.length]} deal ${id} account ${(id * 7919) % 100_003} contact ${(id * 104_729) % 99_991}`);
        }
      })();
  };
  const matching = (term: string) => (db.query("SELECT count(*) AS n FROM deals_fts WHERE deals_fts MATCH ?1").get(`search_text:"${term}"`) as { n: number }).n;
  beforeAll(() => {
    db = new Database(":memory:");
    migrate(db);
  });

  test("each write transaction adds a segment and merges nothing (FTS5's automerge would have merged at 4)", () => {
    write(1, 20, 1);
    expect(segmentsOf(db)).toEqual([20]);
  });

  test("a merge step is bounded: with a small budget a big level takes many steps, and each leaves the rest for the next", () => {
    write(1_000, 40, 200);
    const before = segmentsOf(db).reduce((a, b) => a + b, 0);
    const auditBefore = matching("audit");
    // A step with no time left runs one chunk, of the fewest pages, which cannot merge 60 segments of several pages each.
    expect(ftsMergeStep(db, 0)).toBe(MIN_CHUNK_PAGES);
    const after = ftsLevels(db, "deals_fts");
    expect(after.some((l) => l.merging > 0)).toBe(true);
    expect(matching("audit")).toBe(auditBefore);
    const steps = mergeAll(db, 0);
    expect(steps).toBeGreaterThan(10);
    expect(inShape(db)).toBe(true);
    expect(segmentsOf(db).reduce((a, b) => a + b, 0)).toBeLessThan(before);
    expect(matching("audit")).toBe(auditBefore);
    // Every eighth id: 2, 10 and 18 of the first 20, and 1,000 of the 8,000 from 1,000.
    expect(matching("pilot")).toBe(3 + 1_000);
    // Nothing left: a step merges nothing and says so.
    expect(ftsMergeStep(db)).toBe(0);
    db.run("INSERT INTO deals_fts (deals_fts, rank) VALUES ('integrity-check', 0)");
  });

  test("without steps, a level is merged whole only once it reaches 64 segments (the backstop)", () => {
    write(100_000, 63, 1);
    expect(segmentsOf(db)[0]).toBe(63);
    write(200_000, 1, 1);
    expect(segmentsOf(db)[0]).toBe(0);
  });
});

describe("the server's upkeep and the bulk seed", () => {
  const dir = mkdtempSync(join(tmpdir(), "fts-merge-"));
  const t = testApp({ db: join(dir, "merge.db"), backend: "sqlite" });
  let org: CrmOrg;
  beforeAll(async () => {
    org = await crmOrg(t, "mergeco");
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("deal creates through the API leave their segments; the upkeep's steps (search-fold.ts) merge them", async () => {
    mergeAll(t.ctx.db);
    const start = segmentsOf(t.ctx.db)[0] ?? 0;
    const account = (await org.account("Upkeep account")) as { id: string };
    for (let i = 0; i < 12; i++) await org.deal({ title: `Upkeep deal ${i}`, account_id: account.id, value_cents: 100 });
    expect(segmentsOf(t.ctx.db)[0]).toBeGreaterThanOrEqual(start + 12);
    const upkeep = startSearchFold(t.ctx.db, 5);
    try {
      for (let i = 0; i < 400 && !inShape(t.ctx.db); i++) await Bun.sleep(5);
    } finally {
      upkeep.stop();
    }
    expect(inShape(t.ctx.db)).toBe(true);
    const found = (await org.list("search=upkeep%20deal&limit=50")) as { items: unknown[] };
    expect(found.items).toHaveLength(12);
  });

  test("a bulk seed leaves the index in shape", async () => {
    const { bulkSeed } = await import("../../src/stores/sqlite/bulk-load");
    const tenant = t.ctx.db.query("SELECT id FROM tenants WHERE subdomain = 'mergeco'").get() as { id: string };
    // FTS5 writes a segment each time its buffer of new entries passes `hashsize`: at 64 KiB the
    // seed's 3,000 deals make dozens (at the default 1 MiB, a million deals make hundreds).
    t.ctx.db.run("INSERT INTO deals_fts (deals_fts, rank) VALUES ('hashsize', 65536)");
    bulkSeed(t.ctx.db, [{ tenantId: tenant.id, subdomain: "mergeco", deals: 3_000, passwordHash: "not a real hash" }], Date.now());
    expect(inShape(t.ctx.db)).toBe(true);
    t.ctx.db.run("INSERT INTO deals_fts (deals_fts, rank) VALUES ('integrity-check', 1)");
  });
});

describe("a bulk load into an empty index", () => {
  /** The non-empty levels: [level, pages of each segment]. */
  const used = (db: Database) => ftsLevels(db, "deals_fts").flatMap((l, i) => (l.segments.length ? [[i, l.segments] as const] : []));
  const text = (id: number, round: number) => `deal ${id} pilot ${(id + round) % 7} account ${(id * 7919) % 100_003}`;
  const matching = (db: Database, term: string) => (db.query("SELECT count(*) AS n FROM deals_fts WHERE deals_fts MATCH ?1").get(`search_text:"${term}"`) as { n: number }).n;

  test("is written as one segment above PARKED_LEVEL; later writes merge below it until theirs is as big, then FTS5 merges them with it", () => {
    const db = new Database(":memory:");
    migrate(db);
    const add = db.prepare("INSERT INTO deals_fts (rowid, search_text, stage_token, unassigned_token) VALUES (?1, ?2, 'snew', NULL)");
    const remove = db.prepare("INSERT INTO deals_fts (deals_fts, rowid, search_text, stage_token, unassigned_token) VALUES ('delete', ?1, ?2, 'snew', NULL)");
    db.transaction(() => {
      const finish = parkBulkLoad(db);
      expect(finish).not.toBeNull();
      // A small buffer: the load's many flushes must not pull the placeholders' level down.
      db.run("INSERT INTO deals_fts (deals_fts, rank) VALUES ('hashsize', 65536)");
      db.run(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000) INSERT INTO deals_fts (rowid, search_text, stage_token, unassigned_token) SELECT i, 'deal ' || i || ' pilot ' || (i % 7) || ' account ' || ((i * 7919) % 100003), 'snew', NULL FROM n",
      );
      expect(used(db).filter(([level]) => level === 0)[0]![1].length).toBeGreaterThan(10);
      finish!();
    })();
    const [[level, pages]] = used(db) as [readonly [number, number[]]];
    expect(used(db)).toHaveLength(1);
    expect(level).toBeGreaterThan(PARKED_LEVEL);
    expect(pages).toHaveLength(1);
    // The placeholders are gone: only the load's rows are in the index.
    expect((db.query("SELECT count(*) AS n FROM deals_fts WHERE deals_fts MATCH 'search_text:tiny' AND rowid < 0").get() as { n: number }).n).toBe(0);
    expect(matching(db, "pilot 3")).toBe(714);
    // An index that holds anything is left as it is.
    expect(parkBulkLoad(db)).toBeNull();

    // 1,000 rows re-written a round (edits, a transaction of 100 each), the next 1,000 each round.
    const version = new Array<number>(5_001).fill(0);
    let round = 0;
    const rewrite = () => {
      const from = ((round++ * 1_000) % 5_000) + 1;
      for (let tx = 0; tx < 10; tx++)
        db.transaction(() => {
          for (let id = from + tx * 100; id < from + tx * 100 + 100; id++) {
            remove.run(id, text(id, version[id]!));
            add.run(id, text(id, ++version[id]!));
          }
        })();
    };
    /** Rows whose text says "pilot 3" now. */
    const pilot3 = () => version.filter((v, id) => id > 0 && (id + v) % 7 === 3).length;
    // 'delete' names a row's exact text: round 0's is the load's.
    expect(text(12, 0)).toBe(`deal 12 pilot 5 account ${(12 * 7919) % 100_003}`);
    rewrite();
    mergeAll(db);
    // The load's segment is where it was and as it was; the rewrites' segments merged below it.
    expect(used(db).at(-1)).toEqual([level, pages]);
    expect(used(db).slice(0, -1).every(([l]) => l < PARKED_LEVEL)).toBe(true);
    expect(matching(db, "pilot 3")).toBe(pilot3());
    // Once the rewrites' segments have grown as big as the load's, FTS5 pulls it down and merges them.
    while (used(db).some(([l]) => l === level) && round < 40) {
      rewrite();
      mergeAll(db);
    }
    expect(used(db).every(([l]) => l < PARKED_LEVEL)).toBe(true);
    expect(round).toBeGreaterThan(2);
    expect(matching(db, "pilot 3")).toBe(pilot3());
    db.run("INSERT INTO deals_fts (deals_fts, rank) VALUES ('integrity-check', 0)");
  });

  test("the bulk seed of a new file writes it that way, and its deals are found", async () => {
    const dir = mkdtempSync(join(tmpdir(), "fts-park-"));
    const t = testApp({ db: join(dir, "park.db"), backend: "sqlite" });
    try {
      const org = await crmOrg(t, "parkco");
      const { bulkSeed } = await import("../../src/stores/sqlite/bulk-load");
      const tenant = t.ctx.db.query("SELECT id FROM tenants WHERE subdomain = 'parkco'").get() as { id: string };
      bulkSeed(t.ctx.db, [{ tenantId: tenant.id, subdomain: "parkco", deals: 2_000, passwordHash: "not a real hash" }], Date.now());
      expect(used(t.ctx.db)).toHaveLength(1);
      expect(used(t.ctx.db)[0]![0]).toBeGreaterThan(PARKED_LEVEL);
      const title = (t.ctx.db.query("SELECT title FROM deals WHERE tenant_id = ?1 ORDER BY seq LIMIT 1 OFFSET 700").get(tenant.id) as { title: string }).title;
      // What the search reads: each deal's lower-cased text (title, account, contact, notes).
      const stored = (t.ctx.db.query("SELECT count(*) AS n FROM deals WHERE tenant_id = ?1 AND instr(search_text, ?2) > 0").get(tenant.id, title.toLowerCase()) as { n: number }).n;
      expect(stored).toBeGreaterThan(0);
      const found = (await org.list(`search=${encodeURIComponent(title)}&limit=1`)) as { total: number };
      expect(found.total).toBe(stored);
      t.ctx.db.run("INSERT INTO deals_fts (deals_fts, rank) VALUES ('integrity-check', 1)");
    } finally {
      await t.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("a merge step's chunks", () => {
  test("start at the least and grow at most by doubling, whatever pace cached pages taught", () => {
    // A learnt pace of 0.01 ms a page would give 128 pages for 10 ms; the first chunk takes 16.
    expect(chunkPages(0, 10, 0.01)).toBe(MIN_CHUNK_PAGES);
    expect(chunkPages(16, 9, 0.01)).toBe(16);
    expect(chunkPages(32, 8, 0.01)).toBe(32);
    expect(chunkPages(64, 8, 0.01)).toBe(64);
    expect(chunkPages(200, 8, 0.01)).toBe(128);
    // The pace still cuts a chunk short, never under the least.
    expect(chunkPages(64, 2, 0.1)).toBe(20);
    expect(chunkPages(64, 0.5, 0.1)).toBe(MIN_CHUNK_PAGES);
  });
});
