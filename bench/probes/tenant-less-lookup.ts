// What a lookup that does not name its organization costs on PostgreSQL now that no index is keyed
// by the address or a token hash alone (schema 53, issue 19: a distributed table keeps only
// tenant-first keys): a link mailed before links named their tenant, one probe of a
// (tenant_id, token_hash) key per organization; and, beside them, the tenant-less sign-in's and
// magic-link/reset targets' address lookups, which go through the address directory since schema 54
// (`bun run bench tenants` measures those at up to 100,000 organizations). `bun bench/probes/tenant-less-lookup.ts [DIR] [ROUNDS]`: a PostgreSQL cluster kept in DIR
// (default /work/benchdb/mailed/pg; made on first use), one database per organization count,
// seeded once. Prints each statement's plan once and its server execution time (EXPLAIN ANALYZE,
// median of ROUNDS) and the store call's time as the app sees it (median of ROUNDS).
import { startCluster } from "../../scripts/postgres-cluster";
import { createPostgresAccountTokensStore } from "../../src/stores/postgres/account-tokens";
import { inEveryTenant, openPostgres, type Pg } from "../../src/stores/postgres/database";
import { createPostgresInvitationsStore } from "../../src/stores/postgres/invitations";
import { createPostgresMagicLinksStore } from "../../src/stores/postgres/magic-links";
import { migratePostgres } from "../../src/stores/postgres/migrate";
import { emailHash, emailHashSql } from "../../src/stores/postgres/user-directory";
import { USERS_BY_EMAIL_ANY_TENANT, createPostgresUsersStore } from "../../src/stores/postgres/users";
import { BENCH_PG_SETTINGS } from "../postgres-support";
import { median } from "../stats";

const dir = process.argv[2] ?? "/work/benchdb/mailed/pg";
const rounds = Number(process.argv[3] ?? 30);
const SIZES = [1_000, 10_000];
const USERS_PER_ORG = 5;
const TOKENS_PER_ORG = 10;

const cluster = await startCluster({ dir, settings: BENCH_PG_SETTINGS });

/**
 * N organizations of USERS_PER_ORG members, with TOKENS_PER_ORG magic links, resets and
 * invitations each (with one per organization the planner may probe by tenant_id alone through
 * another index); `shared@bench.test` in organizations 1 and 2.
 */
async function seed(pg: Pg, n: number): Promise<void> {
  const now = Date.now();
  await pg.unsafe(`INSERT INTO tenants (id, name, subdomain, created_at)
    SELECT 'ten' || lpad(i::text, 6, '0'), 'Org ' || i, 'org' || i, ${now} - i FROM generate_series(1, ${n}) i`);
  await pg.unsafe(`INSERT INTO users (tenant_id, id, email, role, password_hash, created_at, updated_at, email_verified_at)
    SELECT 'ten' || lpad(i::text, 6, '0'), 'u' || i || '-' || j, 'm' || j || '@org' || i || '.test', 'member', 'h', ${now}, ${now}, ${now}
    FROM generate_series(1, ${n}) i, generate_series(1, ${USERS_PER_ORG}) j`);
  await pg.unsafe(`INSERT INTO users (tenant_id, id, email, role, password_hash, created_at, updated_at, email_verified_at)
    SELECT 'ten' || lpad(i::text, 6, '0'), 'shared' || i, 'shared@bench.test', 'member', 'h', ${now} + i, ${now}, ${now} FROM generate_series(1, 2) i`);
  // Filed in the address directory (schema 54) as the stores file every account.
  await pg.unsafe(`INSERT INTO user_directory (email_hash, tenant_id, user_id) SELECT ${emailHashSql("email")}, tenant_id, id FROM users ON CONFLICT DO NOTHING`);
  const later = now + 86_400_000;
  await pg.unsafe(`INSERT INTO magic_links (tenant_id, token_hash, user_id, expires_at, created_at)
    SELECT 'ten' || lpad(i::text, 6, '0'), md5('ml' || i || '-' || k), 'u' || i || '-' || (1 + k % ${USERS_PER_ORG}), ${later}, ${now}
    FROM generate_series(1, ${n}) i, generate_series(1, ${TOKENS_PER_ORG}) k`);
  await pg.unsafe(`INSERT INTO account_tokens (tenant_id, token_hash, purpose, user_id, email, expires_at, created_at)
    SELECT 'ten' || lpad(i::text, 6, '0'), md5('at' || i || '-' || k), 'password_reset', 'u' || i || '-1', 'm1@org' || i || '.test', ${later}, ${now}
    FROM generate_series(1, ${n}) i, generate_series(1, ${TOKENS_PER_ORG}) k`);
  await pg.unsafe(`INSERT INTO invitations (tenant_id, id, email, token_hash, expires_at, created_at, updated_at)
    SELECT 'ten' || lpad(i::text, 6, '0'), 'inv' || i || '-' || k, 'new' || k || '@org' || i || '.test', md5('inv' || i || '-' || k), ${later}, ${now}, ${now}
    FROM generate_series(1, ${n}) i, generate_series(1, ${TOKENS_PER_ORG}) k`);
  // As a database upgraded while links without their organization were live (schema 54): the
  // store calls below look for them; in a database made new they answer without a query.
  await pg.unsafe(`INSERT INTO unnamed_links_until (until) VALUES (${later})`);
  await pg.unsafe("ANALYZE");
}

