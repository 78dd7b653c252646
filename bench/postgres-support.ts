// Helpers of bench/postgres-deals.ts: organizations made directly in SQL (the in-process bench
// needs only their rows and pipelines), and a bench request's path read back as a list query.
import { DEFAULT_STAGES, type DealListQuery, type SortDir, type SortField } from "../src/crm/model";
import { newId } from "../src/db/ids";
import type { Pg } from "../src/stores/postgres/database";

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
