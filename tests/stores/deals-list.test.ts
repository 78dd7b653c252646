// The deal list on both backends: the same seeded deals (seeded on SQLite, copied row for row to
// PostgreSQL) must give the same pages, in the same order, with the same exact totals, as a
// reference computed here, across filters × sorts × directions × search terms (one and two
// letters, LIKE's wildcards, non-ASCII) and pages. Then the counters under writes and races, and
// PostgreSQL's seed (the same demo data as SQLite's, counters rebuilt).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { bulkSeed as sqliteBulkSeed } from "../../src/stores/sqlite/bulk-load";
import type { DealSummaryQuery, ListedSeqs, SummaryRow } from "../../src/crm/deals-query";
import { createSqliteDealsQuery as createDealsQuery } from "../../src/stores/sqlite/deals-query";
import { DEFAULT_STAGES, type DealListQuery, SORT_FIELDS, type SortField, searchTextOf, sortKey } from "../../src/crm/model";
import type { Db } from "../../src/db/database";
import { newId } from "../../src/kernel/ids";
import { randomSource } from "../../src/crm/demo-data";
import { foldAll } from "../../src/db/search-fold";
import { foldAll as pgFoldAll } from "../../src/stores/postgres/search-fold";
import { openPostgres, type Pg } from "../../src/stores/postgres/database";
import { createPostgresDealsQuery } from "../../src/stores/postgres/deals-query";
import { costPlan as postgresCostPlan } from "../../src/stores/postgres/deals-plan";
import { forcedPostgresPlan, forcedSqlitePlan } from "../support/deals-strategies";
import { dealCountersAfterCopy, gramsOf, rebuildDealCounters } from "../../src/stores/postgres/deal-counters";
import { bulkSeed, createPostgresSeedStore, liveSeed } from "../../src/stores/postgres/seed";
import { migratePostgres, pgTargetVersion } from "../../src/stores/postgres/migrate";
import { LATER_FILES, schemaFiles } from "../../src/stores/postgres/schema";
import { BACKENDS, type Backend, POSTGRES_URL, freshPostgres, freshSqlite } from "./backends";

/** An empty database on the test server (no schema), dropped by close(). */
async function freshEmptyPostgres(): Promise<{ pg: Pg; close(): Promise<void> }> {
  const admin = openPostgres(POSTGRES_URL!, { max: 1 });
  const name = `t_${process.pid}_${Date.now().toString(36)}_v1`;
  await admin.unsafe(`CREATE DATABASE ${name}`);
  await admin.close();
  const pg = openPostgres(POSTGRES_URL!.replace(/\/[^/?]*(\?|$)/, `/${name}$1`), { max: 4 });
  return {
    pg,
    close: async () => {
      await pg.close();
      const a = openPostgres(POSTGRES_URL!, { max: 1 });
      await a.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await a.close();
    },
  };
}

type Row = Record<string, any>;
const NOW = Date.UTC(2026, 0, 15);
const TABLES = ["tenants", "users", "pipeline_stages", "accounts", "contacts", "crm_tenants", "deals"];

/** The seeded SQLite database every backend's data comes from: two tenants, plus hand-made edge cases. */
const source = freshSqlite();
let tenantA = "";
let tenantB = "";
let deals: Row[] = [];
let users: string[] = [];

function sqliteTenant(db: Db, sub: string): string {
  const id = newId();
  db.run("INSERT INTO tenants (id, name, subdomain, created_at) VALUES (?1, ?2, ?2, ?3)", [id, sub, NOW]);
  for (const [i, s] of DEFAULT_STAGES.entries())
    db.run("INSERT INTO pipeline_stages (id, tenant_id, key, name, color, position, probability, is_won, is_lost, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)", [
      newId(), id, s.key, s.name, s.color, i, s.probability, s.is_won, s.is_lost, NOW,
    ]);
  return id;
}

/** Deals whose text tests the edges: LIKE's wildcards and escape, non-ASCII, letters outside the BMP. */
function edgeDeals(db: Db, tenantId: string): void {
  const account = db.query("SELECT id, name FROM accounts WHERE tenant_id = ?1 ORDER BY id LIMIT 1").get(tenantId) as { id: string; name: string };
  const titles = ["100% Sure_thing", "back\\slash deal", "Über Ärger", "Zoë ø ß", "emoji 😀 deal", "qqq", "a_b", "50%"];
  const next = db.query("SELECT tenant_no, next_deal FROM crm_tenants WHERE tenant_id = ?1").get(tenantId) as { tenant_no: number; next_deal: number };
  titles.forEach((title, i) => {
    const seq = next.tenant_no * 2 ** 32 + next.next_deal + i;
    db.run(
      `INSERT INTO deals (seq, id, tenant_id, title, account_id, stage, value_cents, close_date, probability, created_at, updated_at,
         title_key, account_key, search_text, account_name) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, NULL, NULL, ?8, ?8, ?9, ?10, ?11, ?12)`,
      [seq, newId(), tenantId, title, account.id, i % 2 ? "won" : "new", 1000 * i, NOW + i, sortKey(title), sortKey(account.name), searchTextOf(title, null, account.name, null, ""), account.name],
    );
  });
  db.run("UPDATE crm_tenants SET next_deal = next_deal + ?2 WHERE tenant_id = ?1", [tenantId, titles.length]);
  longTextDeals(db, tenantId, account);
}

/**
 * Deals whose text is longer than PostgreSQL's narrow index holds (schema 71: more than 600 bytes,
 * of which it keeps 150 characters): a term in the kept head, one across its end, one only
 * further on, in poorly compressible notes of 10,000 characters (random letters and digits, and
 * random 3-byte characters), in two stages.
 */