async function database(n: number): Promise<Pg> {
  const name = `suite_lookup_${n}`;
  const admin = openPostgres(cluster.url, { max: 1 });
  const exists = await admin.one<{ n: number }>`SELECT count(*)::int AS n FROM pg_database WHERE datname = ${name}`;
  if (!exists?.n) await admin.unsafe(`CREATE DATABASE ${name}`);
  await admin.close();
  const pg = openPostgres(cluster.url.replace(/\/[^/?]*(\?|$)/, `/${name}$1`), { max: 2 });
  // Schema 53 has left only tenant-first keys: no index on the address or a token hash alone.
  await migratePostgres(pg);
  if (Number((await pg.one<{ n: number }>`SELECT count(*)::int AS n FROM tenants`)!.n) === 0) await seed(pg, n);
  return pg;
}

// The statements the stores run (the same text, for EXPLAIN), with the arguments of a typical call.
const STATEMENTS: Array<{ name: string; sql: string; params: unknown[] }> = [
  {
    name: "sign-in without a tenant (users.byEmailAnyTenant), address in 2 organizations",
    sql: USERS_BY_EMAIL_ANY_TENANT,
    params: [emailHash("shared@bench.test"), "shared@bench.test", 3],
  },
  {
    name: "legacy invitation token (invitations.byTokenHash(null, …))",
    sql: `${inEveryTenant("invitations", "token_hash = $1")} LIMIT 1`,
    params: ["no-such-hash"],
  },
  {
    name: "legacy magic link (magicLinks.live(null, …))",
    sql: `${inEveryTenant("magic_links", "token_hash = $1 AND used_at IS NULL AND expires_at > $2")} LIMIT 1`,
    params: ["no-such-hash", Date.now()],
  },
  {
    name: "legacy reset (accountTokens.live(null, …))",
    sql: `${inEveryTenant("account_tokens", "token_hash = $1 AND purpose = $2 AND used_at IS NULL AND expires_at > $3")} LIMIT 1`,
    params: ["no-such-hash", "password_reset", Date.now()],
  },
];

for (const n of SIZES) {
  const pg = await database(n);
  const users = createPostgresUsersStore(pg);
  const none = { security: { auditInTx: async () => {} }, mail: { enqueueInTx: async () => "" } } as never;
  const links = createPostgresMagicLinksStore(pg, none);
  const tokens = createPostgresAccountTokensStore(pg, none);
  const invitations = createPostgresInvitationsStore(pg, { users, sessions: {}, security: {}, mail: {} } as never);
  console.log(`\n== ${n} organizations (${n * USERS_PER_ORG + 2} users)`);
  for (const s of STATEMENTS) {
    const plan = (await pg.unsafe<{ "QUERY PLAN": string }>(`EXPLAIN (ANALYZE, BUFFERS) ${s.sql}`, s.params)).map((r) => r["QUERY PLAN"]);
    console.log(`-- ${s.name}\n${plan.join("\n")}`);
    const exec: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const p = (await pg.unsafe<{ "QUERY PLAN": string }>(`EXPLAIN (ANALYZE) ${s.sql}`, s.params)).map((x) => x["QUERY PLAN"]);
      exec.push(Number(/Execution Time: ([\d.]+)/.exec(p.at(-1)!)![1]));
    }
    console.log(`execution (server), median of ${rounds}: ${median(exec).toFixed(2)} ms`);
  }
  const calls: Array<[string, () => Promise<unknown>]> = [
    ["users.byEmailAnyTenant, 0 organizations", () => users.byEmailAnyTenant("nobody@bench.test", 3)],
    ["users.byEmailAnyTenant, 1 organization", () => users.byEmailAnyTenant("m1@org7.test", 3)],
    ["users.byEmailAnyTenant, 2 organizations", () => users.byEmailAnyTenant("shared@bench.test", 3)],
    ["magicLinks.targetsAnyTenant, 2 organizations", () => links.targetsAnyTenant("shared@bench.test")],
    ["accountTokens.targetsAnyTenant, 2 organizations", () => tokens.targetsAnyTenant("shared@bench.test")],
    ["magicLinks.live(null, …), legacy link", () => links.live(null, "no-such-hash", Date.now())],
    ["accountTokens.live(null, …), legacy reset", () => tokens.live(null, "no-such-hash", "password_reset", Date.now())],
    ["invitations.byTokenHash(null, …), legacy invitation", () => invitations.byTokenHash(null, "no-such-hash")],
    ["for comparison: magicLinks.live(tenant, …), a token that names its tenant", () => links.live("ten000007", "no-such-hash", Date.now())],
  ];
  for (const [name, call] of calls) {
    await call();
    const times: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const t0 = performance.now();
      await call();
      times.push(performance.now() - t0);
    }
    console.log(`${name}: median ${median(times).toFixed(2)} ms (round trip, ${rounds} calls)`);
  }
  await pg.close();
}
cluster.stop();
