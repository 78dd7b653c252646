/**
 * Issue 19: every key and index of tenant data starts with tenant_id, so that a distributed
 * PostgreSQL (Citus, by tenant_id) can take the schema: read from the catalog of a migrated
 * database, and of a database made by the previous release (version 2) once migrated.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { openPostgres, type Pg } from "../../src/stores/postgres/database";
import { migratePostgres, pgTargetVersion } from "../../src/stores/postgres/migrate";
import { LATER_FILES, schemaFiles } from "../../src/stores/postgres/schema";
import { createPostgresSecurityStore } from "../../src/stores/postgres/security";
import { createPostgresSessionsStore } from "../../src/stores/postgres/sessions";
import { TENANT_LIST } from "../../src/stores/postgres/tenants";
import { type EmptyDatabase, TEST_DATABASE_URL, emptyPostgresDatabase } from "../support/pg-database";

/**
 * Not tenant data: a reference table (tenants), the coordinator's own (rate_limits, mail_outbox,
 * settings, schema_version, unnamed_links_until: one row of the migration's), and the address
 * directory (schema 54: distributed by email_hash, so that a lookup naming no organization reads
 * one shard; its key starts with the address's hash), and passkey_challenges (schema 60: five-minute,
 * single-use challenges found by their hash alone, like rate_limits the coordinator's; one asked on
 * the base domain names no organization yet, since the credential will), and the server's operators
 * (schema 64: operators, their challenges, sessions and audit log belong to no organization).
 */
const NOT_TENANT_DATA = [
  "settings", "tenants", "rate_limits", "mail_outbox", "schema_version", "user_directory", "unnamed_links_until", "passkey_challenges",
  "operators", "operator_challenges", "operator_sessions", "operator_audit", "operator_backup_codes",
];

const dbs: EmptyDatabase[] = [];
const pools: Pg[] = [];
afterAll(async () => {
  for (const p of pools) await p.close().catch(() => {});
  for (const d of dbs) await d.drop();
});
async function empty(): Promise<Pg> {
  const d = await emptyPostgresDatabase("keys");
  dbs.push(d);
  const pg = openPostgres(d.url, { max: 1 });
  pools.push(pg);
  return pg;
}

const tables = async (pg: Pg) =>
  (await pg.all<{ t: string }>`SELECT c.relname AS t FROM pg_class c WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r' ORDER BY 1`).map((r) => r.t);

/** Each index's table, name, whether unique, and its first key column (NULL for an expression). */
const indexes = (pg: Pg) =>
  pg.all<{ t: string; i: string; uniq: boolean; first: string | null; def: string }>`
    SELECT t.relname AS t, i.relname AS i, x.indisunique AS uniq, a.attname AS first, pg_get_indexdef(x.indexrelid) AS def
      FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
      LEFT JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = x.indkey[0]
     WHERE t.relnamespace = current_schema()::regnamespace ORDER BY 1, 2`;

/** Each foreign key's table, name, columns and the table it refers to. */
const foreignKeys = (pg: Pg) =>
  pg.all<{ t: string; name: string; cols: string[]; ref: string }>`
    SELECT c.conrelid::regclass::text AS t, c.conname AS name, c.confrelid::regclass::text AS ref,
           array(SELECT a.attname FROM unnest(c.conkey) WITH ORDINALITY k(n, o) JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n ORDER BY k.o)::text[] AS cols
      FROM pg_constraint c WHERE c.connamespace = current_schema()::regnamespace AND c.contype = 'f' ORDER BY 1, 2`;

/** Everything a schema is made of, comparable between two databases. */
const catalog = async (pg: Pg) => ({
  indexes: (await indexes(pg)).map((x) => x.def),
  constraints: (
    await pg.all<{ d: string }>`SELECT conrelid::regclass::text || ' ' || conname || ' ' || pg_get_constraintdef(oid) AS d
      FROM pg_constraint WHERE connamespace = current_schema()::regnamespace ORDER BY 1`
  ).map((r) => r.d),
  columns: (
    await pg.all<{ d: string }>`SELECT table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' || coalesce(column_default, '') AS d
      FROM information_schema.columns WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`
  ).map((r) => r.d),
});

async function expectTenantFirst(pg: Pg): Promise<void> {
  const tenantTables = (await tables(pg)).filter((t) => !NOT_TENANT_DATA.includes(t));
  expect(tenantTables.length).toBeGreaterThan(15);
  const wrong: string[] = [];
  for (const t of tenantTables) {
    const col = await pg.one<{ nullable: string }>`SELECT is_nullable AS nullable FROM information_schema.columns
      WHERE table_schema = current_schema() AND table_name = ${t} AND column_name = 'tenant_id'`;
    if (!col) wrong.push(`${t}: no tenant_id`);
    else if (col.nullable !== "NO") wrong.push(`${t}: tenant_id may be NULL`);
  }
  for (const x of await indexes(pg)) if (tenantTables.includes(x.t) && x.first !== "tenant_id") wrong.push(x.def);
  for (const f of await foreignKeys(pg)) {
    if (!tenantTables.includes(f.t)) continue;
    // A reference to a tenant table names the tenant first; one to tenants is the tenant itself.
    const ok = f.ref === "tenants" ? f.cols.length === 1 && f.cols[0] === "tenant_id" : f.cols[0] === "tenant_id";
    if (!ok) wrong.push(`${f.t} ${f.name} (${f.cols.join(", ")}) -> ${f.ref}`);
  }
  expect(wrong).toEqual([]);
}

