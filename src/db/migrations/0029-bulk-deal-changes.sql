
-- ---- version 29: bulk changes of deals are jobs too, and can be undone (issue 32) ----

-- What a job was asked to do, as JSON: a bulk change's action (its stage or assignee, or delete),
-- how its deals were chosen, the undo job that reverted it; an undo job's bulk change. NULL for imports.
-- A bulk change keeps its crm_job_undo entries (each deal's values before it, or a deleted deal's
-- row, timeline and notes) for the ten minutes it may be undone.
ALTER TABLE crm_jobs ADD COLUMN detail TEXT;
