
-- ---- version 33: a deal's notes are found by the deal search (issue 32) ----

-- The newest 20,000 characters of the deal's notes, newest first, joined by line breaks
-- (src/db/deal-note-text.ts), kept by each note's create, edit and delete in its own transaction,
-- and a part of search_text: the search's index, counters and every page of the list read the
-- deal's one text, so a deal found by its title and by a note counts once. Deals with notes are
-- filled in by the migration's data step (JS: search_text is lower-cased the JS way).
ALTER TABLE deals ADD COLUMN note_text TEXT NOT NULL DEFAULT '';

-- A deal's notes newest first, for that text: read one at a time until the bound is reached.
DROP INDEX deal_notes_by_deal;
CREATE INDEX deal_notes_newest ON deal_notes (tenant_id, deal_id, created_at);
