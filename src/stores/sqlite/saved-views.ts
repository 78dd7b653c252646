import type { SavedViewChange, SavedViewJoined, SavedViewRow, SavedViewStore } from "../../crm/views-repo";
import { type Db, writeTxAsync } from "../../db/database";
import { keyCreatedInTx } from "./idempotency";

const JOINED = `SELECT v.*, coalesce(u.full_name, u.email) AS owner_name FROM saved_views v
  LEFT JOIN users u ON u.tenant_id = v.tenant_id AND u.id = v.owner_id`;

/** SQL of saved views (src/crm/views-repo.ts). Every statement names the tenant first. */
export function createSqliteSavedViewStore(db: Db) {
  // The owner's views and the shared ones: two index ranges (by owner, shared = 1).
  const visible = db.prepare<SavedViewJoined, [string, string]>(
    `${JOINED} WHERE v.tenant_id = ?1 AND (v.owner_id = ?2 OR v.shared = 1) ORDER BY v.name COLLATE NOCASE, v.id`,
  );
  const byId = db.prepare<SavedViewJoined, [string, string]>(`${JOINED} WHERE v.tenant_id = ?1 AND v.id = ?2`);
  const owned = db.prepare<{ n: number }, [string, string]>("SELECT count(*) AS n FROM saved_views WHERE tenant_id = ?1 AND owner_id = ?2");
  const insert = db.prepare<never, [string, string, string, string, string, string, string | null, number, number, number]>(
    `INSERT INTO saved_views (tenant_id, id, owner_id, name, kind, query, columns, shared, created_at, updated_at)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)`,
  );
  const update = db.prepare<never, [string, string, string, string, string, string | null, number, number]>(
    "UPDATE saved_views SET name = ?3, kind = ?4, query = ?5, columns = ?6, shared = ?7, updated_at = ?8 WHERE tenant_id = ?1 AND id = ?2",
  );
  const remove = db.prepare<never, [string, string]>("DELETE FROM saved_views WHERE tenant_id = ?1 AND id = ?2");
  const removeDefaults = db.prepare<never, [string, string]>("DELETE FROM saved_view_defaults WHERE tenant_id = ?1 AND view_id = ?2");
  const defaultOf = db.prepare<{ view_id: string }, [string, string]>("SELECT view_id FROM saved_view_defaults WHERE tenant_id = ?1 AND user_id = ?2");
  const setDefault = db.prepare<never, [string, string, string]>(
    "INSERT INTO saved_view_defaults (tenant_id, user_id, view_id) VALUES (?1, ?2, ?3) ON CONFLICT (tenant_id, user_id) DO UPDATE SET view_id = excluded.view_id",
  );
  const clearDefault = db.prepare<never, [string, string]>("DELETE FROM saved_view_defaults WHERE tenant_id = ?1 AND user_id = ?2");

  const store = {
    visible: async (tenantId: string, userId: string) => visible.all(tenantId, userId),
    byId: async (tenantId: string, id: string) => byId.get(tenantId, id),
    async insert(v: SavedViewRow, max: number): Promise<boolean> {
      return writeTxAsync(db, () => {
        if (owned.get(v.tenant_id, v.owner_id)!.n >= max) return false;
        insert.run(v.tenant_id, v.id, v.owner_id, v.name, v.kind, v.query, v.columns, v.shared, v.created_at, v.updated_at);
        keyCreatedInTx(db, v.id);
        return true;
      });
    },
    async update(tenantId: string, id: string, c: SavedViewChange): Promise<void> {
      update.run(tenantId, id, c.name, c.kind, c.query, c.columns, c.shared, c.updated_at);
    },
    async remove(tenantId: string, id: string): Promise<void> {
      await writeTxAsync(db, () => {
        removeDefaults.run(tenantId, id);
        remove.run(tenantId, id);
      });
    },
    defaultOf: async (tenantId: string, userId: string) => defaultOf.get(tenantId, userId)?.view_id ?? null,
    async setDefault(tenantId: string, userId: string, viewId: string | null): Promise<void> {
      if (viewId === null) clearDefault.run(tenantId, userId);
      else setDefault.run(tenantId, userId, viewId);
    },
  };
  return store satisfies SavedViewStore;
}
