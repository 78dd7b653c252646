import type { SeedResult, SeedTenant } from "../../crm/seed-store";
import { type Db, withTempFiles, writeTx } from "../../db/database";
import { mergeAllInside, parkBulkLoad } from "../../db/fts-merge";
import { newId } from "../../kernel/ids";
import { TENANT_SPAN } from "../../crm/deal-columns";
import { dealsInsertFromJson } from "./deal-batches";
import { type SeedTally, openSeedTally } from "../../db/seed-tally";
import { type RandomSource, randomSource } from "../../crm/demo-data";
import { demoDealDrawer, drawDemoAccounts, drawDemoContacts, drawDemoUsers } from "../../crm/demo-records";

/** The seed's page cache (KiB, as PRAGMA cache_size takes it negative), and the index builds'. */
const SEED_CACHE_KIB = -262144;
const SORT_CACHE_KIB = -8192;
/**
 * The cache of a seed through the live indexes (the file its own, fewer deals added than stored):
 * every deal lands at random in 19 indexes, and a transaction whose changed pages outgrow the
 * cache spills them and reads them back (20,000 deals into a 100k-deal organization beside 1M:
 * 5.6 s of CPU, 2.5 of it in the kernel, at 32 MiB; 3.2 s and 0.6 at 1 GiB).
 */
const INDEXED_CACHE_KIB = -1048576;
/**
 * The full-text index's in-memory buffer (FTS5 `hashsize`, bytes) while the bulk seed fills it, and
 * FTS5's default, put back after. A bigger buffer flushes fewer, bigger segments, so there is
 * less to merge: a million deals' fill and merge took 10.5 + 3.2 s against 13.8 + 4.6 (about
 * 80 MB more memory for the seed's process).
 */
const SEED_FTS_HASH_BYTES = 64 * 1024 * 1024;
const FTS_HASH_DEFAULT_BYTES = 1024 * 1024;

/**
 * Writes demo CRM data for tenants in one transaction. When the new deals are at least as many
 * as those already stored, the deal indexes and triggers are dropped first and rebuilt after
 * (from their own stored SQL, so the schema is unchanged), the search index and the counts are
 * filled in bulk: building an index once is many times faster than growing it row by row.
 */
export function bulkSeed(db: Db, tenants: SeedTenant[], now: number): SeedResult[] {
  // Index builds sort with helper threads; ANALYZE samples instead of reading every row.
  db.run("PRAGMA threads = 4");
  db.run("PRAGMA analysis_limit = 2000");
  const existing = (db.query("SELECT count(*) AS n FROM deals").get() as { n: number }).n;
  const adding = tenants.reduce((s, t) => s + t.deals, 0);
  const bulk = adding >= existing;
  db.run(`PRAGMA cache_size = ${bulk ? SEED_CACHE_KIB : INDEXED_CACHE_KIB}`);
  // A rollback journal holds only the pages a bulk load changes (few: most are new), where WAL
  // would write the whole load twice. Only possible while no other connection is open; else WAL stays.
  if (bulk) claimFile(db);
  try {
    // The index builds' sorted pieces go to temporary files (database.ts keeps them in memory).
    // The indexed path builds none and keeps its statement journals in memory: each deal's insert
    // saves there every page it changes that the transaction changed before (about 30), which
    // took 6.1M pwrites to a file for 100,000 deals beside 1M (10 of the seed's 26 s in the kernel).
    return bulk ? withTempFiles(db, () => loadAll(db, tenants, now, bulk)) : loadAll(db, tenants, now, bulk);
  } finally {
    // Back to WAL (if it was switched, here or by the caller) even when the load failed and rolled back.
    db.run("PRAGMA journal_mode = WAL");
    db.run("PRAGMA wal_checkpoint(TRUNCATE)");
  }
}

/**
 * Switches the file to a rollback journal, which SQLite allows only when no other connection has
 * it open: so this answers whether the seed has the file to itself (a running server, a `suite
 * migrate`, a second seed: not). Asked without waiting (busy_timeout 0), never "database is locked".
 */
