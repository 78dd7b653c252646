-- A deal's notes are found by the deal search (schema version 22, issue 32): the same column and
-- index as SQLite's migration 33. note_text is the newest 20,000 characters of the deal's notes,
-- newest first, joined by line breaks (src/db/deal-note-text.ts), kept by each note's create, edit
-- and delete in its own transaction, and a part of search_text: the trigram index, the gram
-- counters, search_head and every page of the list read the deal's one text, so a deal found by
-- its title and by a note counts once. Deals with notes are filled in by the migration's data step
-- (migrate.ts: search_text is lower-cased the JS way).
ALTER TABLE deals ADD COLUMN note_text text NOT NULL DEFAULT '';

-- Rows written whole (`INSERT INTO deals SELECT * FROM json_populate_record(...)`: an import's
-- new deals, a bulk change's undo) from JSON without the column would give it NULL: '' instead.
CREATE OR REPLACE FUNCTION deal_search_head_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.search_head := CASE WHEN octet_length(NEW.search_text) <= 600 THEN NEW.search_text ELSE left(NEW.search_text, 150) END;
  NEW.note_text := coalesce(NEW.note_text, '');
  RETURN NEW;
END
$$;

-- A deal's notes newest first, for that text: read a few at a time until the bound is reached.
DROP INDEX deal_notes_by_deal;
CREATE INDEX deal_notes_newest ON deal_notes (tenant_id, deal_id, created_at, id);
