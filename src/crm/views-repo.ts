/** A saved view of the deal list as stored: `query` and `columns` are JSON text. */
export interface SavedViewRow {
  tenant_id: string;
  id: string;
  owner_id: string;
  name: string;
  kind: string;
  query: string;
  columns: string | null;
  /** 0/1: every member sees a shared view; only its owner a personal one. */
  shared: number;
  created_at: number;
  updated_at: number;
}

export interface SavedViewJoined extends SavedViewRow {
  owner_name: string | null;
}

export type SavedViewChange = Pick<SavedViewRow, "name" | "kind" | "query" | "columns" | "shared" | "updated_at">;

/**
 * Saved views of the deal list (personal and shared) and each member's default view. Every
 * statement names the tenant first.
 */
export interface SavedViewStore {
  /** The user's personal views and the organization's shared ones, by name. */
  visible(tenantId: string, userId: string): Promise<SavedViewJoined[]>;
  byId(tenantId: string, id: string): Promise<SavedViewJoined | null>;
  /** False (nothing written) when the owner already has `max` views. Marks an Idempotency-Key held by the caller. */
  insert(v: SavedViewRow, max: number): Promise<boolean>;
  update(tenantId: string, id: string, change: SavedViewChange): Promise<void>;
  /** The view, and every member's default that named it. */
  remove(tenantId: string, id: string): Promise<void>;
  /** The view the user opens the deal list with, or null. */
  defaultOf(tenantId: string, userId: string): Promise<string | null>;
  /** `viewId` null: no default. */
  setDefault(tenantId: string, userId: string, viewId: string | null): Promise<void>;
}
