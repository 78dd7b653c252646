import type { SavedViewChange, SavedViewJoined, SavedViewRow, SavedViewStore } from "../../crm/views-repo";
import type { Pg } from "./database";
import { keyCreatedInTx } from "./idempotency";

/** PostgreSQL twin of src/stores/sqlite/saved-views.ts. */
export function createPostgresSavedViewStore(pg: Pg) {
  const store = {
    visible: (tenantId: string, userId: string) =>
      pg.all<SavedViewJoined>`
        SELECT v.*, coalesce(u.full_name, u.email) AS owner_name FROM saved_views v
          LEFT JOIN users u ON u.tenant_id = v.tenant_id AND u.id = v.owner_id
         WHERE v.tenant_id = ${tenantId} AND (v.owner_id = ${userId} OR v.shared = 1) ORDER BY lower(v.name), v.id`,
    byId: (tenantId: string, id: string) =>
      pg.one<SavedViewJoined>`
        SELECT v.*, coalesce(u.full_name, u.email) AS owner_name FROM saved_views v
          LEFT JOIN users u ON u.tenant_id = v.tenant_id AND u.id = v.owner_id
         WHERE v.tenant_id = ${tenantId} AND v.id = ${id}`,
    async insert(v: SavedViewRow, max: number): Promise<boolean> {
      return pg.begin(async (tx) => {
        // One owner's creates one at a time, so two at once cannot both pass the count.
        await tx.run`SELECT pg_advisory_xact_lock(hashtextextended(${`saved-views:${v.tenant_id}:${v.owner_id}`}, 0))`;
        const owned = await tx.one<{ n: number }>`SELECT count(*)::int AS n FROM saved_views WHERE tenant_id = ${v.tenant_id} AND owner_id = ${v.owner_id}`;
        if (owned!.n >= max) return false;
        await tx.run`
          INSERT INTO saved_views (tenant_id, id, owner_id, name, kind, query, columns, shared, created_at, updated_at)
          VALUES (${v.tenant_id}, ${v.id}, ${v.owner_id}, ${v.name}, ${v.kind}, ${v.query}, ${v.columns}, ${v.shared}, ${v.created_at}, ${v.updated_at})`;
        await keyCreatedInTx(tx, v.id);
        return true;
      });
    },
    async update(tenantId: string, id: string, c: SavedViewChange): Promise<void> {
      await pg.run`
        UPDATE saved_views SET name = ${c.name}, kind = ${c.kind}, query = ${c.query}, columns = ${c.columns}, shared = ${c.shared}, updated_at = ${c.updated_at}
         WHERE tenant_id = ${tenantId} AND id = ${id}`;
    },
    async remove(tenantId: string, id: string): Promise<void> {
      await pg.begin(async (tx) => {
        await tx.run`DELETE FROM saved_view_defaults WHERE tenant_id = ${tenantId} AND view_id = ${id}`;
        await tx.run`DELETE FROM saved_views WHERE tenant_id = ${tenantId} AND id = ${id}`;
      });
    },
    async defaultOf(tenantId: string, userId: string): Promise<string | null> {
      const row = await pg.one<{ view_id: string }>`SELECT view_id FROM saved_view_defaults WHERE tenant_id = ${tenantId} AND user_id = ${userId}`;
      return row?.view_id ?? null;
    },
    async setDefault(tenantId: string, userId: string, viewId: string | null): Promise<void> {
      if (viewId === null) await pg.run`DELETE FROM saved_view_defaults WHERE tenant_id = ${tenantId} AND user_id = ${userId}`;
      else {
        await pg.run`
          INSERT INTO saved_view_defaults (tenant_id, user_id, view_id) VALUES (${tenantId}, ${userId}, ${viewId})
          ON CONFLICT (tenant_id, user_id) DO UPDATE SET view_id = excluded.view_id`;
      }
    },
  };
  return store satisfies SavedViewStore;
}
