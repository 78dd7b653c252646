
-- ---- version 34: the deal search's counters swept through in key order after a burst of writes (issues 27, 28, 32) ----

-- An organization with many pending rows (an import, a bulk change) has them folded by a sweep
-- (src/db/search-sweep.ts) instead of a few at a time: the rows up to upto_id are added up off the
-- writer, then written to deal_gram_counts and deal_key_grams in key order, in short steps that
-- each move a cursor (the last key written), then deleted. A reader adds a pending row up to
-- upto_id only where its counter's key is past the cursor (not swept yet), so totals stay exact at
-- every step; a killed process adds the same rows up again and goes on from the cursor.
CREATE TABLE deal_search_sweeps (
  tenant_id     TEXT PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
  upto_id       INTEGER NOT NULL,
  -- deal_gram_counts: 1 when every key is written; else the last key written ('' three times: none).
  grams_done    INTEGER NOT NULL DEFAULT 0,
  gram          TEXT NOT NULL DEFAULT '',
  gram_stage    TEXT NOT NULL DEFAULT '',
  gram_assignee TEXT NOT NULL DEFAULT '',
  -- deal_key_grams, the same way.
  keys_done     INTEGER NOT NULL DEFAULT 0,
  key_ord       TEXT NOT NULL DEFAULT '',
  key_gram      TEXT NOT NULL DEFAULT '',
  key_bucket    TEXT NOT NULL DEFAULT ''
) STRICT, WITHOUT ROWID;
