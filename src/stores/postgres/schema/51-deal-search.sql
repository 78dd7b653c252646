-- The deal list: substring search and exact counts (SQLite: deals_fts, deals_text_by_seq and
-- deal_counts in schema.sql).

CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- Stage keys sort byte by byte, as on SQLite ("a-b" before "a_b" before "ab"), whatever the
-- database's locale.
ALTER TABLE deals ALTER COLUMN stage TYPE text COLLATE "C";

-- Substring search of three or more characters: a trigram index over the lower-cased text (the
-- term is lower-cased the same way, in JS, and every match is rechecked with strpos).
CREATE INDEX deals_search_trgm ON deals USING gin (search_text gin_trgm_ops);

-- One- and two-letter searches (no trigram to look up) read the tenant's rows in seq order from
-- this narrow index alone (an index-only scan, no row visited), as SQLite's deals_text_by_seq.
CREATE INDEX deals_text_by_seq ON deals (tenant_id, seq) INCLUDE (stage, assigned_to, search_text);

-- The default order with the filters in it: a filtered deep page is read from the index alone.
CREATE INDEX deals_by_created_filters ON deals (tenant_id, created_at, id) INCLUDE (stage, assigned_to);

-- Deal counts by tenant, assignee ('' = unassigned) and stage, plus one row per stage with
-- assignee '*' for all assignees together: the unfiltered, stage and assignee totals of the deal
-- list are sums of a few rows, never a count over a tenant's deals. Kept by triggers in the
-- writing transaction, so no write path can forget them.
CREATE TABLE deal_counts (
  tenant_id text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  assignee  text COLLATE "C" NOT NULL,
  stage     text COLLATE "C" NOT NULL,
  n         bigint NOT NULL,
  PRIMARY KEY (tenant_id, assignee, stage)
);

-- Deadlocks: a transaction that changes several deals updates counter rows statement after
-- statement, so two such transactions could lock the same counters in opposite orders. Each deal
-- write therefore first takes its tenant's counter lock (a transaction-level advisory lock, held to
-- commit): a tenant's deal writes queue on the counters, as they do on SQLite's one writer, and
-- other tenants' writes go on. Within a statement, rows go in key order all the same.
CREATE FUNCTION deal_counters_lock(t text) RETURNS void LANGUAGE sql AS $$
  SELECT pg_advisory_xact_lock(hashtextextended('deal_counters/' || t, 0))
$$;

CREATE FUNCTION deal_counts_apply(t text, deltas text[], stages text[], ns bigint[]) RETURNS void
LANGUAGE sql AS $$
  INSERT INTO deal_counts AS c (tenant_id, assignee, stage, n)
  SELECT t, a, s, sum(n)::bigint FROM unnest(deltas, stages, ns) AS d(a, s, n) GROUP BY a, s ORDER BY a, s
  ON CONFLICT (tenant_id, assignee, stage) DO UPDATE SET n = c.n + excluded.n
$$;

CREATE FUNCTION deal_counts_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND NEW.stage IS NOT DISTINCT FROM OLD.stage AND NEW.assigned_to IS NOT DISTINCT FROM OLD.assigned_to THEN
    RETURN NULL;
  END IF;
  -- A deal deleted with its organization (ON DELETE CASCADE): its counters go too, and a new
  -- counter row would point at the deleted organization.
  IF TG_OP = 'DELETE' AND NOT EXISTS (SELECT 1 FROM tenants WHERE id = OLD.tenant_id) THEN
    RETURN NULL;
  END IF;
  PERFORM deal_counters_lock(coalesce(NEW.tenant_id, OLD.tenant_id));
  IF TG_OP = 'INSERT' THEN
    PERFORM deal_counts_apply(NEW.tenant_id, ARRAY[coalesce(NEW.assigned_to, ''), '*'], ARRAY[NEW.stage, NEW.stage], ARRAY[1, 1]::bigint[]);
  ELSIF TG_OP = 'DELETE' THEN
    PERFORM deal_counts_apply(OLD.tenant_id, ARRAY[coalesce(OLD.assigned_to, ''), '*'], ARRAY[OLD.stage, OLD.stage], ARRAY[-1, -1]::bigint[]);
  ELSE
    PERFORM deal_counts_apply(OLD.tenant_id,
      ARRAY[coalesce(OLD.assigned_to, ''), '*', coalesce(NEW.assigned_to, ''), '*'],
      ARRAY[OLD.stage, OLD.stage, NEW.stage, NEW.stage], ARRAY[-1, -1, 1, 1]::bigint[]);
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER deal_counts_change AFTER INSERT OR DELETE OR UPDATE OF stage, assigned_to ON deals
  FOR EACH ROW EXECUTE FUNCTION deal_counts_trigger();

