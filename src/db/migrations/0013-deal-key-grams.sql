-- ---- version 13: where along each text order a 3-character piece occurs (issue 15) ----

-- A common 3-letter term can cluster along a text order ("ser" only in "Managed services" titles,
-- 56 % of the way down title order): a walk of the order's index from its start crosses hundreds
-- of thousands of entries before the first match, and sorting looks up every match (125k seeks,
-- 80-130 ms at 1M deals). deal_key_grams counts, for each text sort (t: title_key, a: account_key,
-- c: contact_key) and each bucket of it (the key's first 6 characters), how many deals hold each
-- distinct 3-character piece of their search text, and under gram '' how many deals the bucket
-- holds. The search walks only the buckets where its term occurs (n > 0), in order. Deals without
-- a contact (contact_key NULL) are not counted under 'c'.

-- Existing deals are counted after this file, in the same transaction, by recountDealKeyGrams
-- (src/db/deal-key-grams.ts): one read of the deals and sorted inserts.

CREATE TABLE deal_key_grams (
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  ord       TEXT NOT NULL,
  gram      TEXT NOT NULL,
  bucket    TEXT NOT NULL,
  n         INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, ord, gram, bucket)
) STRICT, WITHOUT ROWID;

CREATE TRIGGER deal_key_grams_insert AFTER INSERT ON deals BEGIN
  INSERT INTO deal_key_grams (tenant_id, ord, gram, bucket, n)
    SELECT new.tenant_id, k.ord, g.gram, k.bucket, 1 FROM (
      SELECT 't' AS ord, substr(new.title_key, 1, 6) AS bucket
      UNION ALL SELECT 'a', substr(new.account_key, 1, 6)
      UNION ALL SELECT 'c', substr(new.contact_key, 1, 6)) k, (
      WITH RECURSIVE pos(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM pos WHERE i < length(new.search_text) - 2)
      SELECT '' AS gram UNION SELECT substr(new.search_text, i, 3) FROM pos) g
    WHERE k.bucket IS NOT NULL AND (g.gram = '' OR (length(g.gram) = 3 AND instr(g.gram, char(10)) = 0))
    ON CONFLICT (tenant_id, ord, gram, bucket) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER deal_key_grams_delete AFTER DELETE ON deals BEGIN
  -- One statement a sort: with the three ORed, SQLite reads every row of the tenant.
  UPDATE deal_key_grams SET n = n - 1
   WHERE tenant_id = old.tenant_id AND ord = 't' AND bucket = substr(old.title_key, 1, 6) AND gram IN (
      WITH RECURSIVE pos(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM pos WHERE i < length(old.search_text) - 2)
      SELECT '' UNION SELECT substr(old.search_text, i, 3) FROM pos);
  UPDATE deal_key_grams SET n = n - 1
   WHERE tenant_id = old.tenant_id AND ord = 'a' AND bucket = substr(old.account_key, 1, 6) AND gram IN (
      WITH RECURSIVE pos(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM pos WHERE i < length(old.search_text) - 2)
      SELECT '' UNION SELECT substr(old.search_text, i, 3) FROM pos);
  UPDATE deal_key_grams SET n = n - 1
   WHERE tenant_id = old.tenant_id AND ord = 'c' AND bucket = substr(old.contact_key, 1, 6) AND gram IN (
      WITH RECURSIVE pos(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM pos WHERE i < length(old.search_text) - 2)
      SELECT '' UNION SELECT substr(old.search_text, i, 3) FROM pos);
