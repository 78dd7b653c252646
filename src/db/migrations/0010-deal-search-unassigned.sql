-- ---- version 10: the deal search index knows which deals are unassigned (issue 15) ----

-- One token ("\x01-\x01") for a deal nobody is assigned to, none otherwise: a search among the
-- unassigned is one walk of the trigram index (the term AND this token) instead of the term's
-- matches intersected with every unassigned deal. Computed, never stored.
ALTER TABLE deals ADD COLUMN unassigned_token TEXT GENERATED ALWAYS AS (CASE WHEN assigned_to IS NULL THEN char(1) || '-' || char(1) END) VIRTUAL;
DROP TRIGGER deals_fts_insert;
DROP TRIGGER deals_fts_delete;
DROP TRIGGER deals_fts_update;
DROP TABLE deals_fts;
CREATE VIRTUAL TABLE deals_fts USING fts5(search_text, stage_token, unassigned_token, content='deals', content_rowid='seq', tokenize='trigram case_sensitive 1');
INSERT INTO deals_fts (deals_fts) VALUES ('rebuild');
CREATE TRIGGER deals_fts_insert AFTER INSERT ON deals BEGIN
  INSERT INTO deals_fts (rowid, search_text, stage_token, unassigned_token) VALUES (new.seq, new.search_text, new.stage_token, new.unassigned_token);
END;
CREATE TRIGGER deals_fts_delete AFTER DELETE ON deals BEGIN
  INSERT INTO deals_fts (deals_fts, rowid, search_text, stage_token, unassigned_token) VALUES ('delete', old.seq, old.search_text, old.stage_token, old.unassigned_token);
END;
CREATE TRIGGER deals_fts_update AFTER UPDATE OF search_text, stage, assigned_to ON deals BEGIN
  INSERT INTO deals_fts (deals_fts, rowid, search_text, stage_token, unassigned_token) VALUES ('delete', old.seq, old.search_text, old.stage_token, old.unassigned_token);
  INSERT INTO deals_fts (rowid, search_text, stage_token, unassigned_token) VALUES (new.seq, new.search_text, new.stage_token, new.unassigned_token);
END;