function longTextDeals(db: Db, tenantId: string, account: { id: string; name: string }): void {
  const r = randomSource("long text deals");
  const pick = (alphabet: string[], n: number) => Array.from({ length: n }, () => alphabet[r.int(alphabet.length)]).join("");
  const alnum = [..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"];
  const wide = Array.from({ length: 200 }, (_, i) => String.fromCodePoint(0x4e00 + i * 97));
  const next = db.query("SELECT tenant_no, next_deal FROM crm_tenants WHERE tenant_id = ?1").get(tenantId) as { tenant_no: number; next_deal: number };
  const made: Array<[string, string]> = [
    // "xyzzy" across the head's end (characters 148-152 of the text), "renewal" at the end.
    ["Long kkk", `${pick(alnum, 148 - "long kkk\n".length)}xyzzy${pick(alnum, 9_800)} renewal`],
    ["Long wide", `${pick(wide, 9_900)} xyzzy ü ø 100% sure`],
    ["Long head", `renewal a_b ${pick(alnum, 9_000)}${pick(wide, 900)}`],
  ];
  made.forEach(([title, notes], i) => {
    const seq = next.tenant_no * 2 ** 32 + next.next_deal + i;
    db.run(
      `INSERT INTO deals (seq, id, tenant_id, title, account_id, assigned_to, stage, value_cents, close_date, probability, created_at, updated_at,
         title_key, account_key, search_text, account_name, notes) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, NULL, NULL, ?9, ?9, ?10, ?11, ?12, ?13, ?14)`,
      [seq, newId(), tenantId, title, account.id, null, i % 2 ? "won" : "new", 77 * i, NOW + 100 + i, sortKey(title), sortKey(account.name),
        searchTextOf(title, notes, account.name, null, ""), account.name, notes],
    );
  });
  db.run("UPDATE crm_tenants SET next_deal = next_deal + ?2 WHERE tenant_id = ?1", [tenantId, made.length]);
}

/** A deal whose search text PostgreSQL's narrow index holds only in part (longTextDeals). */
const LONG_TEXT = "length(CAST(search_text AS BLOB)) > 600";

/**
 * Copies the CRM rows of `from` into a PostgreSQL database, column for column, then rebuilds the
 * counters. `which`: every row, all but the long-text deals (which a database before schema 71
 * cannot hold), or only those deals.
 */
async function copyTo(pg: Pg, from: Db, which: "all" | "short" | "long" = "all"): Promise<void> {
  for (const table of which === "long" ? ["deals"] : TABLES) {
    const pgCols = new Set((await pg.all<{ c: string }>`SELECT column_name AS c FROM information_schema.columns WHERE table_name = ${table}`).map((r) => r.c));
    const cols = (from.query(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => c.name).filter((c) => pgCols.has(c));
    const where = table !== "deals" || which === "all" ? "" : ` WHERE ${which === "long" ? "" : "NOT "}${LONG_TEXT}`;
    const rows = from.query(`SELECT ${cols.join(", ")} FROM ${table}${where}`).all() as Row[];
    for (let i = 0; i < rows.length; i += 2000)
      await pg.unsafe(`INSERT INTO ${table} (${cols.join(", ")}) SELECT ${cols.join(", ")} FROM json_populate_recordset(NULL::${table}, $1::text::json)`, [
        JSON.stringify(rows.slice(i, i + 2000)),
      ]);
  }
  await rebuildDealCounters(pg);
}

const SORT_KEY: Record<SortField, string> = {
  title: "title_key", value: "value_cents", stage: "stage", probability: "probability", close_date: "close_date",
  created_at: "created_at", updated_at: "updated_at", account_name: "account_key", contact_name: "contact_key", assignee_name: "assignee_key",
};
/** Byte-wise, as both databases compare these keys (UTF-8 order, not JS's UTF-16 order). */
const cmp = (a: string | number, b: string | number): number =>
  typeof a === "number" ? (a < (b as number) ? -1 : a > (b as number) ? 1 : 0) : Buffer.compare(Buffer.from(a), Buffer.from(b as string));

/** The deal list's rules (docs/interface.md#the-deal-list) computed here: substring of the lower-cased text, filters, key with nulls last both ways, ties by id. */
function reference(q: DealListQuery, tenantId: string): ListedSeqs {
  const term = q.search?.toLowerCase();
  const found = deals.filter(
    (d) =>
      d.tenant_id === tenantId &&
      (term === undefined || d.search_text.includes(term)) &&
      (q.stages === null || q.stages.includes(d.stage)) &&
      (q.assignee === null || (q.assignee === "" ? d.assigned_to === null : d.assigned_to === q.assignee)) &&
      ((q.account ?? null) === null || d.account_id === q.account) &&
      ((q.contact ?? null) === null || d.contact_id === q.contact),
  );
  const k = SORT_KEY[q.sortBy];
  const sign = q.sortDir === "asc" ? 1 : -1;
  found.sort((a, b) => {
    if ((a[k] === null) !== (b[k] === null)) return a[k] === null ? 1 : -1;
    return (a[k] === null ? 0 : cmp(a[k], b[k])) * sign || cmp(a.id, b.id) * sign;
  });
  const from = (q.page - 1) * q.size;
  return { seqs: found.slice(from, from + q.size).map((d) => d.seq), total: found.length };
}

/** The board's summary computed here from the deals: per group and currency, count and exact cents (BigInt). */
function summaryReference(q: DealSummaryQuery, tenantId: string): string[] {
  const term = q.search?.toLowerCase();
  const groups = new Map<string, { n: number; cents: bigint }>();
  for (const d of deals) {
    if (d.tenant_id !== tenantId || (term !== undefined && !d.search_text.includes(term)) || (q.stages !== null && !q.stages.includes(d.stage))) continue;
    if (q.assignee !== null && (q.assignee === "" ? d.assigned_to !== null : d.assigned_to !== q.assignee)) continue;
    const key = q.groupBy === "stage" ? d.stage : d.assigned_to;
    const k = `${key}|${d.currency}|${q.groupBy === "stage" ? null : d.assignee_name}|${q.groupBy === "stage" ? null : d.assignee_email}`;
    const g = groups.get(k) ?? { n: 0, cents: 0n };
    g.n++;
    g.cents += BigInt(d.value_cents);
    groups.set(k, g);
  }
  return [...groups].map(([k, g]) => `${k}=${g.n}/${g.cents}`).sort();
}
const summaryLines = (rows: SummaryRow[]): string[] => rows.map((r) => `${r.key}|${r.currency}|${r.name}|${r.email}=${r.n}/${r.cents}`).sort();

beforeAll(() => {
  const db = source.db;
  tenantA = sqliteTenant(db, "lista");
  tenantB = sqliteTenant(db, "listb");
  sqliteBulkSeed(db, [{ tenantId: tenantA, subdomain: "lista", deals: 2500, passwordHash: "x" }, { tenantId: tenantB, subdomain: "listb", deals: 300, passwordHash: "x" }], NOW);
  edgeDeals(db, tenantA);
  deals = db.query("SELECT * FROM deals").all() as Row[];
  users = [...new Set(deals.filter((d) => d.tenant_id === tenantA && d.assigned_to !== null).map((d) => d.assigned_to as string))].sort();
});

const TERMS = [null, "a", "e", "q", "ü", "ø", "😀", "%", "_", "\\", "er", "an", "zu", "q4", "0%", "a_b", "ion", "ent", "pro", "PRO", "renewal", "xyzzy", "100% sure"];
const STAGES: Array<string[] | null> = [null, ["new"], ["won"], ["new", "won"], ["lost", "proposal", "qualified"], ["nosuchstage"]];

/** Filters × sorts × directions × terms, with pages that rotate (first, second, deep, past the end) and sizes. */
function queries(): DealListQuery[] {
  const assignees = [null, "", users[0]!, users[3]!];
  const out: DealListQuery[] = [];
  let k = 0;
  for (const search of TERMS)
    for (const sortBy of SORT_FIELDS)
      for (const sortDir of ["asc", "desc"] as const) {
        k++;
        out.push({
          search,
          sortBy,
          sortDir,
          stages: STAGES[k % STAGES.length]!,
          assignee: assignees[(k >> 1) % assignees.length]!,
          page: [1, 2, 5, 1, 40, 3][k % 6]!,
          size: [20, 7, 100, 1][k % 4]!,
        });
      }
  return out;
}

/** A statement in SQLite's dialect (? placeholders, instr) on either backend. */
async function sqlOn(b: Backend, sql: string, args: Array<string | number | null>): Promise<Row[]> {
  if (b.kind === "sqlite") return b.db.query(sql).all(...args) as Row[];
  let n = 0;
  return b.pg.unsafe(sql.replace(/\?/g, () => `$${++n}`).replace(/\binstr\(/g, "strpos("), args);
}

/** deal_counts rows that differ from a count of the deals (zero rows aside). */
async function countsDrift(b: Backend): Promise<string[]> {
  const truth = await sqlOn(b, `SELECT tenant_id, coalesce(assigned_to, '') AS a, stage, count(*) AS n FROM deals GROUP BY tenant_id, coalesce(assigned_to, ''), stage
    UNION ALL SELECT tenant_id, '*', stage, count(*) FROM deals GROUP BY tenant_id, stage`, []);
  const kept = await sqlOn(b, "SELECT tenant_id, assignee AS a, stage, n FROM deal_counts WHERE n <> 0", []);
  const key = (r: Row) => `${r.tenant_id}/${r.a}/${r.stage}=${Number(r.n)}`;
  // The board's sums (deal_sums) too: per assignee, stage and currency, count and cents.
  const sumsTruth = await sqlOn(b, "SELECT tenant_id, coalesce(assigned_to, '') AS a, stage || '/' || currency AS stage, count(*) || '/' || sum(value_cents) AS n FROM deals GROUP BY tenant_id, coalesce(assigned_to, ''), stage, currency", []);
  const sumsKept = await sqlOn(b, "SELECT tenant_id, assignee AS a, stage || '/' || currency AS stage, n || '/' || cents AS n FROM deal_sums WHERE n <> 0 OR cents <> 0", []);
  const sumKey = (r: Row) => `sums ${r.tenant_id}/${r.a}/${r.stage}=${r.n}`;
  const want = new Set([...truth.map(key), ...sumsTruth.map(sumKey)]);
  const got = new Set([...kept.map(key), ...sumsKept.map(sumKey)]);
  return [...[...want].filter((k) => !got.has(k)).map((k) => `missing ${k}`), ...[...got].filter((k) => !want.has(k)).map((k) => `extra ${k}`)];
}

/**
 * deal_gram_counts rows, with the pending rows not folded yet added (73-deal-search-pending.sql),
 * that differ from the grams of the deals' texts, counted here (zero rows aside).
 */
async function gramDrift(pg: Pg): Promise<string[]> {
  const want = new Map<string, number>();
  for (const d of await pg.all<Row>`SELECT tenant_id, stage, coalesce(assigned_to, '') AS a, search_text FROM deals`)
    for (const g of gramsOf(d.search_text)) {
      const k = `${d.tenant_id}/${d.stage}/${d.a}/${g}`;
      want.set(k, (want.get(k) ?? 0) + 1);
    }
  const got = new Map((await pg.all<Row>`SELECT tenant_id, stage, assignee, gram, n FROM deal_gram_counts WHERE n <> 0`).map((r) => [`${r.tenant_id}/${r.stage}/${r.assignee}/${r.gram}`, Number(r.n)]));
  for (const p of await pg.all<Row>`SELECT tenant_id, stage, assignee, search_text, sign FROM deal_search_pending`)
    for (const g of gramsOf(p.search_text)) {
      const k = `${p.tenant_id}/${p.stage}/${p.assignee}/${g}`;
      got.set(k, (got.get(k) ?? 0) + Number(p.sign));
    }
  for (const [k, n] of got) if (n === 0) got.delete(k);
  const out: string[] = [];
  for (const [k, n] of want) if (got.get(k) !== n) out.push(`${k}: ${got.get(k)} instead of ${n}`);
  for (const [k, n] of got) if (!want.has(k)) out.push(`${k}: ${n} instead of none`);
  return out.slice(0, 20);
}

/** Deals whose search_head is not what schema 71 says: the whole text up to 600 bytes, else its first 150 characters. */
async function headDrift(pg: Pg): Promise<string[]> {
  const wrong = await pg.all<{ id: string }>`SELECT id FROM deals
    WHERE search_head IS DISTINCT FROM (CASE WHEN octet_length(search_text) <= 600 THEN search_text ELSE left(search_text, 150) END) ORDER BY id LIMIT 20`;
  return wrong.map((r) => r.id);
}

/** SQLite's deal_gram_counts rows that differ from the 1-3 character pieces of the deals' texts (schema version 12; none across a newline). */
function sqliteGramDrift(db: Database): string[] {
  const want = new Map<string, number>();
  for (const d of db.query("SELECT tenant_id, stage, coalesce(assigned_to, '') AS a, search_text FROM deals").all() as Row[])
    for (const g of gramsOf(d.search_text as string)) {
      if (g.includes("\n")) continue;
      const k = `${d.tenant_id}/${d.stage}/${d.a}/${g}`;
      want.set(k, (want.get(k) ?? 0) + 1);
    }
  const got = new Map((db.query("SELECT tenant_id, stage, assignee, gram, n FROM deal_gram_counts WHERE n <> 0").all() as Row[]).map((r) => [`${r.tenant_id}/${r.stage}/${r.assignee}/${r.gram}`, Number(r.n)]));
  const out: string[] = [];
  for (const [k, n] of want) if (got.get(k) !== n) out.push(`${k}: ${got.get(k)} instead of ${n}`);
  for (const [k, n] of got) if (!want.has(k)) out.push(`${k}: ${n} instead of none`);
  return out.slice(0, 20);
}

for (const backend of BACKENDS) {
  describe(`deal list on ${backend.name}`, () => {
    let b: Backend;
    let list: (tenantId: string, q: DealListQuery) => Promise<ListedSeqs>;
    let strategies: Record<string, { list: (tenantId: string, q: DealListQuery) => Promise<ListedSeqs> }> = {};
    /** The board's summary, as the server reads it, and (SQLite) with tiny slices and a low rare-term bound, to reach every path. */
    let summaries: Record<string, (tenantId: string, q: DealSummaryQuery) => Promise<SummaryRow[]>> = {};
    beforeAll(async () => {
      if (backend.name === "sqlite") {
        // A copy of the seeded database: the write tests below change it.
        const db = Database.deserialize(source.db.serialize(), { strict: true });
        b = { kind: "sqlite", db, close: async () => db.close() };
        const query = createDealsQuery(db);
        list = (t, q) => query.list(t, q);
        const sliced = createDealsQuery(db, undefined, { rare: 40, firstSlice: 64, maxSlice: 200, sliceMs: 0.01 });
        summaries = { server: (t, q) => query.summary(t, q), "small slices": (t, q) => sliced.summary(t, q) };
      } else {
        b = await freshPostgres();
        if (b.kind === "postgres") {
          await copyTo(b.pg, source.db);
          const query = createPostgresDealsQuery(b.pg);
          list = (t, q) => query.list(t, q);
          summaries = { server: (t, q) => query.summary(t, q) };
          // The other page strategies must give the same answers as the cost-based choice.
          const pg = b.pg;
          strategies = {
            walk: createPostgresDealsQuery(pg, forcedPostgresPlan("walk")),
            collect: createPostgresDealsQuery(pg, forcedPostgresPlan("collect")),
            "collect by trigrams": createPostgresDealsQuery(pg, forcedPostgresPlan("collect", "trigrams")),
            "collect by filters": createPostgresDealsQuery(pg, forcedPostgresPlan("collect", "filters")),
            "walk out of budget": createPostgresDealsQuery(pg, postgresCostPlan({ walkBudget: 5 })),
          };
        }
      }
    }, 120_000);
    afterAll(async () => {
      await b.close();
    });

    test("every filter, sort, direction, term and page agrees with the reference", async () => {
      const wrong: string[] = [];
      for (const q of queries())
        for (const tenantId of [tenantA, tenantB]) {
          const got = await list(tenantId, q);
          const want = reference(q, tenantId);
          if (got.total !== want.total || JSON.stringify(got.seqs) !== JSON.stringify(want.seqs)) wrong.push(JSON.stringify(q));
          if (got.rows) expect(got.rows.map((r) => r.seq)).toEqual(got.seqs);
        }
      expect(wrong).toEqual([]);
    });

    test("the board's summary: every filter, term and grouping agrees with the reference, exact to the cent", async () => {
      const wrong: string[] = [];
      const assignees = [null, "", users[0]!, users[3]!];
      for (const [name, summary] of Object.entries(summaries))
        for (const search of TERMS)
          for (const [i, stages] of STAGES.entries())
            for (const groupBy of ["stage", "assigned_to"] as const)
              for (const tenantId of [tenantA, tenantB]) {
                const known = stages?.filter((x) => x !== "nosuchstage") ?? null;
                const q: DealSummaryQuery = { search, stages: known, assignee: assignees[i % assignees.length]!, groupBy };
                const got = summaryLines(await summary(tenantId, q));
                if (JSON.stringify(got) !== JSON.stringify(summaryReference(q, tenantId))) wrong.push(`${name}: ${JSON.stringify(q)}`);
              }
      expect(wrong).toEqual([]);
      const nobody = await summaries.server!(newId(), { search: null, stages: null, assignee: null, groupBy: "stage" });
      expect(nobody).toEqual([]);
    }, 120_000);

    test("assignee order under an assignee filter, without a search: first, second and deep pages agree with the reference", async () => {
      const wrong: string[] = [];
      for (const assignee of ["", users[0]!, users[3]!])
        for (const sortDir of ["asc", "desc"] as const)
          for (const stages of [null, ["new", "won"]])
            for (const [page, size] of [[1, 20], [2, 7], [6, 20], [3, 100]] as const) {
              const q: DealListQuery = { search: null, sortBy: "assignee_name", sortDir, assignee, stages, page, size };
              const got = await list(tenantA, q);
              const want = reference(q, tenantA);
              if (got.total !== want.total || JSON.stringify(got.seqs) !== JSON.stringify(want.seqs)) wrong.push(JSON.stringify(q));
            }
      expect(wrong).toEqual([]);
    });

    test("each page strategy agrees with the reference", async () => {
      const wrong: string[] = [];
      for (const [name, query] of Object.entries(strategies))
        for (const q of queries().filter((x) => x.search !== null)) {
          const got = await query.list(tenantA, q);
          const want = reference(q, tenantA);
          if (got.total !== want.total || JSON.stringify(got.seqs) !== JSON.stringify(want.seqs)) wrong.push(`${name}: ${JSON.stringify(q)}`);
        }
      expect(wrong).toEqual([]);
    });

    test("an account's and a contact's deals (their pages): with every filter, term, sort and page, exact totals; another tenant's record lists nothing", async () => {
      const mine = deals.filter((d) => d.tenant_id === tenantA);
      const countBy = (key: string) => {
        const n = new Map<string, number>();
        for (const d of mine) if (d[key] !== null) n.set(d[key], (n.get(d[key]) ?? 0) + 1);
        return [...n].sort((a, b) => b[1] - a[1] || cmp(a[0], b[0]));
      };
      const accounts = countBy("account_id");
      const contacts = countBy("contact_id");
      expect(contacts.length).toBeGreaterThan(0);
      const records: Array<Pick<DealListQuery, "account" | "contact">> = [
        { account: accounts[0]![0] },
        { account: accounts.at(-1)![0] },
        { contact: contacts[0]![0] },
        { account: mine.find((d) => d.contact_id === contacts[0]![0])!.account_id, contact: contacts[0]![0] },
        { account: "no-such-account" },
      ];
      const assignees = [null, "", users[0]!];
      const wrong: string[] = [];
      // SQLite reads a record's page by sorting its deals or by walking the order's index: both, forced, agree too.
      const readers: Array<[string, typeof list]> = [["server", list]];
      if (b.kind === "sqlite") {
        const db = b.db;
        for (const by of ["index walk", "sort"] as const) readers.push([by, (t, q) => createDealsQuery(db, forcedSqlitePlan(by)).list(t, q)]);
      }
      let k = 0;
      for (const [reader, read] of readers)
      for (const record of records)
        for (const search of [null, "a", "er", "ion", "renewal", "xyzzy"])
          for (const sortBy of SORT_FIELDS) {
            k++;
            const q: DealListQuery = {
              ...record, search, sortBy, sortDir: k % 2 ? "asc" : "desc", stages: STAGES[k % STAGES.length]!, assignee: assignees[k % 3]!, page: [1, 2, 1, 3][k % 4]!, size: [20, 3, 100][k % 3]!,
            };
            const got = await read(tenantA, q);
            const want = reference(q, tenantA);
            if (got.total !== want.total || JSON.stringify(got.seqs) !== JSON.stringify(want.seqs)) wrong.push(`${reader}: ${JSON.stringify(q)}`);
            if (got.rows) expect(got.rows.map((r) => r.seq)).toEqual(got.seqs);
          }
      expect(wrong).toEqual([]);
      const plain: DealListQuery = { page: 1, size: 20, search: null, stages: null, assignee: null, sortBy: "created_at", sortDir: "desc", account: accounts[0]![0] };
      expect((await list(tenantA, plain)).total).toBe(accounts[0]![1]);
      expect(await list(tenantB, plain)).toEqual({ seqs: [], total: 0 });
    });

    test.skipIf(backend.name !== "postgres")("PostgreSQL: every deal's search_head is its text's head, the long-text deals' too", async () => {
      if (b.kind === "postgres") {
        expect(await headDrift(b.pg)).toEqual([]);
        expect((await b.pg.one<{ n: number }>`SELECT count(*)::int AS n FROM deals WHERE search_head <> search_text`)!.n).toBe(3);
      }
    });

    test("totals are exact and nothing leaks between tenants", async () => {
      const base: DealListQuery = { page: 1, size: 20, search: null, stages: null, assignee: null, sortBy: "created_at", sortDir: "desc" };
      expect((await list(tenantA, base)).total).toBe(2511);
      expect((await list(tenantB, base)).total).toBe(300);
      expect((await list(newId(), base)).total).toBe(0);
      expect(await list(tenantA, { ...base, stages: [] })).toEqual({ seqs: [], total: 0 });
      const onePage = await list(tenantA, { ...base, search: "qqq" });
      expect(onePage.total).toBe(1);
    });

    test("the counters follow every kind of write, and totals stay exact", async () => {
      const run = (sql: string, args: Array<string | number | null> = []) => sqlOn(b, sql, args);
      const first = (await run("SELECT id FROM users WHERE tenant_id = ? ORDER BY id LIMIT 1", [tenantB]))[0]!.id as string;
      await run("UPDATE deals SET stage = 'won' WHERE tenant_id = ? AND seq % 7 = 0", [tenantB]);
      await run("UPDATE deals SET assigned_to = NULL WHERE tenant_id = ? AND seq % 5 = 0", [tenantB]);
      await run("UPDATE deals SET assigned_to = ?, stage = 'lost' WHERE tenant_id = ? AND seq % 5 = 1", [first, tenantB]);
      await run("UPDATE deals SET search_text = search_text || ' zzq', title = title || ' zzq' WHERE tenant_id = ? AND seq % 3 = 0", [tenantB]);
      await run("UPDATE deals SET notes = 'same text' WHERE tenant_id = ? AND seq % 4 = 0", [tenantB]);
      await run("DELETE FROM deals WHERE tenant_id = ? AND seq % 11 = 0", [tenantB]);
      expect(await countsDrift(b)).toEqual([]);
      // PostgreSQL's searches add up the pending rows (73-deal-search-pending.sql) until the fold,
      // run after them; SQLite's counters take the writes when they are folded (schema version 15).
      const pending = async (pg: Pg) => (await pg.one<{ n: number }>`SELECT count(*)::int AS n FROM deal_search_pending`)!.n;
      if (b.kind === "postgres") {
        expect(await pending(b.pg)).toBeGreaterThan(0);
        expect(await gramDrift(b.pg)).toEqual([]);
      } else {
        foldAll(b.db);
        expect(sqliteGramDrift(b.db)).toEqual([]);
      }
      const base: DealListQuery = { page: 1, size: 20, search: null, stages: null, assignee: null, sortBy: "created_at", sortDir: "desc" };
      const totalsAgree = async () => {
        for (const search of [null, "z", "zz", "zzq", " zzq", "e", "an", "ion", "an ", "ent", "xyq"])
          for (const [stages, assignee] of [[null, null], [["won"], null], [null, ""], [["lost", "new"], first]] as Array<[string[] | null, string | null]>) {
            const where = [`tenant_id = ?`, ...(stages ? [`stage IN (${stages.map((x) => `'${x}'`).join(", ")})`] : []), ...(assignee === "" ? ["assigned_to IS NULL"] : assignee ? ["assigned_to = ?"] : []), ...(search ? ["instr(search_text, ?) > 0"] : [])];
            const args = [tenantB, ...(assignee ? [assignee] : []), ...(search ? [search] : [])];
            const want = Number((await run(`SELECT count(*) AS n FROM deals WHERE ${where.join(" AND ")}`, args))[0]!.n);
            expect({ search, stages, assignee, total: (await list(tenantB, { ...base, search, stages, assignee })).total }).toEqual({ search, stages, assignee, total: want });
          }
      };
      await totalsAgree();
      if (b.kind === "postgres") {
        expect(await pgFoldAll(b.pg)).toBeGreaterThan(0);
        expect(await pending(b.pg)).toBe(0);
        expect(await gramDrift(b.pg)).toEqual([]);
        await totalsAgree();
      }
    });

    // Shapes PostgreSQL pages its own way (a stage at a time, an assignee's key range, one read
    // of a long term's trigram matches): stage order within several stages, assignee order under
    // an assignee filter, each with and without a search, across pages that cross stages. Last in
    // this block: it gives one user no name (their deals' assignee key is NULL, as unassigned ones).
    test("stage order within several stages and assignee order under an assignee filter agree with the reference, a nameless assignee too", async () => {
      const nameless = users[1]!;
      await sqlOn(b, "UPDATE deals SET assignee_key = NULL, assignee_name = NULL WHERE tenant_id = ? AND assigned_to = ?", [tenantA, nameless]);
      // The reference's rows too, put back after (the next backend's copy has the names).
      const renamed = deals.filter((d) => d.tenant_id === tenantA && d.assigned_to === nameless).map((d) => [d, { ...d }] as const);
      for (const [d] of renamed) Object.assign(d, { assignee_key: null, assignee_name: null });
      const wrong: string[] = [];
      let k = 0;
      for (const search of [null, "a", "er", "pro", "renewal", "xyzzy"])
        for (const stages of [null, ["new"], ["won", "new"], ["lost", "proposal", "qualified"]])
          // A nameless assignee's key is NULL, as the unassigned deals' (SQLite's seek found none of their deals once).
          for (const assignee of [null, "", users[0]!, nameless])
            for (const sortBy of ["stage", "assignee_name"] as const)
              for (const sortDir of ["asc", "desc"] as const) {
                k++;
                const q: DealListQuery = { search, stages, assignee, sortBy, sortDir, page: [1, 2, 4, 9][k % 4]!, size: [20, 7, 50][k % 3]! };
                const got = await list(tenantA, q);
                const want = reference(q, tenantA);
                if (got.total !== want.total || JSON.stringify(got.seqs) !== JSON.stringify(want.seqs)) wrong.push(JSON.stringify(q));
                if (got.rows) expect(got.rows.map((r) => r.seq)).toEqual(got.seqs);
              }
      for (const [d, was] of renamed) Object.assign(d, was);
      expect(wrong).toEqual([]);
    });
  });
}

describe.skipIf(!POSTGRES_URL)("PostgreSQL: schema 52 on a database made before it", () => {
  test("a version-1 database with deals is migrated to the current version (52 among its steps): the new indexes, the old ones gone, the same answers", async () => {
    const b = await freshEmptyPostgres();
    try {
      // Version 1 as the first release made it: the files up to 51, and its version row.
      const later = new Set(LATER_FILES.map((f) => f.name));
      await b.pg.begin(async (tx) => {
        await tx.unsafe("CREATE TABLE schema_version (version integer PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL)");
        for (const f of schemaFiles()) if (!later.has(f.name)) await tx.unsafe(f.sql);
        await tx.unsafe("INSERT INTO schema_version VALUES (1, 'schema', 0)");
      });
      await copyTo(b.pg, source.db, "short");
      const indexes = async () => (await b.pg.all<{ n: string }>`SELECT indexname AS n FROM pg_indexes WHERE tablename = 'deals'`).map((r) => r.n);
      expect(await indexes()).toContain("deals_text_by_seq");
      expect(await migratePostgres(b.pg)).toEqual({ from: 1, to: pgTargetVersion() });
      const now = await indexes();
      expect(now).toEqual(expect.arrayContaining(["deals_text_by_filters", "deals_search_by_tenant"]));
      expect(now).not.toContain("deals_text_by_seq");
      expect(now).not.toContain("deals_search_trgm");
      // The deals whose text is too long for the first release's indexes can be stored now.
      await copyTo(b.pg, source.db, "long");
      const query = createPostgresDealsQuery(b.pg);
      const wrong: string[] = [];
      for (const q of queries().filter((x) => x.search !== null).slice(0, 120)) {
        const got = await query.list(tenantA, q);
        const want = reference(q, tenantA);
        if (got.total !== want.total || JSON.stringify(got.seqs) !== JSON.stringify(want.seqs)) wrong.push(JSON.stringify(q));
      }
      expect(wrong).toEqual([]);
    } finally {
      await b.close();
    }
  }, 120_000);
});

describe.skipIf(!POSTGRES_URL)("PostgreSQL: the bulk seed writes the gram counters without their keys, then makes them again", () => {
  test("after a bulk seed beside an organization already there: the same keys on deal_gram_counts, exact counters, live writes still counted", async () => {
    const b = await freshPostgres();
    try {
      await copyTo(b.pg, source.db);
      const keys = async () => b.pg.all<{ def: string }>`SELECT contype::text || ' ' || pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conrelid = 'deal_gram_counts'::regclass ORDER BY 1`;
      const before = await keys();
      expect(before.map((k) => k.def[0])).toEqual(["f", "p"]);
      const id = newId();
      await b.pg.run`INSERT INTO tenants (id, name, subdomain, created_at) VALUES (${id}, 'gramseed', 'gramseed', ${NOW})`;
      for (const [i, st] of DEFAULT_STAGES.entries())
        await b.pg.run`INSERT INTO pipeline_stages (tenant_id, id, key, name, color, position, probability, is_won, is_lost, created_at)
          VALUES (${id}, ${newId()}, ${st.key}, ${st.name}, ${st.color}, ${i}, ${st.probability}, ${st.is_won}, ${st.is_lost}, ${NOW})`;
      // More deals than are stored: the bulk path (keys dropped and made again).
      await bulkSeed(b.pg, [{ tenantId: id, subdomain: "gramseed", deals: 3000, passwordHash: "h" }], NOW);
      expect(await keys()).toEqual(before);
      expect(await gramDrift(b.pg)).toEqual([]);
      await b.pg.run`UPDATE deals SET search_text = search_text || ' zqzq' WHERE tenant_id = ${id} AND seq % 10 = 0`;
      expect(await gramDrift(b.pg)).toEqual([]);
      expect(await countsDrift(b)).toEqual([]);
    } finally {
      await b.close();
    }
  }, 120_000);
});

describe.skipIf(!POSTGRES_URL)("PostgreSQL: counters under concurrent writes, and the seed", () => {
  test("two sessions moving deals between the same stages at once: no deadlock, exact counters", async () => {
    const b = await freshPostgres();
    if (b.kind !== "postgres") return;
    const other = openPostgres(b.pg.url, { max: 4 });
    try {
      await copyTo(b.pg, source.db);
      const seqs = (await b.pg.all<{ seq: number }>`SELECT seq FROM deals WHERE tenant_id = ${tenantB} ORDER BY seq LIMIT 40`).map((r) => r.seq);
      // Each transaction moves two deals, in opposite orders on the two sessions: A's counter rows then B's, and B's then A's.
      const move = (pg: Pg, from: string, to: string, s: number[]) =>
        pg.begin(async (tx) => {
          for (const seq of s) await tx.run`UPDATE deals SET stage = ${to}, assigned_to = NULL WHERE tenant_id = ${tenantB} AND seq = ${seq} AND stage IS NOT NULL`;
          await tx.run`UPDATE deals SET stage = ${from} WHERE tenant_id = ${tenantB} AND seq = ${s[0]!}`;
        });
      const rounds = [];
      for (let i = 0; i + 3 < seqs.length; i += 4)
        rounds.push(move(b.pg, "won", "lost", [seqs[i]!, seqs[i + 1]!]), move(other, "lost", "won", [seqs[i + 3]!, seqs[i + 2]!]));
      const settled = await Promise.allSettled(rounds);
      expect(settled.filter((r) => r.status === "rejected").map((r) => String((r as PromiseRejectedResult).reason))).toEqual([]);
      expect(await countsDrift(b)).toEqual([]);
      expect(await gramDrift(b.pg)).toEqual([]);
      // An organization deleted with its deals (cascade): the counters' triggers stand aside.
      await b.pg.run`DELETE FROM tenants WHERE id = ${tenantB}`;
      expect(await b.pg.all`SELECT 1 FROM deal_counts WHERE tenant_id = ${tenantB} UNION ALL SELECT 1 FROM deal_gram_counts WHERE tenant_id = ${tenantB}`).toEqual([]);
      expect(await countsDrift(b)).toEqual([]);
    } finally {
      await other.close();
      await b.close();
    }
  }, 90_000); // copying the source database and rebuilding its counters: over 20 s alone on a loaded machine

  test("bulk and live seeds write SQLite's demo data, with counters that match the deals", async () => {
    const sq = freshSqlite();
    const b = await freshPostgres();
    if (b.kind !== "postgres") return;
    try {
      const [sa, sb] = [sqliteTenant(sq.db, "seedbulk"), sqliteTenant(sq.db, "seedlive")];
      sqliteBulkSeed(sq.db, [{ tenantId: sa, subdomain: "seedbulk", deals: 1200, passwordHash: "h" }, { tenantId: sb, subdomain: "seedlive", deals: 700, passwordHash: "h" }], NOW);
      // The same organizations on PostgreSQL (rows copied, no deals yet), seeded there.
      for (const table of ["tenants", "pipeline_stages"]) {
        const rows = sq.db.query(`SELECT * FROM ${table}`).all();
        await b.pg.unsafe(`INSERT INTO ${table} SELECT * FROM json_populate_recordset(NULL::${table}, $1::text::json)`, [JSON.stringify(rows)]);
      }
      const [ra] = await bulkSeed(b.pg, [{ tenantId: sa, subdomain: "seedbulk", deals: 1200, passwordHash: "h" }], NOW);
      const progress: number[] = [];
      const rb = await liveSeed(b.pg, { tenantId: sb, subdomain: "seedlive", deals: 700, passwordHash: "h" }, NOW, (done) => progress.push(done));
      expect(ra).toEqual({ subdomain: "seedbulk", users: 12, accounts: 50, contacts: expect.any(Number), deals: 1200 });
      expect(rb.deals).toBe(700);
      expect(progress.at(-1)).toBe(700);
      const shape = `SELECT d.title, d.stage, d.value_cents, d.currency, d.close_date, d.probability, d.notes, d.search_text, d.account_name, d.contact_name,
        d.assignee_name, d.created_at - t.created_at AS created, d.title_key, d.account_key, d.contact_key, d.assignee_key
        FROM deals d JOIN tenants t ON t.id = d.tenant_id WHERE t.subdomain = $1 ORDER BY d.seq`;
      for (const sub of ["seedbulk", "seedlive"]) {
        const want = sq.db.query(shape.replace("$1", "?1")).all(sub) as Row[];
        const got = await b.pg.unsafe<Row>(shape, [sub]);
        expect(got.length).toBe(want.length);
        expect(got).toEqual(want);
        // Their accounts and contacts too, every field drawn (they once drew two fields in another order).
        // Ordered by bytes on both (SQLite's BINARY, PostgreSQL's "C").
        for (const [table, cols, order] of [
          ["accounts", "x.name, x.domain, x.industry, x.created_at", 'x.name COLLATE "C", x.created_at'],
          ["contacts", "x.first_name, x.last_name, x.email, x.phone, x.created_at", 'x.email COLLATE "C", x.phone COLLATE "C"'],
        ] as const) {
          const sql = `SELECT ${cols} FROM ${table} x JOIN tenants t ON t.id = x.tenant_id WHERE t.subdomain = $1 ORDER BY ${order}`;
          const wantRows = sq.db.query(sql.replace("$1", "?1").replaceAll(' COLLATE "C"', "")).all(sub) as Row[];
          expect(wantRows.length).toBeGreaterThan(0);
          expect(await b.pg.unsafe<Row>(sql, [sub])).toEqual(wantRows);
        }
      }
      expect(await countsDrift(b)).toEqual([]);
      expect(await gramDrift(b.pg)).toEqual([]);
      // The narrow index's head of each text (schema 71), written by the bulk seed with the triggers off too.
      expect(await headDrift(b.pg)).toEqual([]);
      // Recounting from scratch (copy-to-postgres's hook) gives the same counters.
      await b.pg.run`DELETE FROM deal_counts`;
      await b.pg.run`DELETE FROM deal_gram_counts`;
      await rebuildDealCounters(b.pg);
      expect(await countsDrift(b)).toEqual([]);
      expect(await gramDrift(b.pg)).toEqual([]);
      // The same as copy-to-postgres's step, inside the caller's transaction.
      await b.pg.begin(async (tx) => {
        await tx.run`DELETE FROM deal_gram_counts`;
        await tx.run`UPDATE deal_counts SET n = 0`;
        await dealCountersAfterCopy.run(tx);
      });
      expect(await countsDrift(b)).toEqual([]);
      expect(await gramDrift(b.pg)).toEqual([]);
      // The seed store `suite seed` calls: bulk or alongside, the same counters.
      const sc = sqliteTenant(sq.db, "seedstore");
      await b.pg.unsafe(`INSERT INTO tenants SELECT * FROM json_populate_recordset(NULL::tenants, $1::text::json)`, [JSON.stringify(sq.db.query("SELECT * FROM tenants WHERE id = ?1").all(sc))]);
      await b.pg.unsafe(`INSERT INTO pipeline_stages SELECT * FROM json_populate_recordset(NULL::pipeline_stages, $1::text::json)`, [
        JSON.stringify(sq.db.query("SELECT * FROM pipeline_stages WHERE tenant_id = ?1").all(sc)),
      ]);
      const r = await createPostgresSeedStore(b.pg).seed({ tenantId: sc, subdomain: "seedstore", deals: 300, passwordHash: "h" }, NOW, { alongside: () => {}, progress: () => {} });
      expect(r.deals).toBe(300);
      expect(await countsDrift(b)).toEqual([]);
      expect(await gramDrift(b.pg)).toEqual([]);
    } finally {
      await sq.close();
      await b.close();
    }
  });
});
