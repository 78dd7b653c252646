-- A deal's activity timeline and notes (schema version 13, issue 32): the same tables as SQLite's
-- migration 23. stage_changed_at NULL (deals written before) reads as updated_at; no backfill.
ALTER TABLE deals ADD COLUMN stage_changed_at bigint;

-- What happened to a deal, newest first by `n` (1, 2, ... per deal, taken while the deal's row is
-- locked). Removed with the deal (the foreign key cascades).
CREATE TABLE deal_activities (
  tenant_id  text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  deal_id    text COLLATE "C" NOT NULL,
  n          bigint NOT NULL,
  id         text COLLATE "C" NOT NULL,
  type       text NOT NULL,
  actor_id   text,
  created_at bigint NOT NULL,
  data       text NOT NULL,
  PRIMARY KEY (tenant_id, deal_id, n),
  FOREIGN KEY (tenant_id, deal_id) REFERENCES deals (tenant_id, id) ON DELETE CASCADE
);

CREATE TABLE deal_notes (
  tenant_id  text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  id         text COLLATE "C" NOT NULL,
  deal_id    text COLLATE "C" NOT NULL,
  author_id  text NOT NULL,
  body       text NOT NULL,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, deal_id) REFERENCES deals (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX deal_notes_by_deal ON deal_notes (tenant_id, deal_id);
