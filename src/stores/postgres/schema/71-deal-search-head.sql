-- The deal list's narrow index without the whole search text (schema version 21). A B-tree entry
-- holds at most about 2,700 bytes, and deals_text_by_filters carried all of search_text (title,
-- notes of up to 10,000 characters, account and contact names) beside three sort keys: a deal
-- with long text that compresses poorly could not be stored ("index row requires 10056 bytes,
-- maximum size is 8191"), nor one with a title, account and contact at their maxima in 3-byte
-- characters. The index now carries search_head: the whole text when it is at most 600 bytes
-- (almost every deal), else its first 150 characters (at most 600 bytes). With the sort keys (at
-- most 3 bytes per UTF-16 unit the API allows: 600 + 600 + 603) and the ids, an entry stays under
-- 2,600 bytes. A short term is still collected from the index alone for those deals; the few
-- whose text is longer are read from deals_long_text_by_filters and tested on the whole text.
ALTER TABLE deals ADD COLUMN search_head text GENERATED ALWAYS AS (
  CASE WHEN octet_length(search_text) <= 600 THEN search_text ELSE left(search_text, 150) END) STORED;
-- A plain column from here on, kept by the trigger below: rows are also written whole
-- (`INSERT INTO deals SELECT * FROM json_populate_record(...)`), which a generated column refuses.
ALTER TABLE deals ALTER COLUMN search_head DROP EXPRESSION;

CREATE FUNCTION deal_search_head_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.search_head := CASE WHEN octet_length(NEW.search_text) <= 600 THEN NEW.search_text ELSE left(NEW.search_text, 150) END;
  RETURN NEW;
END
$$;
CREATE TRIGGER deal_search_head_keep BEFORE INSERT OR UPDATE OF search_text, search_head ON deals
  FOR EACH ROW EXECUTE FUNCTION deal_search_head_trigger();

DROP INDEX IF EXISTS deals_text_by_filters;
CREATE INDEX deals_text_by_filters ON deals (tenant_id, stage, assigned_to) INCLUDE (search_head, id, title_key, account_key, contact_key);
-- The deals whose text is longer than their head, within the same filters.
CREATE INDEX deals_long_text_by_filters ON deals (tenant_id, stage, assigned_to) INCLUDE (id) WHERE octet_length(search_text) > 600;
