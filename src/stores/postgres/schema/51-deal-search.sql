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

-- One statement per change, its rows in key order: two transactions moving deals between the same
-- counters take their row locks in the same order, so they wait for each other instead of
-- deadlocking (a transaction changing several deals still takes them statement by statement).
CREATE FUNCTION deal_counts_apply(t text, deltas text[], stages text[], ns bigint[]) RETURNS void
LANGUAGE sql AS $$
  INSERT INTO deal_counts AS c (tenant_id, assignee, stage, n)
  SELECT t, a, s, sum(n)::bigint FROM unnest(deltas, stages, ns) AS d(a, s, n) GROUP BY a, s ORDER BY a, s
  ON CONFLICT (tenant_id, assignee, stage) DO UPDATE SET n = c.n + excluded.n
$$;

CREATE FUNCTION deal_counts_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM deal_counts_apply(NEW.tenant_id, ARRAY[coalesce(NEW.assigned_to, ''), '*'], ARRAY[NEW.stage, NEW.stage], ARRAY[1, 1]::bigint[]);
  ELSIF TG_OP = 'DELETE' THEN
    PERFORM deal_counts_apply(OLD.tenant_id, ARRAY[coalesce(OLD.assigned_to, ''), '*'], ARRAY[OLD.stage, OLD.stage], ARRAY[-1, -1]::bigint[]);
  ELSIF NEW.stage IS DISTINCT FROM OLD.stage OR NEW.assigned_to IS DISTINCT FROM OLD.assigned_to THEN
    PERFORM deal_counts_apply(OLD.tenant_id,
      ARRAY[coalesce(OLD.assigned_to, ''), '*', coalesce(NEW.assigned_to, ''), '*'],
      ARRAY[OLD.stage, OLD.stage, NEW.stage, NEW.stage], ARRAY[-1, -1, 1, 1]::bigint[]);
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER deal_counts_change AFTER INSERT OR DELETE OR UPDATE OF stage, assigned_to ON deals
  FOR EACH ROW EXECUTE FUNCTION deal_counts_trigger();
