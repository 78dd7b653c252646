/**
 * Demo CRM data on PostgreSQL (`suite seed`, the bench): the same job shape as SQLite's seed
 * (src/stores/sqlite/bulk-load.ts, live-seed.ts) and the same data, drawn by src/crm/demo-records.ts
 * from the same random source per subdomain, so a tenant seeded on either backend holds the same
 * records (ids aside).
 */
import type { DemoSeedStore, SeedResult, SeedTenant } from "../../crm/seed-store";
import { newId } from "../../kernel/ids";
import { TENANT_SPAN } from "../../crm/deal-columns";
import { type RandomSource, randomSource } from "../../crm/demo-data";
import { demoDealDrawer, drawDemoAccounts, drawDemoContacts, drawDemoUsers } from "../../crm/demo-records";
import { type Pg, type PgQueries, insertJson, ownApplicationName } from "./database";
import { GramCounts, rebuildDealCountsIn } from "./deal-counters";
import { createNumberingInTx } from "./deals";
import { searchHeadOf } from "./deals-search-page";
import { directoryDeleteInTx, directoryDeleteTenantInTx, directoryFileUsersInTx } from "./user-directory";

/** Deals per INSERT: one JSON parameter of a few MB. */
const CHUNK = 5_000;
/** Deals per transaction on the live path, as on SQLite. */
const LIVE_BATCH = 1_000;
const GAP_MS = 2;

/**
 * Whether the seed has the database to itself (no other session connected to it: no server, no
 * other seed). SQLite's claimFile asks the same of the file. Only then does bulkSeed drop and
 * rebuild the deals' indexes: a server would wait on the table's lock for the whole load.
 */
