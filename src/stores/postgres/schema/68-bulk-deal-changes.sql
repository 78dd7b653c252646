-- Bulk changes of deals are jobs too, and can be undone (schema version 18, issue 32; SQLite's migration 29).
-- What a job was asked to do, as JSON (a bulk change's action and selection, its undo); NULL for imports.
ALTER TABLE crm_jobs ADD COLUMN detail text;
