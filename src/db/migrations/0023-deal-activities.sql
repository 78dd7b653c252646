
-- ---- version 23: a deal's activity timeline and notes (issue 32) ----

-- When the deal entered its current stage. NULL on deals written before this version: read as
-- updated_at, and set to it by the next write that does not change the stage (no backfill: an
-- UPDATE of every deal would hold the writer for seconds at a million deals).
ALTER TABLE deals ADD COLUMN stage_changed_at INTEGER;

-- What happened to a deal, newest first by `n` (1, 2, ... per deal, taken in the writing
-- transaction). Written in the same transaction as the change; removed with the deal (trigger below).
-- `data` is the entry's JSON; a note's entry has the note's id as its id and the note's text is
-- read from deal_notes, so an edited note shows its current text.
CREATE TABLE deal_activities (
  tenant_id  TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  deal_id    TEXT NOT NULL,
  n          INTEGER NOT NULL,
  id         TEXT NOT NULL,
  type       TEXT NOT NULL,
  actor_id   TEXT,
  created_at INTEGER NOT NULL,
  data       TEXT NOT NULL,
  PRIMARY KEY (tenant_id, deal_id, n)
) STRICT, WITHOUT ROWID;

-- Notes on a deal: plain text, changed or deleted by their author or an admin.
CREATE TABLE deal_notes (
  tenant_id  TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  id         TEXT NOT NULL,
  deal_id    TEXT NOT NULL,
  author_id  TEXT NOT NULL,
  body       TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, id)
) STRICT, WITHOUT ROWID;
CREATE INDEX deal_notes_by_deal ON deal_notes (tenant_id, deal_id);

-- Kept as long as the deal exists, whichever path deletes it (the API, an import's undo).
CREATE TRIGGER deal_activities_with_deal AFTER DELETE ON deals BEGIN
  DELETE FROM deal_activities WHERE tenant_id = old.tenant_id AND deal_id = old.id;
  DELETE FROM deal_notes WHERE tenant_id = old.tenant_id AND deal_id = old.id;
END;