-- Search totals without a scan: how many of a tenant's deals, by stage and assignee ('' =
-- unassigned), contain each one-, two- and three-character substring (gram) of their search text.
-- A term of one to three characters is exactly one gram, so its total, with any stage and
-- assignee filter, is a sum of a few of these rows (a common letter would otherwise be counted by
-- reading every deal's text: 300+ ms at 1M deals). Longer terms are counted with the trigram index.
-- Kept by a trigger in the writing transaction (about 120 rows per deal write); rebuilt in bulk
-- by the seed and after `suite copy-to-postgres` (seed.ts, rebuildDealCounters).
CREATE TABLE deal_gram_counts (
  tenant_id text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  gram      text COLLATE "C" NOT NULL,
  stage     text COLLATE "C" NOT NULL,
  assignee  text COLLATE "C" NOT NULL,
  n         bigint NOT NULL,
  PRIMARY KEY (tenant_id, gram, stage, assignee)
);

-- The 1-, 2- and 3-character substrings of a text, with repeats (callers take DISTINCT).
-- Characters are code points, as JS's [...text] (seed.ts computes the same grams).
CREATE FUNCTION deal_grams(t text) RETURNS text[] LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
  c text[] := coalesce(string_to_array(t, NULL), '{}');
  n integer := cardinality(c);
  out text[] := c;
BEGIN
  FOR i IN 1 .. n - 1 LOOP out := out || (c[i] || c[i + 1]); END LOOP;
  FOR i IN 1 .. n - 2 LOOP out := out || (c[i] || c[i + 1] || c[i + 2]); END LOOP;
  RETURN out;
END
$$;

CREATE FUNCTION deal_gram_counts_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND NEW.search_text = OLD.search_text AND NEW.stage = OLD.stage
     AND NEW.assigned_to IS NOT DISTINCT FROM OLD.assigned_to THEN
    RETURN NULL;
  END IF;
  IF TG_OP = 'DELETE' AND NOT EXISTS (SELECT 1 FROM tenants WHERE id = OLD.tenant_id) THEN
    RETURN NULL;
  END IF;
  PERFORM deal_counters_lock(coalesce(NEW.tenant_id, OLD.tenant_id));
  -- One statement, its rows in key order.
  INSERT INTO deal_gram_counts AS c (tenant_id, gram, stage, assignee, n)
  SELECT t, g, s, a, sum(d)::bigint FROM (
      SELECT DISTINCT OLD.tenant_id AS t, g, OLD.stage AS s, coalesce(OLD.assigned_to, '') AS a, -1 AS d
        FROM unnest(deal_grams(OLD.search_text)) g WHERE TG_OP <> 'INSERT'
      UNION ALL
      SELECT DISTINCT NEW.tenant_id, g, NEW.stage, coalesce(NEW.assigned_to, ''), 1
        FROM unnest(deal_grams(NEW.search_text)) g WHERE TG_OP <> 'DELETE'
    ) x
  GROUP BY t, g, s, a HAVING sum(d) <> 0 ORDER BY t, g, s, a
  ON CONFLICT (tenant_id, gram, stage, assignee) DO UPDATE SET n = c.n + excluded.n;
  RETURN NULL;
END
$$;

CREATE TRIGGER deal_gram_counts_change AFTER INSERT OR DELETE OR UPDATE OF search_text, stage, assigned_to ON deals
  FOR EACH ROW EXECUTE FUNCTION deal_gram_counts_trigger();
