-- Saved views of the deal list (schema version 16, issue 32): the same tables as SQLite's
-- migration 27. A personal view is its owner's alone; a shared one (shared = 1) every member sees.
CREATE TABLE saved_views (
  tenant_id  text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  id         text COLLATE "C" NOT NULL,
  owner_id   text COLLATE "C" NOT NULL,
  name       text NOT NULL,
  kind       text NOT NULL,
  query      text NOT NULL,
  columns    text,
  shared     integer NOT NULL,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  PRIMARY KEY (tenant_id, id)
);
CREATE INDEX saved_views_by_owner ON saved_views (tenant_id, owner_id);
CREATE INDEX saved_views_shared ON saved_views (tenant_id, shared);

-- Each member's default view (theirs even when the view is shared).
CREATE TABLE saved_view_defaults (
  tenant_id text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  user_id   text COLLATE "C" NOT NULL,
  view_id   text COLLATE "C" NOT NULL,
  PRIMARY KEY (tenant_id, user_id)
);
CREATE INDEX saved_view_defaults_by_view ON saved_view_defaults (tenant_id, view_id);
