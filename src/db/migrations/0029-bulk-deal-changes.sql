
-- ---- version 29: bulk changes of deals are jobs too, and can be undone (issue 32) ----

-- What a job was asked to do, as JSON: a bulk change's action (its stage or assignee, or delete),
-- how its deals were chosen, the undo job that reverted it; an undo job's bulk change. NULL for imports.
-- A bulk change keeps its crm_job_undo entries (each deal's values before it, or a deleted deal's
-- row, timeline and notes) for the ten minutes it may be undone.
ALTER TABLE crm_jobs ADD COLUMN detail TEXT;

-- The full-text index re-indexes a deal's whole text only when what it holds changes: the text, the
-- stage, or whether anybody is assigned (unassigned_token). A change from one assignee to another
-- (a bulk reassignment) left every token as it was, yet re-indexed the whole text (689 against 764 µs
-- a deal in `bench bulk` with BENCH_BULK_SET=assignee at 100k deals, load 5–8).
DROP TRIGGER deals_fts_update;
CREATE TRIGGER deals_fts_update AFTER UPDATE OF search_text, stage, assigned_to ON deals
  WHEN old.search_text IS NOT new.search_text OR old.stage IS NOT new.stage OR (old.assigned_to IS NULL) IS NOT (new.assigned_to IS NULL)
BEGIN
  INSERT INTO deals_fts (deals_fts, rowid, search_text, stage_token, unassigned_token) VALUES ('delete', old.seq, old.search_text, old.stage_token, old.unassigned_token);
  INSERT INTO deals_fts (rowid, search_text, stage_token, unassigned_token) VALUES (new.seq, new.search_text, new.stage_token, new.unassigned_token);
END;
