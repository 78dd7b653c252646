// The crash test's PostgreSQL side (--postgres): its own throwaway cluster and database, the rows
// it checks read back over SQL, and a wait until a killed instance's connections are gone (so a
// COMMIT the instance sent just before its death has landed before the check starts).
import { openPostgres, type Pg } from "../../src/stores/postgres/database";
import { startCluster } from "../postgres-cluster";

export interface CrashDatabase {
  url: string;
  pg: Pg;
  stop(): Promise<void>;
}

export async function startCrashDatabase(): Promise<CrashDatabase> {
  const cluster = await startCluster();
  const admin = openPostgres(cluster.url, { max: 1 });
  try {
    await admin.unsafe("CREATE DATABASE crash");
  } finally {
    await admin.close();
  }
  const url = new URL(cluster.url);
  url.pathname = "/crash";
  const pg = openPostgres(url.toString(), { max: 2 });
  return {
    url: url.toString(),
    pg,
    async stop() {
      await pg.close();
      cluster.stop();
    },
  };
}

export interface StoredRows {
  deals: Map<string, { id: string; title: string; value_cents: number }>;
  invited: Set<string>;
  keys: Array<{ key: string; state: string; resource_id: string | null }>;
}

/** The deals and invitations as the database holds them (the same reads as the SQLite file's). */
export async function readRows(pg: Pg): Promise<StoredRows> {
  const deals = await pg.all<{ id: string; title: string; value_cents: number }>`SELECT id, title, value_cents FROM deals`;
  const invited = await pg.all<{ k: string }>`SELECT t.subdomain || ' ' || i.email AS k FROM invitations i JOIN tenants t ON t.id = i.tenant_id`;
  const keys = await pg.all<{ key: string; state: string; resource_id: string | null }>`SELECT key, state, resource_id FROM idempotency_keys`;
  return { deals: new Map(deals.map((r) => [r.id, r])), invited: new Set(invited.map((r) => r.k)), keys };
}

/** Waits (up to 30 s) until no connection of the process `pid` is left on the server. */
export async function connectionsGone(pg: Pg, pid: number): Promise<boolean> {
  const name = `workspace-suite:${pid}`;
  for (let waited = 0; waited < 30_000; waited += 50) {
    const row = await pg.one<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = ${name}`;
    if (row?.n === 0) return true;
    await Bun.sleep(50);
  }
  return false;
}