export async function claimDatabase(pg: Pg): Promise<boolean> {
  // This process's own pool (its other connections, idle) does not count: Bun opens them all at once.
  const r = await pg.one<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
    WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'
      AND application_name IS DISTINCT FROM ${ownApplicationName()}`;
  return (r?.n ?? 0) === 0;
}

/**
 * Writes demo CRM data for tenants in one transaction. When the new deals are at least as many as
 * those already stored, the deals' secondary indexes, foreign keys and triggers are dropped first
 * and made again after (from their own definitions, so the schema is unchanged), and the counters
 * rebuilt: building an index once is many times faster than growing it row by row.
 */
export async function bulkSeed(pg: Pg, tenants: SeedTenant[], now: number): Promise<SeedResult[]> {
  const existing = (await pg.one<{ n: number }>`SELECT count(*)::bigint AS n FROM deals`)!.n;
  const adding = tenants.reduce((s, t) => s + t.deals, 0);
  const bulk = adding >= existing && adding > 0;
  const results = await pg.begin(async (tx) => {
    await tx.unsafe("SET LOCAL maintenance_work_mem = '256MB'");
    await tx.unsafe("SET LOCAL synchronous_commit = off");
    const restore = bulk ? [...(await dropDealIndexes(tx)), ...(await dropGramKeys(tx))] : [];
    const out: SeedResult[] = [];
    for (const t of tenants) {
      const plan = await startSeed(tx, t, now);
      // With the triggers off, the gram counts are added up here, from the rows as they are made.
      const grams = bulk ? new GramCounts(t.tenantId) : null;
      for (let from = 0; from < t.deals; from += CHUNK) {
        const rows = plan.dealRows(from, Math.min(t.deals, from + CHUNK));
        if (grams) for (const r of rows) grams.add(r.stage as string, r.assigned_to as string | null, r.search_text as string);
        await insertDeals(tx, rows);
      }
      if (grams) await grams.write(tx);
      await setDemoPassword(tx, t);
      out.push(plan.result);
    }
    for (const sql of restore) await tx.unsafe(sql);
    if (bulk) await rebuildDealCountsIn(tx, tenants.map((t) => t.tenantId));
    return out;
  });
  // Statistics for the planner, and the visibility map that lets index-only scans skip the rows.
  await pg.unsafe("VACUUM (ANALYZE) deals");
  return results;
}

/** Drops what slows a bulk insert into deals; answers the statements that make it all again, in order. */
async function dropDealIndexes(tx: PgQueries): Promise<string[]> {
  const indexes = await tx.all<{ name: string; def: string }>`
    SELECT i.relname AS name, pg_get_indexdef(i.oid) AS def FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
    WHERE x.indrelid = 'deals'::regclass AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.oid)`;
  const fks = await tx.all<{ name: string; def: string }>`
    SELECT conname AS name, pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conrelid = 'deals'::regclass AND contype = 'f'`;
  const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;
  for (const i of indexes) await tx.unsafe(`DROP INDEX ${quote(i.name)}`);
  for (const f of fks) await tx.unsafe(`ALTER TABLE deals DROP CONSTRAINT ${quote(f.name)}`);
  await tx.unsafe("ALTER TABLE deals DISABLE TRIGGER USER");
  return [
    ...indexes.map((i) => i.def),
    ...fks.map((f) => `ALTER TABLE deals ADD CONSTRAINT ${quote(f.name)} ${f.def}`),
    "ALTER TABLE deals ENABLE TRIGGER USER",
  ];
}

/**
 * The bulk seed writes millions of gram counter rows (1.9M deals: 6.7M rows): into the table with
 * its primary key and foreign key that took 94 s at load 5–6, against 27 s for the same rows into
 * the bare table with the key and foreign key made after (6 + 20 + 1 s). Dropped here, made again
 * from their own definitions after the load (restore order: the key, then the foreign key).
 */
async function dropGramKeys(tx: PgQueries): Promise<string[]> {
  const keys = await tx.all<{ name: string; def: string; kind: string }>`
    SELECT conname AS name, pg_get_constraintdef(oid) AS def, contype AS kind FROM pg_constraint
    WHERE conrelid = 'deal_gram_counts'::regclass AND contype IN ('p', 'f') ORDER BY contype DESC, conname`;
  const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;
  for (const k of [...keys].reverse()) await tx.unsafe(`ALTER TABLE deal_gram_counts DROP CONSTRAINT ${quote(k.name)}`);
  return keys.map((k) => `ALTER TABLE deal_gram_counts ADD CONSTRAINT ${quote(k.name)} ${k.def}`);
}

/**
 * `suite seed` on PostgreSQL, a DemoSeedStore (src/crm/seed-store.ts):
 * bulk when the seed has the database to itself, else alongside a running server.
 */
export function createPostgresSeedStore(pg: Pg): DemoSeedStore {
  return {
    async seed(t: SeedTenant, now: number, hooks: { alongside(): void; progress(done: number, total: number): void }): Promise<SeedResult> {
      if (await claimDatabase(pg)) return (await bulkSeed(pg, [t], now))[0]!;
      hooks.alongside();
      return liveSeed(pg, t, now, hooks.progress);
    },
    removeTenant: (tenantId: string) => removeSeededTenant(pg, tenantId),
  };
}

/** Every demo user of the tenant (…@<subdomain>.example) gets the password the seed prints. */
export async function setDemoPassword(tx: PgQueries, t: SeedTenant): Promise<number> {
  const pattern = `%@${t.subdomain.replace(/[\\%_]/g, (c) => `\\${c}`)}.example`;
  return tx.run`UPDATE users SET password_hash = ${t.passwordHash} WHERE tenant_id = ${t.tenantId} AND email LIKE ${pattern} ESCAPE '\\'`;
}

/** What the seed wrote before its deals, and the rows of deals [from, to) of its range. */
export interface SeedPlan {
  result: SeedResult;
  range: [number, number];
  /** Ids of the users, accounts and contacts this seed added (not those already there). */
  added: { users: string[]; accounts: string[]; contacts: string[] };
  dealRows(from: number, to: number): DealSeedRow[];
}

type DealSeedRow = Record<string, string | number | null>;

/** With the head: the bulk seed runs with the deals' triggers off, schema 71's among them. */
const insertDeals = (tx: PgQueries, rows: DealSeedRow[]) => insertJson(tx, "deals", rows.map((r) => ({ ...r, note_text: "", search_head: searchHeadOf(r.search_text as string) })));

/** Writes the tenant's demo users, accounts and contacts and reserves its deals' seq range. */
export async function startSeed(tx: PgQueries, t: SeedTenant, now: number): Promise<SeedPlan> {
  const r = randomSource(t.subdomain);
  const before = new Set((await tx.all<{ id: string }>`SELECT id FROM users WHERE tenant_id = ${t.tenantId}`).map((u) => u.id));
  const users = await seedUsers(tx, t, r, now);
  const accounts = drawDemoAccounts(r, t.deals, now);
  await insertJson(
    tx,
    "accounts",
    accounts.map((a) => ({ tenant_id: t.tenantId, id: a.id, name: a.name, domain: a.domain, industry: a.industry, created_at: a.createdAt, updated_at: a.createdAt })),
  );
  const contacts = drawDemoContacts(r, accounts, now);
  const contactRows = contacts.map((c) => ({
    tenant_id: t.tenantId,
    id: c.id,
    first_name: c.firstName,
    last_name: c.lastName,
    email: c.email,
    phone: c.phone,
    account_id: c.accountId,
    created_at: c.createdAt,
    updated_at: c.createdAt,
  }));
  for (let i = 0; i < contactRows.length; i += CHUNK) await insertJson(tx, "contacts", contactRows.slice(i, i + CHUNK));
  const stages = (await tx.all<{ key: string }>`SELECT key FROM pipeline_stages WHERE tenant_id = ${t.tenantId} ORDER BY position`).map((s) => s.key);

  // The tenant's seq range (see deals-repo.ts), reserved for all the deals at once; a tenant
  // number from the sequence when the organization has none yet (no lock another tenant waits on).
  await createNumberingInTx(tx, t.tenantId);
  const numbering = (await tx.one<{ tenant_no: number; first: number }>`UPDATE crm_tenants SET next_deal = next_deal + ${t.deals}
    WHERE tenant_id = ${t.tenantId} RETURNING tenant_no, next_deal - ${t.deals} AS first`)!;
  const first = numbering.tenant_no * TENANT_SPAN + numbering.first;

  const draw = demoDealDrawer(r, { count: t.deals, now, accounts, contacts, users, stages });
  const dealRows = (from: number, to: number): DealSeedRow[] => {
    const rows: DealSeedRow[] = [];
    for (let i = from; i < to; i++) rows.push({ tenant_id: t.tenantId, seq: first + i, custom_data: null, ...draw(i) });
    return rows;
  };
  return {
    result: { subdomain: t.subdomain, users: users.length, accounts: accounts.length, contacts: contacts.length, deals: t.deals },
    range: [first, first + t.deals - 1],
    added: { users: users.map((u) => u.id).filter((id) => !before.has(id)), accounts: accounts.map((a) => a.id), contacts: contacts.map((c) => c.id) },
    dealRows,
  };
}

async function seedUsers(tx: PgQueries, t: SeedTenant, r: RandomSource, now: number): Promise<Array<{ id: string; name: string; email: string }>> {
  const rows = drawDemoUsers(r, t.subdomain, t.deals).map((u) => ({
    tenant_id: t.tenantId,
    id: newId(),
    email: u.email,
    full_name: u.fullName,
    role: "member",
    profile_id: null,
    password_hash: t.passwordHash,
    created_at: now,
    updated_at: now,
  }));
  // An address already there (a re-seed) keeps its user, as SQLite's INSERT OR IGNORE does.
  await insertJson(tx, "users", rows);
  await directoryFileUsersInTx(tx, t.tenantId, rows.map((u) => u.id));
  // In SQLite's order (its rowids): users already there first, then the demo users as written.
  const at = new Map(rows.map((u, i) => [u.email, i]));
  const users = await tx.all<{ id: string; name: string; email: string; created_at: number }>`SELECT id, full_name AS name, email, created_at
    FROM users WHERE tenant_id = ${t.tenantId} AND full_name IS NOT NULL ORDER BY created_at, id`;
  const rank = (u: { email: string }) => at.get(u.email) ?? -1;
  return users.sort((a, b) => rank(a) - rank(b)).map(({ id, name, email }) => ({ id, name, email }));
}

/**
 * Seeds a database that other sessions use (a running server): through the live indexes and
 * triggers, in short transactions with a pause between them, printing progress. When a batch
 * fails, everything this seed wrote is taken out again before the error is passed on.
 */
export async function liveSeed(pg: Pg, t: SeedTenant, now: number, progress: (done: number, total: number) => void): Promise<SeedResult> {
  const plan = await pg.begin(async (tx) => {
    const p = await startSeed(tx, t, now);
    await setDemoPassword(tx, t);
    return p;
  });
  let done = 0;
  let shown = 0;
  try {
    while (done < t.deals) {
      const to = Math.min(t.deals, done + LIVE_BATCH);
      const rows = plan.dealRows(done, to);
      await pg.begin((tx) => insertDeals(tx, rows));
      done = to;
      if (done - shown >= Math.max(LIVE_BATCH, t.deals / 10) || done === t.deals) {
        progress(done, t.deals);
        shown = done;
      }
      await Bun.sleep(GAP_MS);
    }
  } catch (e) {
    await unseed(pg, t.tenantId, plan.range[0], plan.range[0] + done, plan.added);
    throw e;
  }
  await pg.unsafe("ANALYZE deals");
  return plan.result;
}

/** Deletes, in short transactions, the deals of [from, to) of the seed's range and the rows it added. */
async function unseed(pg: Pg, tenantId: string, from: number, to: number, added: { users: string[]; accounts: string[]; contacts: string[] }): Promise<void> {
  for (let lo = from; lo < to; lo += LIVE_BATCH) {
    await pg.run`DELETE FROM deals WHERE tenant_id = ${tenantId} AND seq >= ${lo} AND seq < ${Math.min(to, lo + LIVE_BATCH)}`;
    await Bun.sleep(GAP_MS);
  }
  await pg.begin(async (tx) => {
    await tx.run`DELETE FROM contacts WHERE tenant_id = ${tenantId} AND id = ANY(${added.contacts}::text[])`;
    await tx.run`DELETE FROM accounts WHERE tenant_id = ${tenantId} AND id = ANY(${added.accounts}::text[])`;
    const gone = await tx.all<{ id: string; email: string }>`DELETE FROM users WHERE tenant_id = ${tenantId} AND id = ANY(${added.users}::text[]) RETURNING id, email`;
    for (const u of gone) await directoryDeleteInTx(tx, tenantId, u.id, u.email);
  });
}

/**
 * Removes an organization the seed created, with everything in it (its rows cascade), and its
 * audit rows: a seed that fails leaves no organization behind. Deals first, in short transactions.
 */
export async function removeSeededTenant(pg: Pg, tenantId: string): Promise<void> {
  while ((await pg.run`DELETE FROM deals WHERE tenant_id = ${tenantId} AND seq IN (SELECT seq FROM deals WHERE tenant_id = ${tenantId} LIMIT ${LIVE_BATCH})`) > 0)
    await Bun.sleep(GAP_MS);
  await pg.begin(async (tx) => {
    await tx.run`DELETE FROM audit_log WHERE tenant_id = ${tenantId}`;
    await directoryDeleteTenantInTx(tx, tenantId);
    await tx.run`DELETE FROM tenants WHERE id = ${tenantId}`;
  });
}