END;
-- Only when what it counts changed: an edit of the stage, the assignee or the value writes none.
CREATE TRIGGER deal_key_grams_update AFTER UPDATE OF search_text, title_key, account_key, contact_key ON deals
  WHEN old.search_text IS NOT new.search_text OR old.title_key IS NOT new.title_key OR old.account_key IS NOT new.account_key OR old.contact_key IS NOT new.contact_key BEGIN
  -- One statement a sort: with the three ORed, SQLite reads every row of the tenant.
  UPDATE deal_key_grams SET n = n - 1
   WHERE tenant_id = old.tenant_id AND ord = 't' AND bucket = substr(old.title_key, 1, 6) AND gram IN (
      WITH RECURSIVE pos(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM pos WHERE i < length(old.search_text) - 2)
      SELECT '' UNION SELECT substr(old.search_text, i, 3) FROM pos);
  UPDATE deal_key_grams SET n = n - 1
   WHERE tenant_id = old.tenant_id AND ord = 'a' AND bucket = substr(old.account_key, 1, 6) AND gram IN (
      WITH RECURSIVE pos(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM pos WHERE i < length(old.search_text) - 2)
      SELECT '' UNION SELECT substr(old.search_text, i, 3) FROM pos);
  UPDATE deal_key_grams SET n = n - 1
   WHERE tenant_id = old.tenant_id AND ord = 'c' AND bucket = substr(old.contact_key, 1, 6) AND gram IN (
      WITH RECURSIVE pos(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM pos WHERE i < length(old.search_text) - 2)
      SELECT '' UNION SELECT substr(old.search_text, i, 3) FROM pos);
  INSERT INTO deal_key_grams (tenant_id, ord, gram, bucket, n)
    SELECT new.tenant_id, k.ord, g.gram, k.bucket, 1 FROM (
      SELECT 't' AS ord, substr(new.title_key, 1, 6) AS bucket
      UNION ALL SELECT 'a', substr(new.account_key, 1, 6)
      UNION ALL SELECT 'c', substr(new.contact_key, 1, 6)) k, (
      WITH RECURSIVE pos(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM pos WHERE i < length(new.search_text) - 2)
      SELECT '' AS gram UNION SELECT substr(new.search_text, i, 3) FROM pos) g
    WHERE k.bucket IS NOT NULL AND (g.gram = '' OR (length(g.gram) = 3 AND instr(g.gram, char(10)) = 0))
    ON CONFLICT (tenant_id, ord, gram, bucket) DO UPDATE SET n = n + 1;
END;

-- Each order's index also holds the stage and the assignee (as deals_by_created always did): a
-- search walking an order tests the list's filters on the index entry and reads the row (for its
-- search text) only for entries within them. "ati" within one stage among the unassigned, 9,000
-- entries of title order walked: 40-74 ms reading every row, 7-10 ms so.
DROP INDEX deals_by_updated;
CREATE INDEX deals_by_updated ON deals (tenant_id, updated_at, id, stage, assigned_to);
DROP INDEX deals_by_title;
CREATE INDEX deals_by_title ON deals (tenant_id, title_key, id, stage, assigned_to);
DROP INDEX deals_by_value;
CREATE INDEX deals_by_value ON deals (tenant_id, value_cents, id, stage, assigned_to);
DROP INDEX deals_by_stage;
CREATE INDEX deals_by_stage ON deals (tenant_id, stage, id, stage, assigned_to);
DROP INDEX deals_by_account;
CREATE INDEX deals_by_account ON deals (tenant_id, account_key, id, stage, assigned_to);
DROP INDEX deals_by_close_asc;
CREATE INDEX deals_by_close_asc ON deals (tenant_id, close_date IS NULL, close_date, id, stage, assigned_to);
DROP INDEX deals_by_close_desc;
CREATE INDEX deals_by_close_desc ON deals (tenant_id, close_date IS NULL, close_date DESC, id DESC, stage, assigned_to);
DROP INDEX deals_by_probability_asc;
CREATE INDEX deals_by_probability_asc ON deals (tenant_id, probability IS NULL, probability, id, stage, assigned_to);
DROP INDEX deals_by_probability_desc;
CREATE INDEX deals_by_probability_desc ON deals (tenant_id, probability IS NULL, probability DESC, id DESC, stage, assigned_to);
DROP INDEX deals_by_contact_asc;
CREATE INDEX deals_by_contact_asc ON deals (tenant_id, contact_key IS NULL, contact_key, id, stage, assigned_to);
DROP INDEX deals_by_contact_desc;
CREATE INDEX deals_by_contact_desc ON deals (tenant_id, contact_key IS NULL, contact_key DESC, id DESC, stage, assigned_to);
DROP INDEX deals_by_assignee_asc;
CREATE INDEX deals_by_assignee_asc ON deals (tenant_id, assignee_key IS NULL, assignee_key, id, stage, assigned_to);
DROP INDEX deals_by_assignee_desc;
CREATE INDEX deals_by_assignee_desc ON deals (tenant_id, assignee_key IS NULL, assignee_key DESC, id DESC, stage, assigned_to);
