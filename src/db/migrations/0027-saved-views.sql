-- ---- version 27: saved views of the deal list (issue 32) ----

-- A member's view of the deal list: the list's parameters (`query`, JSON) and how it shows them
-- (`kind` table or board, `columns` JSON or NULL). A personal view is its owner's alone; a shared
-- one (shared = 1) every member sees and admins write.
CREATE TABLE saved_views (
  tenant_id  TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  id         TEXT NOT NULL,
  owner_id   TEXT NOT NULL,
  name       TEXT NOT NULL,
  kind       TEXT NOT NULL,
  query      TEXT NOT NULL,
  columns    TEXT,
  shared     INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, id)
) STRICT, WITHOUT ROWID;
CREATE INDEX saved_views_by_owner ON saved_views (tenant_id, owner_id);
CREATE INDEX saved_views_shared ON saved_views (tenant_id, shared);

-- Each member's default view (theirs even when the view is shared): at most one per member.
CREATE TABLE saved_view_defaults (
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  user_id   TEXT NOT NULL,
  view_id   TEXT NOT NULL,
  PRIMARY KEY (tenant_id, user_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX saved_view_defaults_by_view ON saved_view_defaults (tenant_id, view_id);