export function claimFile(db: Db): boolean {
  db.run("PRAGMA busy_timeout = 0");
  try {
    const mode = String((db.query("PRAGMA journal_mode = DELETE").get() as { journal_mode: string }).journal_mode);
    return mode === "delete" || mode === "memory";
  } catch (e) {
    if (e instanceof Error && /locked|busy/i.test(e.message)) return false;
    throw e;
  } finally {
    db.run("PRAGMA busy_timeout = 5000");
  }
}

function loadAll(db: Db, tenants: SeedTenant[], now: number, bulk: boolean): SeedResult[] {
  // With the triggers dropped (all of them, or on the indexed path the search counters' pending
  // rows: a fold of 100k deals costs minutes), the gram counts are added up on the side and written once a tenant.
  const tally = openSeedTally();
  try {
    return loadAllCounted(db, tenants, now, bulk, tally);
  } finally {
    tally?.close();
  }
}

function loadAllCounted(db: Db, tenants: SeedTenant[], now: number, bulk: boolean, tally: SeedTally | undefined): SeedResult[] {
  const results = writeTx(db, () => {
    const saved = db
      .query(
        bulk
          ? "SELECT type, name, sql FROM sqlite_schema WHERE tbl_name = 'deals' AND type IN ('index', 'trigger') AND sql IS NOT NULL"
          : "SELECT type, name, sql FROM sqlite_schema WHERE tbl_name = 'deals' AND type = 'trigger' AND name LIKE 'deal\\_search\\_pending\\_%' ESCAPE '\\'",
      )
      .all() as { type: string; name: string; sql: string }[];
    for (const s of saved) db.run(`DROP ${s.type === "index" ? "INDEX" : "TRIGGER"} ${s.name}`);
    const ranges: Array<[number, number]> = [];
    let finishIndex: (() => void) | null = null;
    const summed: Array<SeedPlan["summed"]> = [];
    const out = tenants.map((t) => {
      const plan = startSeed(db, t, now, tally);
      plan.insertDeals(0, t.deals);
      tally?.end(t.tenantId);
      setDemoPassword(db, t);
      ranges.push(plan.range);
      summed.push(plan.summed);
      return plan.result;
    });
    if (bulk) {
      // Each index build sorts in small pieces, on helper threads (PRAGMA threads): under the seed's
      // 256 MiB cache SQLite sorted a whole index in memory on this thread (three indexes of 1.9M
      // deals: 7.6–10 s; 3.3–3.4 s with 8 MiB, and less CPU). The pieces go to temporary files.
      db.run(`PRAGMA cache_size = ${SORT_CACHE_KIB}`);
      for (const s of saved) if (s.type === "index") db.run(s.sql);
      db.run(`PRAGMA cache_size = ${SEED_CACHE_KIB}`);
      // A new file's index is written as one segment above the levels later writes merge in.
      finishIndex = parkBulkLoad(db);
      const hashsize = db.prepare("INSERT INTO deals_fts (deals_fts, rank) VALUES ('hashsize', ?1)");
      hashsize.run(SEED_FTS_HASH_BYTES);
      const fts = db.prepare("INSERT INTO deals_fts (rowid, search_text, stage_token, unassigned_token) SELECT seq, search_text, stage_token, unassigned_token FROM deals WHERE seq BETWEEN ?1 AND ?2");
      for (const [lo, hi] of ranges) fts.run(lo, hi);
      hashsize.run(FTS_HASH_DEFAULT_BYTES);
      // The new deals' counts (deal_counts) and the board's sums (deal_sums, version 26), from the
      // sums added up as the deals were drawn, added to what the triggers counted before they were
      // dropped (a tenant's deals from before the seed): regrouping the tenant's deals in SQL took
      // 1.3 s (counts) and 5 s (sums: a sort of every deal) a million.
      const addCount = db.prepare<never, [string, string, string, number]>(
        "INSERT INTO deal_counts (tenant_id, assignee, stage, n) VALUES (?1, ?2, ?3, ?4) ON CONFLICT (tenant_id, assignee, stage) DO UPDATE SET n = n + excluded.n",
      );
      const addSum = db.prepare<never, [string, string, string, string, number, bigint]>(
        `INSERT INTO deal_sums (tenant_id, assignee, stage, currency, n, cents) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (tenant_id, assignee, stage, currency) DO UPDATE SET n = n + excluded.n, cents = cents + excluded.cents`,
      );
      for (const [i, t] of tenants.entries())
        for (const x of summed[i]!.values()) {
          addSum.run(t.tenantId, x.assignee, x.stage, x.currency, x.n, x.cents);
          // One row a currency: the upserts add them up, under the assignee and under '*' (all).
          addCount.run(t.tenantId, x.assignee, x.stage, x.n);
          addCount.run(t.tenantId, "*", x.stage, x.n);
        }
    }
    // The counting thread sorted its rows while the indexes were built.
    tally?.write(db);
    for (const s of saved) if (s.type === "trigger") db.run(s.sql);
    // Deal writes leave the full-text index's merging to the server's steps (schema version 32):
    // a bulk load's are merged here, so a new file's index is in shape when it ends: an empty
    // index's as one segment above the levels later writes merge in (fts-merge.ts). Beside
    // stored deals the merge would finish the stored index's pending levels too (the 100k-beside-1M
    // seed rewrote all 55,000 pages of it: 3.8 s), which the server's upkeep does in short steps.
    if (finishIndex) finishIndex();
    else if (bulk) mergeAllInside(db);
    return out;
  });
  // Statistics of the deals only: the other tables grow later from their few seeded rows, and
  // stale statistics would make the planner scan them (sessions, say) for ever. Beside stored
  // deals (at most doubled) their statistics still hold when they have some (1.8 s at 1M).
  if (bulk || !db.query("SELECT 1 AS x FROM sqlite_stat1 WHERE tbl = 'deals' LIMIT 1").get()) db.run("ANALYZE deals");
  return results;
}

