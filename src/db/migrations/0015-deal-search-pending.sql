-- ---- version 15: the search counters follow deal writes through a pending table (issues 27, 28) ----

-- A deal write no longer updates deal_gram_counts and deal_key_grams itself (about 250 counter rows
-- spread over two large tables: 0.6-1.9 MB of pages and 2-8 ms of CPU a write at 1M deals). Its
-- triggers append one row here per deal state that leaves (-1) or enters (+1) the counters: the
-- deal's stage, assignee, search text and text sort keys. A background step (src/db/search-fold.ts)
-- folds the oldest rows of an organization into both counter tables and deletes them in one short
-- transaction; readers add the rows still pending to what the counters say, so totals stay exact
-- at every moment, and a killed process leaves either the rows or their fold, never half.
CREATE TABLE deal_search_pending (
  tenant_id    TEXT NOT NULL,
  id           INTEGER NOT NULL,
  sign         INTEGER NOT NULL,
  stage        TEXT NOT NULL,
  assigned_to  TEXT,
  search_text  TEXT NOT NULL,
  title_key    TEXT NOT NULL,
  account_key  TEXT NOT NULL,
  contact_key  TEXT,
  PRIMARY KEY (tenant_id, id)
) STRICT, WITHOUT ROWID;

DROP TRIGGER deal_grams_insert;
DROP TRIGGER deal_grams_delete;
DROP TRIGGER deal_grams_update;
DROP TRIGGER deal_key_grams_insert;
DROP TRIGGER deal_key_grams_delete;
DROP TRIGGER deal_key_grams_update;

CREATE TRIGGER deal_search_pending_insert AFTER INSERT ON deals BEGIN
  INSERT INTO deal_search_pending (tenant_id, id, sign, stage, assigned_to, search_text, title_key, account_key, contact_key)
    VALUES (new.tenant_id, (SELECT coalesce(max(id), 0) + 1 FROM deal_search_pending WHERE tenant_id = new.tenant_id), 1,
      new.stage, new.assigned_to, new.search_text, new.title_key, new.account_key, new.contact_key);
END;
CREATE TRIGGER deal_search_pending_delete AFTER DELETE ON deals BEGIN
  INSERT INTO deal_search_pending (tenant_id, id, sign, stage, assigned_to, search_text, title_key, account_key, contact_key)
    VALUES (old.tenant_id, (SELECT coalesce(max(id), 0) + 1 FROM deal_search_pending WHERE tenant_id = old.tenant_id), -1,
      old.stage, old.assigned_to, old.search_text, old.title_key, old.account_key, old.contact_key);
END;
-- Only when what the counters count changed: an edit of the value or the close date writes nothing here.
CREATE TRIGGER deal_search_pending_update AFTER UPDATE OF search_text, stage, assigned_to, title_key, account_key, contact_key ON deals
  WHEN old.search_text IS NOT new.search_text OR old.stage IS NOT new.stage OR old.assigned_to IS NOT new.assigned_to
    OR old.title_key IS NOT new.title_key OR old.account_key IS NOT new.account_key OR old.contact_key IS NOT new.contact_key BEGIN
  INSERT INTO deal_search_pending (tenant_id, id, sign, stage, assigned_to, search_text, title_key, account_key, contact_key)
    VALUES (old.tenant_id, (SELECT coalesce(max(id), 0) + 1 FROM deal_search_pending WHERE tenant_id = old.tenant_id), -1,
      old.stage, old.assigned_to, old.search_text, old.title_key, old.account_key, old.contact_key);
  INSERT INTO deal_search_pending (tenant_id, id, sign, stage, assigned_to, search_text, title_key, account_key, contact_key)
    VALUES (new.tenant_id, (SELECT coalesce(max(id), 0) + 1 FROM deal_search_pending WHERE tenant_id = new.tenant_id), 1,
      new.stage, new.assigned_to, new.search_text, new.title_key, new.account_key, new.contact_key);
END;
