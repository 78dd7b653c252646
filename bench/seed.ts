// The benches' seeding on SQLite: organizations made as `suite tenant create` makes them (an
// admin and the default pipeline), then filled by the bulk seed (demo members sharing one argon2
// hash of the bench password, accounts, contacts and deals). Every bench that needs a seeded file
// or context comes here, so they all measure the same data.
import { loadConfig } from "../src/config";
import { type Context, createContext } from "../src/context";
import type { Pg } from "../src/stores/postgres/database";
import { bulkSeed as postgresBulkSeed } from "../src/stores/postgres/seed";
import { bulkSeed } from "../src/stores/sqlite/bulk-load";

/** The password of every seeded account unless a bench names its own. */
export const BENCH_PASSWORD = "bench password 1";

export interface BenchOrganization {
  subdomain: string;
  /** Demo deals the bulk seed adds. */
  deals: number;
  /** Organization name (default: the subdomain). */
  name?: string;
  /** Its admin's address (default: admin@<subdomain>.example). */
  email?: string;
}

export interface Seeded {
  /** The organizations' ids, in the order given. */
  tenantIds: string[];
  /** The argon2 hash of the password every demo member got. */
  passwordHash: string;
  /** Wall time of the whole seed (organizations, hash and bulk seed). */
  seconds: number;
}

/** The deal-list bench's data: `bigco` of `big` deals beside `count - 1` organizations `smallco<i>` of `small`. */
export function bigAndSmall(big: number, small: number, count: number): BenchOrganization[] {
  return Array.from({ length: count }, (_, i) => (i === 0 ? { subdomain: "bigco", deals: big } : { subdomain: `smallco${i}`, deals: small }));
}

/** Seeds `orgs` through a SQLite context (left open for the caller). */
export async function seedOrganizations(ctx: Context, orgs: BenchOrganization[], password = BENCH_PASSWORD, userAgent = "bench"): Promise<Seeded> {
  const started = performance.now();
  const tenantIds: string[] = [];
  for (const o of orgs) {
    const { tenant } = await ctx.tenants.createOrganization(
      { email: o.email ?? `admin@${o.subdomain}.example`, password, tenant_name: o.name ?? o.subdomain, subdomain: o.subdomain },
      { ip: null, userAgent },
      "cli",
    );
    tenantIds.push(tenant.id);
  }
  const passwordHash = await ctx.hasher.hash(password);
  bulkSeed(ctx.db, orgs.map((o, i) => ({ tenantId: tenantIds[i]!, subdomain: o.subdomain, deals: o.deals, passwordHash })), ctx.now());
  return { tenantIds, passwordHash, seconds: (performance.now() - started) / 1000 };
}

/** A SQLite context on `dbFile`, quiet (benches print their own lines). */
export const benchContext = (dbFile: string, env: Record<string, string> = {}): Context =>
  createContext({ config: loadConfig({}, { SUITE_DB: dbFile, ...env }), log: () => {} });

/** Seeds `orgs` into the SQLite file `dbFile` (created and migrated when new), then closes it. */
export async function seedFile(dbFile: string, orgs: BenchOrganization[], password = BENCH_PASSWORD): Promise<Seeded> {
  const ctx = benchContext(dbFile);
  try {
    return await seedOrganizations(ctx, orgs, password);
  } finally {
    ctx.close();
  }
}

/**
 * The bulk seed on PostgreSQL, for organizations that exist already (made by signup over HTTP or
 * directly in SQL: `tenantIds[i]` is `orgs[i]`'s). Answers its wall time in seconds.
 */
export async function seedPostgres(pg: Pg, orgs: BenchOrganization[], tenantIds: readonly string[], passwordHash: string): Promise<number> {
  const started = performance.now();
  await postgresBulkSeed(pg, orgs.map((o, i) => ({ tenantId: tenantIds[i]!, subdomain: o.subdomain, deals: o.deals, passwordHash })), Date.now());
  return (performance.now() - started) / 1000;
}