/**
 * Every demo user of the tenant (an address at `<subdomain>.example`, the seed's own admin
 * included) gets the password the seed prints: a re-seed's new password works for them all.
 */
export function setDemoPassword(db: Db, t: SeedTenant): number {
  return db.run("UPDATE users SET password_hash = ?2 WHERE tenant_id = ?1 AND email LIKE ?3 ESCAPE '\\'", [
    t.tenantId,
    t.passwordHash,
    `%@${t.subdomain.replace(/[\\%_]/g, (c) => `\\${c}`)}.example`,
  ]).changes;
}

/** One deal_sums row's share of a seed: cents as a bigint (a group's sum can pass 2^53 at millions of deals). */
export type SeedSum = { assignee: string; stage: string; currency: string; n: number; cents: bigint };

/** What the seed wrote before its deals, and how to write deals [from, to) of its range. */
export interface SeedPlan {
  result: SeedResult;
  range: [number, number];
  /** Ids of the users, accounts and contacts this seed added (not those already there). */
  added: { users: string[]; accounts: string[]; contacts: string[] };
  /** Deals inserted so far, their count and value by assignee ('' for none), stage and currency: deal_sums' rows and deal_counts' by adding currencies up, for a seed without its triggers. */
  summed: Map<string, SeedSum>;
  insertDeals(from: number, to: number): void;
}

/**
 * Writes the tenant's demo users, accounts and contacts and reserves its deals' rowid range.
 * `oneStatement`: each insertDeals call writes its deals in one statement (the live path, whose
 * deals' triggers are on: deal-batches.ts says why). The bulk path, whose triggers are off,
 * inserts a deal a statement.
 */
