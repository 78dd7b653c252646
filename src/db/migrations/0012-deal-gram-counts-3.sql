-- ---- version 12: deal_gram_counts also counts 3-character pieces (issue 15) ----

-- A 3-letter search's exact total, with any stage and assignee filter, becomes a sum of a few rows
-- instead of a count over the trigram index's matches (every match read: 20-45 ms at 1M deals for
-- a common fragment), and tells the page how dense the matches are within the filters. The
-- triggers now write each distinct 1-, 2- and 3-character piece of a deal's text once.

-- Existing deals are counted anew after this file, in the same transaction, by recountDealGrams
-- (src/db/deal-grams.ts, the bulk seed's tally): one read of the deals and sorted upserts. A trigger
-- on a scratch table upserting each deal's pieces took 25 minutes and 18 GB of writes for 1.9M deals.

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
