-- ---- version 12: deal_gram_counts also counts 3-character pieces (issue 15) ----

-- A 3-letter search's exact total, with any stage and assignee filter, becomes a sum of a few rows
-- instead of a count over the trigram index's matches (every match read: 20-45 ms at 1M deals for
-- a common fragment), and tells the page how dense the matches are within the filters. The
-- triggers now write each distinct 1-, 2- and 3-character piece of a deal's text once.

-- Existing deals' 3-character pieces are counted one deal at a time (a trigger on a scratch table),
-- never as one grouping of every deal's pieces (hundreds of millions of rows to sort).
-- With the default 32 MiB cache the counts of a million-deal organization (45 MB) did not fit, and
-- each deal's upserts spilled pages to the WAL again and again (28 min for 1.9M deals, 40 GB
-- written); 128 MiB for the backfill, back to the usual after it.
PRAGMA cache_size = -131072;
CREATE TEMP TABLE deal_grams_backfill (seq INTEGER NOT NULL);
CREATE TEMP TRIGGER deal_grams_backfill_three AFTER INSERT ON deal_grams_backfill BEGIN
  INSERT INTO deal_gram_counts (tenant_id, gram, stage, assignee, n)
    SELECT d.tenant_id, g.gram, d.stage, coalesce(d.assigned_to, ''), 1 FROM deals d, (
      WITH RECURSIVE pos(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM pos WHERE i < (SELECT length(search_text) FROM deals WHERE seq = new.seq) - 2)
      SELECT DISTINCT substr(t.search_text, i, 3) AS gram FROM pos, (SELECT search_text FROM deals WHERE seq = new.seq) t) g
    WHERE d.seq = new.seq AND length(g.gram) = 3 AND instr(g.gram, char(10)) = 0
    ON CONFLICT (tenant_id, gram, stage, assignee) DO UPDATE SET n = n + 1;
END;
INSERT INTO deal_grams_backfill (seq) SELECT seq FROM deals;
DROP TRIGGER deal_grams_backfill_three;
DROP TABLE deal_grams_backfill;
PRAGMA cache_size = -32768;

DROP TRIGGER deal_grams_insert;
DROP TRIGGER deal_grams_delete;
DROP TRIGGER deal_grams_update;
CREATE TRIGGER deal_grams_insert AFTER INSERT ON deals BEGIN
  INSERT INTO deal_gram_counts (tenant_id, gram, stage, assignee, n)
    SELECT new.tenant_id, gram, new.stage, coalesce(new.assigned_to, ''), 1 FROM (
      WITH RECURSIVE pos(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM pos WHERE i < length(new.search_text))
      SELECT substr(new.search_text, i, 1) AS gram FROM pos
      UNION SELECT substr(new.search_text, i, 2) FROM pos WHERE i < length(new.search_text)
      UNION SELECT substr(new.search_text, i, 3) FROM pos WHERE i < length(new.search_text) - 1)
    WHERE instr(gram, char(10)) = 0
    ON CONFLICT (tenant_id, gram, stage, assignee) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER deal_grams_delete AFTER DELETE ON deals BEGIN
  UPDATE deal_gram_counts SET n = n - 1
   WHERE tenant_id = old.tenant_id AND stage = old.stage AND assignee = coalesce(old.assigned_to, '') AND gram IN (
      WITH RECURSIVE pos(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM pos WHERE i < length(old.search_text))
      SELECT substr(old.search_text, i, 1) FROM pos
      UNION SELECT substr(old.search_text, i, 2) FROM pos WHERE i < length(old.search_text)
      UNION SELECT substr(old.search_text, i, 3) FROM pos WHERE i < length(old.search_text) - 1);
END;
-- Only when what it counts changed: an edit of the value or the close date writes no counter.
CREATE TRIGGER deal_grams_update AFTER UPDATE OF search_text, stage, assigned_to ON deals
  WHEN old.search_text IS NOT new.search_text OR old.stage IS NOT new.stage OR old.assigned_to IS NOT new.assigned_to BEGIN
  UPDATE deal_gram_counts SET n = n - 1
   WHERE tenant_id = old.tenant_id AND stage = old.stage AND assignee = coalesce(old.assigned_to, '') AND gram IN (
      WITH RECURSIVE pos(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM pos WHERE i < length(old.search_text))
      SELECT substr(old.search_text, i, 1) FROM pos
      UNION SELECT substr(old.search_text, i, 2) FROM pos WHERE i < length(old.search_text)
      UNION SELECT substr(old.search_text, i, 3) FROM pos WHERE i < length(old.search_text) - 1);
  INSERT INTO deal_gram_counts (tenant_id, gram, stage, assignee, n)
    SELECT new.tenant_id, gram, new.stage, coalesce(new.assigned_to, ''), 1 FROM (
      WITH RECURSIVE pos(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM pos WHERE i < length(new.search_text))
      SELECT substr(new.search_text, i, 1) AS gram FROM pos
      UNION SELECT substr(new.search_text, i, 2) FROM pos WHERE i < length(new.search_text)
      UNION SELECT substr(new.search_text, i, 3) FROM pos WHERE i < length(new.search_text) - 1)
    WHERE instr(gram, char(10)) = 0
    ON CONFLICT (tenant_id, gram, stage, assignee) DO UPDATE SET n = n + 1;
END;
