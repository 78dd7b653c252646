-- The deal search's gram counters follow deal writes through a pending table (schema version 23,
-- src/stores/postgres/search-fold.ts). A deal write appends the counted state it leaves (-1) and
-- the one it enters (+1), one row each, instead of upserting its ~100-270 deal_gram_counts rows:
-- a bulk change of 68,000 deals spent 182 s of its 284 in that upsert, 13.7 million rows at 13 µs
-- (bench/probes/pg-bulk.ts). The fold, the only writer of an organization's counters, takes its
-- pending rows a few thousand at a time, adds their grams up in memory (rows of one stage and
-- assignee share most of them) and writes each changed counter once, deleting the rows it folded,
-- in one transaction. A 1-3 letter search adds the pending rows it matches to the counters in one
-- statement (one snapshot): it sees the rows or their fold, never both or neither.
CREATE TABLE deal_search_pending (
  tenant_id   text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  id          bigint GENERATED ALWAYS AS IDENTITY,
  stage       text COLLATE "C" NOT NULL,
  assignee    text COLLATE "C" NOT NULL,
  search_text text NOT NULL,
  sign        smallint NOT NULL,
  PRIMARY KEY (tenant_id, id)
);

-- The fold's lock of an organization's gram counters: one fold at a time (across instances), and
-- what else rewrites them (a stage deleted, a recount) waits for it.
CREATE FUNCTION deal_search_fold_lock(t text) RETURNS void LANGUAGE sql AS $$
  SELECT pg_advisory_xact_lock(hashtextextended('deal_search_fold/' || t, 0))
$$;
-- The same lock tried (the fold itself): false while another holds it.
CREATE FUNCTION deal_search_fold_try_lock(t text) RETURNS boolean LANGUAGE sql AS $$
  SELECT pg_try_advisory_xact_lock(hashtextextended('deal_search_fold/' || t, 0))
$$;

CREATE OR REPLACE FUNCTION deal_gram_counts_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND NEW.search_text = OLD.search_text AND NEW.stage = OLD.stage
     AND NEW.assigned_to IS NOT DISTINCT FROM OLD.assigned_to THEN
    RETURN NULL;
  END IF;
  IF TG_OP = 'DELETE' AND NOT EXISTS (SELECT 1 FROM tenants WHERE id = OLD.tenant_id) THEN
    RETURN NULL;
  END IF;
  IF TG_OP <> 'INSERT' THEN
    INSERT INTO deal_search_pending (tenant_id, stage, assignee, search_text, sign)
    VALUES (OLD.tenant_id, OLD.stage, coalesce(OLD.assigned_to, ''), OLD.search_text, -1);
  END IF;
  IF TG_OP <> 'DELETE' THEN
    INSERT INTO deal_search_pending (tenant_id, stage, assignee, search_text, sign)
    VALUES (NEW.tenant_id, NEW.stage, coalesce(NEW.assigned_to, ''), NEW.search_text, 1);
  END IF;
  RETURN NULL;
END
$$;
