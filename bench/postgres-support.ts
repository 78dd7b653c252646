// Helpers of bench/postgres-deals.ts: organizations made directly in SQL (the in-process bench
// needs only their rows and pipelines), and a bench request's path read back as a list query.
import { DEFAULT_STAGES, type DealListQuery, type SortDir, type SortField } from "../src/crm/model";
import { newId } from "../src/kernel/ids";
import { DEFAULT_MODULES } from "../src/organization/model";
import { openPostgres, type Pg } from "../src/stores/postgres/database";

/**
 * The bench cluster's server settings: what a production server of this machine's size would set
 * (23 GB of memory, SSD), not the test cluster's defaults (128 MB of shared buffers).
 */
export const BENCH_PG_SETTINGS = [
  "shared_buffers=2GB",
  "effective_cache_size=8GB",
  "work_mem=16MB",
  "maintenance_work_mem=1GB",
  "random_page_cost=1.1",
  "jit=off",
  "max_wal_size=8GB",
];

/** Whether the server at `base` already holds a seeded `suite_bench` database (a kept cluster). */
export async function seededBefore(base: string): Promise<boolean> {
  const admin = openPostgres(base, { max: 1 });
  try {
    const r = await admin.one<{ n: number }>`SELECT count(*)::int AS n FROM pg_database WHERE datname = 'suite_bench'`;
    if (!r?.n) return false;
  } finally {
    await admin.close();
  }
  const db = openPostgres(base.replace(/\/[^/?]*(\?|$)/, "/suite_bench$1"), { max: 1 });
  try {
    const r = await db.one<{ n: number }>`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_name = 'deal_gram_counts'`;
    if (!r?.n) return false;
    const d = await db.one<{ seeded: boolean }>`SELECT EXISTS (SELECT 1 FROM deal_gram_counts) AS seeded`;
    return d?.seeded === true;
  } finally {
    await db.close();
  }
}

/** The ids of the bench's organizations, made (with the default pipeline) when `create`. */
export async function ensureBenchTenants(pg: Pg, subs: string[], now: number, create: boolean): Promise<string[]> {
  if (!create) {
    const rows = await pg.all<{ id: string; subdomain: string }>`SELECT id, subdomain FROM tenants WHERE subdomain = ANY(${subs}::text[])`;
    return subs.map((s) => rows.find((r) => r.subdomain === s)!.id);
  }
  const ids: string[] = [];
  for (const sub of subs) {
    const id = newId();
    ids.push(id);
    await pg.run`INSERT INTO tenants (id, name, subdomain, created_at) VALUES (${id}, ${sub}, ${sub}, ${now})`;
    for (const m of DEFAULT_MODULES) await pg.run`INSERT INTO tenant_modules (tenant_id, module) VALUES (${id}, ${m})`;
    for (const [i, s] of DEFAULT_STAGES.entries())
      await pg.run`INSERT INTO pipeline_stages (tenant_id, id, key, name, color, position, probability, is_won, is_lost, created_at)
        VALUES (${id}, ${newId()}, ${s.key}, ${s.name}, ${s.color}, ${i}, ${s.probability}, ${s.is_won}, ${s.is_lost}, ${now})`;
  }
  return ids;
}

/** A bench request (bench/shapes.ts) as the list query the service would make of it; `token` is the user id for `mine`. */
export function listQueryOf(path: string, token: string): DealListQuery {
  const p = new URL(path, "http://x").searchParams;
  const stages = p.getAll("stage");
  const assignee = p.get("mine") === "true" ? token : p.get("unassigned") === "true" ? "" : (p.get("assigned_to") ?? null);
  return {
    page: Number(p.get("page") ?? 1),
    size: Number(p.get("size") ?? 20),
    search: p.get("search")?.trim() || null,
    stages: stages.length ? stages : null,
    assignee,
    sortBy: (p.get("sort_by") ?? "created_at") as SortField,
    sortDir: (p.get("sort_dir") ?? (p.get("sort_by") ? "asc" : "desc")) as SortDir,
  };
}

/**
 * The bench's database on the server at `base`: `suite_bench`, made anew (dropped first) unless
 * `reuse`; returns its URL and a pool of two on it.
 */
export async function benchDatabase(base: string, reuse: boolean): Promise<{ url: string; pg: Pg }> {
  const url = base.replace(/\/[^/?]*(\?|$)/, "/suite_bench$1");
  if (!reuse) {
    const admin = openPostgres(base, { max: 1 });
    await admin.unsafe("DROP DATABASE IF EXISTS suite_bench WITH (FORCE)");
    await admin.unsafe("CREATE DATABASE suite_bench");
    await admin.close();
  }
  return { url, pg: openPostgres(url, { max: 2 }) };
}
