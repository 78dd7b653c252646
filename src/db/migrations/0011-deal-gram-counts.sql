-- ---- version 11: how many deals hold each 1- and 2-character piece of their search text (issue 15) ----

-- Per organization, stage and assignee ('' for nobody), how many deals' search text contains each
-- one- and two-character string (`gram`; none spanning the newline between title, notes, account
-- and contact: a search term cannot hold a control character). A 1-2 letter search's exact total
-- is then a sum of a few rows instead of a read of the organization's text (about 150 ms at 1M
-- deals), and says whether its matches are dense enough to find by walking the page's order.
-- Kept by the triggers below in the writing transaction; rows that fall to 0 stay (a sum ignores them).
CREATE TABLE deal_gram_counts (
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  gram      TEXT NOT NULL,
  stage     TEXT NOT NULL,
  assignee  TEXT NOT NULL,
  n         INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, gram, stage, assignee)
) STRICT, WITHOUT ROWID;

-- Existing deals are counted one at a time (a trigger on a scratch table, the live trigger's own
-- statement), never as one grouping of every deal's grams (hundreds of millions of rows to sort).
CREATE TEMP TABLE deal_grams_backfill (seq INTEGER NOT NULL);
CREATE TEMP TRIGGER deal_grams_backfill_one AFTER INSERT ON deal_grams_backfill BEGIN
  INSERT INTO deal_gram_counts (tenant_id, gram, stage, assignee, n)
    SELECT d.tenant_id, g.gram, d.stage, coalesce(d.assigned_to, ''), 1 FROM deals d, (
      WITH RECURSIVE pos(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM pos WHERE i < (SELECT length(search_text) FROM deals WHERE seq = new.seq))
      SELECT substr(t.search_text, i, 1) AS gram FROM pos, (SELECT search_text FROM deals WHERE seq = new.seq) t
      UNION SELECT substr(t.search_text, i, 2) FROM pos, (SELECT search_text FROM deals WHERE seq = new.seq) t WHERE i < length(t.search_text)) g
    WHERE d.seq = new.seq AND instr(g.gram, char(10)) = 0
    ON CONFLICT (tenant_id, gram, stage, assignee) DO UPDATE SET n = n + 1;
END;
INSERT INTO deal_grams_backfill (seq) SELECT seq FROM deals;
DROP TRIGGER deal_grams_backfill_one;
DROP TABLE deal_grams_backfill;

CREATE TRIGGER deal_grams_insert AFTER INSERT ON deals BEGIN
  INSERT INTO deal_gram_counts (tenant_id, gram, stage, assignee, n)
    SELECT new.tenant_id, gram, new.stage, coalesce(new.assigned_to, ''), 1 FROM (
      WITH RECURSIVE pos(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM pos WHERE i < length(new.search_text))
      SELECT substr(new.search_text, i, 1) AS gram FROM pos UNION SELECT substr(new.search_text, i, 2) FROM pos WHERE i < length(new.search_text))
    WHERE instr(gram, char(10)) = 0
    ON CONFLICT (tenant_id, gram, stage, assignee) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER deal_grams_delete AFTER DELETE ON deals BEGIN
  UPDATE deal_gram_counts SET n = n - 1
   WHERE tenant_id = old.tenant_id AND stage = old.stage AND assignee = coalesce(old.assigned_to, '') AND gram IN (
      WITH RECURSIVE pos(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM pos WHERE i < length(old.search_text))
      SELECT substr(old.search_text, i, 1) FROM pos UNION SELECT substr(old.search_text, i, 2) FROM pos WHERE i < length(old.search_text));
END;
-- Only when what it counts changed: an edit of the value or the close date writes no counter.
CREATE TRIGGER deal_grams_update AFTER UPDATE OF search_text, stage, assigned_to ON deals
  WHEN old.search_text IS NOT new.search_text OR old.stage IS NOT new.stage OR old.assigned_to IS NOT new.assigned_to BEGIN
  UPDATE deal_gram_counts SET n = n - 1
   WHERE tenant_id = old.tenant_id AND stage = old.stage AND assignee = coalesce(old.assigned_to, '') AND gram IN (
      WITH RECURSIVE pos(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM pos WHERE i < length(old.search_text))
      SELECT substr(old.search_text, i, 1) FROM pos UNION SELECT substr(old.search_text, i, 2) FROM pos WHERE i < length(old.search_text));
  INSERT INTO deal_gram_counts (tenant_id, gram, stage, assignee, n)
    SELECT new.tenant_id, gram, new.stage, coalesce(new.assigned_to, ''), 1 FROM (
      WITH RECURSIVE pos(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM pos WHERE i < length(new.search_text))
      SELECT substr(new.search_text, i, 1) AS gram FROM pos UNION SELECT substr(new.search_text, i, 2) FROM pos WHERE i < length(new.search_text))
    WHERE instr(gram, char(10)) = 0
    ON CONFLICT (tenant_id, gram, stage, assignee) DO UPDATE SET n = n + 1;
END;