describe.skipIf(!TEST_DATABASE_URL)("tenant-first keys (PostgreSQL only: runs in npm test's PostgreSQL run)", () => {
  test("a new database: every table of tenant data has a NOT NULL tenant_id that starts every index and every reference", async () => {
    const pg = await empty();
    await migratePostgres(pg);
    await expectTenantFirst(pg);
    // The global indexes of the first release are gone, not merely joined by new ones.
    const names = (await indexes(pg)).map((x) => x.i);
    const gone = ["users_by_email", "deals_id_key", "users_id_key", "magic_links_token_hash_key", "backup_codes_code_hash_key", "crm_tenants_tenant_no_key"];
    expect(gone.filter((g) => names.includes(g))).toEqual([]);
    const auditKey = await pg.one<{ d: string }>`SELECT pg_get_constraintdef(oid) AS d FROM pg_constraint WHERE conrelid = 'audit_log'::regclass AND contype = 'p'`;
    expect(auditKey?.d).toBe("PRIMARY KEY (tenant_id, id)");
  });

  test("a version-2 database with rows is migrated to the current version: the same catalog as a new one, its rows kept, audit rows of no organization under ''", async () => {
    const fresh = await empty();
    await migratePostgres(fresh);
    const pg = await empty();
    // Version 2 as the previous release made it: the files up to 52, and its version rows.
    const later = new Set(LATER_FILES.filter((f) => f.version > 2).map((f) => f.name));
    await pg.begin(async (tx) => {
      await tx.unsafe("CREATE TABLE schema_version (version integer PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL)");
      for (const f of schemaFiles()) if (!later.has(f.name)) await tx.unsafe(f.sql);
      await tx.unsafe("INSERT INTO schema_version VALUES (1, 'schema', 0), (2, '52-deal-text-by-filters.sql', 0)");
    });
    await pg.run`INSERT INTO tenants (id, name, subdomain, created_at) VALUES ('t1', 'One', 'one', 1)`;
    await pg.run`INSERT INTO users (tenant_id, id, email, role, password_hash, created_at, updated_at) VALUES ('t1', 'u1', 'a@one.test', 'admin', 'h', 1, 1)`;
    await pg.run`INSERT INTO sessions (tenant_id, id, sid_hash, user_id, method, created_at, last_used_at, expires_at, proven_at) VALUES ('t1', 's1', 'h1', 'u1', 'password', 1, 1, 9, 1)`;
    await pg.run`INSERT INTO audit_log (tenant_id, user_id, action, created_at) VALUES ('t1', 'u1', 'login.success', 1), (NULL, NULL, 'login.failure', 2)`;
    expect(await migratePostgres(pg)).toEqual({ from: 2, to: pgTargetVersion() });
    expect(pgTargetVersion()).toBe(LATER_FILES.at(-1)!.version);
    await expectTenantFirst(pg);
    expect(await catalog(pg)).toEqual(await catalog(fresh));
    expect(await pg.all`SELECT tenant_id, action FROM audit_log ORDER BY id`).toEqual([
      { tenant_id: "t1", action: "login.success" },
      { tenant_id: "", action: "login.failure" },
    ]);
    expect(await pg.all`SELECT id FROM sessions WHERE tenant_id = 't1' AND sid_hash = 'h1'`).toEqual([{ id: "s1" }]);
  });

  test("the session lookup and the operator's organization list seek the tenant-first indexes; the housekeeping sweep deletes the ended sessions", async () => {
    const pg = await empty();
    await migratePostgres(pg);
    // 200 organizations of 100 sessions each, a few of them long ended; planned on real statistics.
    await pg.unsafe(`INSERT INTO tenants (id, name, subdomain, created_at) SELECT 't' || n, 'T', 's' || n, 1 FROM generate_series(1, 200) n;
      INSERT INTO users (tenant_id, id, email, role, password_hash, created_at, updated_at) SELECT 't' || n, 'u', 'a@b.test', 'member', 'h', 1, 1 FROM generate_series(1, 200) n;
      INSERT INTO sessions (tenant_id, id, sid_hash, user_id, method, created_at, last_used_at, expires_at, proven_at)
        SELECT 't' || n, 's' || k, md5(n || '.' || k), 'u', 'password', 1, 1, CASE WHEN k % 50 = 0 THEN 5 ELSE 10000 END, 1
          FROM generate_series(1, 200) n, generate_series(1, 100) k;
      ANALYZE`);
    const plan = async (sql: string) => (await pg.unsafe<{ "QUERY PLAN": string }>(`EXPLAIN ${sql}`)).map((r) => r["QUERY PLAN"]).join("\n");
    // The operator's list counts each organization's members through users' tenant-first key (tenants.id
    // is COLLATE "C", users.tenant_id is not: compared bare, no index can seek it). Scans priced out.
    await pg.unsafe("SET enable_seqscan = off");
    expect(await plan(TENANT_LIST)).toContain("Index Cond: (tenant_id = (t.id)::text)");
    // Compared bare, the index is read whole and the tenant tested on each entry.
    expect(await plan(TENANT_LIST.replace(' COLLATE "default"', ""))).toContain("Filter: (tenant_id = t.id)");
    await pg.unsafe("SET enable_seqscan = on");
    expect(await plan("SELECT * FROM sessions WHERE tenant_id = 't' AND sid_hash = 'h'")).toContain("sessions_by_sid");
    // The sweep: the planner picks per organization's index or one pass (here, a fiftieth ended: one pass); either way the ended ones go.
    const sessions = createPostgresSessionsStore(pg, { security: createPostgresSecurityStore(pg) });
    expect(await sessions.purgeExpired(5)).toBe(400);
    expect(await pg.one`SELECT count(*)::int AS n, min(expires_at)::int AS m FROM sessions`).toEqual({ n: 19_600, m: 10_000 });
  });
});