export function startSeed(db: Db, t: SeedTenant, now: number, tally?: SeedTally, oneStatement = false): SeedPlan {
  const r = randomSource(t.subdomain);
  const before = new Set((db.query("SELECT id FROM users WHERE tenant_id = ?1").values(t.tenantId) as string[][]).map((v) => v[0]!));
  const users = seedUsers(db, t, r, now);
  const accounts = drawDemoAccounts(r, t.deals, now);
  const insertAccount = db.prepare("INSERT INTO accounts (id, tenant_id, name, domain, industry, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)");
  for (const a of accounts) insertAccount.run(a.id, t.tenantId, a.name, a.domain, a.industry, a.createdAt);
  const contacts = drawDemoContacts(r, accounts, now);
  const insertContact = db.prepare(
    `INSERT INTO contacts (id, tenant_id, first_name, last_name, email, phone, account_id, created_at, updated_at)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8)`,
  );
  for (const c of contacts) insertContact.run(c.id, t.tenantId, c.firstName, c.lastName, c.email, c.phone, c.accountId, c.createdAt);
  const stages = (db.query("SELECT key FROM pipeline_stages WHERE tenant_id = ?1 ORDER BY position").all(t.tenantId) as { key: string }[]).map((s) => s.key);

  // The tenant's rowid range (see deals-repo.ts), reserved for all the deals at once.
  db.run("INSERT OR IGNORE INTO crm_tenants (tenant_id, tenant_no, next_deal) SELECT ?1, coalesce(max(tenant_no), 0) + 1, 0 FROM crm_tenants", [t.tenantId]);
  const numbering = db.query("SELECT tenant_no, next_deal FROM crm_tenants WHERE tenant_id = ?1").get(t.tenantId) as { tenant_no: number; next_deal: number };
  const first = numbering.tenant_no * TENANT_SPAN + numbering.next_deal;
  db.run("UPDATE crm_tenants SET next_deal = next_deal + ?2 WHERE tenant_id = ?1", [t.tenantId, t.deals]);

  const columns = [
    "seq", "id", "tenant_id", "title", "account_id", "contact_id", "assigned_to", "stage", "value_cents", "currency", "close_date", "probability",
    "notes", "created_at", "updated_at", "title_key", "account_key", "contact_key", "assignee_key", "search_text",
    "account_name", "contact_name", "assignee_name", "assignee_email",
  ];
  const insert = db.prepare(`INSERT INTO deals (${columns.join(", ")}) VALUES (${columns.map((_, i) => `?${i + 1}`).join(", ")})`);
  const insertAll = dealsInsertFromJson(db, columns);
  const draw = demoDealDrawer(r, { count: t.deals, now, accounts, contacts, users, stages });
  const summed = new Map<string, SeedSum>();
  const insertDeals = (from: number, to: number) => {
    const rows: Array<Array<string | number | null>> = [];
    for (let i = from; i < to; i++) {
      const d = draw(i);
      const assignee = d.assigned_to ?? "";
      const key = `${assignee}\u0000${d.stage}\u0000${d.currency}`;
      const sum = summed.get(key);
      if (sum) {
        sum.n++;
        sum.cents += BigInt(d.value_cents);
      } else summed.set(key, { assignee, stage: d.stage, currency: d.currency, n: 1, cents: BigInt(d.value_cents) });
      tally?.add(d.stage, d.assigned_to, d.search_text, d.title_key, d.account_key, d.contact_key);
      const args = [
        first + i, d.id, t.tenantId, d.title, d.account_id, d.contact_id, d.assigned_to, d.stage, d.value_cents, d.currency, d.close_date, d.probability,
        d.notes, d.created_at, d.updated_at, d.title_key, d.account_key, d.contact_key, d.assignee_key, d.search_text,
        d.account_name, d.contact_name, d.assignee_name, d.assignee_email,
      ];
      if (oneStatement) rows.push(args);
      else insert.run(...args);
    }
    if (rows.length > 0) insertAll(rows);
  };
  return {
    result: { subdomain: t.subdomain, users: users.length, accounts: accounts.length, contacts: contacts.length, deals: t.deals },
    range: [first, first + t.deals - 1],
    summed,
    added: { users: users.map((u) => u.id).filter((id) => !before.has(id)), accounts: accounts.map((a) => a.id), contacts: contacts.map((c) => c.id) },
    insertDeals,
  };
}

/** The demo members (an address already there keeps its user), then every named user of the tenant in rowid order. */
function seedUsers(db: Db, t: SeedTenant, r: RandomSource, now: number): Array<{ id: string; name: string; email: string }> {
  const insert = db.prepare(
    `INSERT OR IGNORE INTO users (id, tenant_id, email, full_name, role, profile_id, password_hash, created_at, updated_at)
     VALUES (?1, ?2, ?3, ?4, 'member', NULL, ?5, ?6, ?6)`,
  );
  for (const u of drawDemoUsers(r, t.subdomain, t.deals)) insert.run(newId(), t.tenantId, u.email, u.fullName, t.passwordHash, now);
  return db.query("SELECT id, full_name AS name, email FROM users WHERE tenant_id = ?1 AND full_name IS NOT NULL").all(t.tenantId) as {
    id: string;
    name: string;
    email: string;
  }[];
}
