-- The deal board's sums (issue 32): deal counts and value sums by tenant, assignee ('' =
-- unassigned), stage and currency, so that the board's column heads without a search
-- (GET /crm/deals/summary) add up a few hundred rows instead of every deal. Kept as deal_counts is
-- (51-deal-search.sql): a trigger under the tenant's counter lock, skipped by an import batch that
-- adds its changes up once (suite.counters_by_batch, src/stores/postgres/jobs.ts), rebuilt after a
-- bulk seed or a copy (deal-counters.ts).
CREATE TABLE deal_sums (
  tenant_id text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  assignee  text COLLATE "C" NOT NULL,
  stage     text COLLATE "C" NOT NULL,
  currency  text COLLATE "C" NOT NULL,
  n         bigint NOT NULL,
  cents     bigint NOT NULL,
  PRIMARY KEY (tenant_id, assignee, stage, currency)
);

-- Rows in key order within a statement (deadlocks: see deal_counters_lock).
CREATE FUNCTION deal_sums_apply(t text, assignees text[], stages text[], currencies text[], ns bigint[], cents bigint[]) RETURNS void
LANGUAGE sql AS $$
  INSERT INTO deal_sums AS c (tenant_id, assignee, stage, currency, n, cents)
  SELECT t, a, s, cur, sum(n)::bigint, sum(v)::bigint FROM unnest(assignees, stages, currencies, ns, cents) AS d(a, s, cur, n, v)
  GROUP BY a, s, cur ORDER BY a, s, cur
  ON CONFLICT (tenant_id, assignee, stage, currency) DO UPDATE SET n = c.n + excluded.n, cents = c.cents + excluded.cents
$$;

CREATE FUNCTION deal_sums_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND NEW.stage IS NOT DISTINCT FROM OLD.stage AND NEW.assigned_to IS NOT DISTINCT FROM OLD.assigned_to
     AND NEW.value_cents IS NOT DISTINCT FROM OLD.value_cents AND NEW.currency IS NOT DISTINCT FROM OLD.currency THEN
    RETURN NULL;
  END IF;
  -- A deal deleted with its organization (ON DELETE CASCADE): its sums go too.
  IF TG_OP = 'DELETE' AND NOT EXISTS (SELECT 1 FROM tenants WHERE id = OLD.tenant_id) THEN
    RETURN NULL;
  END IF;
  PERFORM deal_counters_lock(coalesce(NEW.tenant_id, OLD.tenant_id));
  IF TG_OP = 'INSERT' THEN
    PERFORM deal_sums_apply(NEW.tenant_id, ARRAY[coalesce(NEW.assigned_to, '')], ARRAY[NEW.stage], ARRAY[NEW.currency], ARRAY[1]::bigint[], ARRAY[NEW.value_cents]::bigint[]);
  ELSIF TG_OP = 'DELETE' THEN
    PERFORM deal_sums_apply(OLD.tenant_id, ARRAY[coalesce(OLD.assigned_to, '')], ARRAY[OLD.stage], ARRAY[OLD.currency], ARRAY[-1]::bigint[], ARRAY[-OLD.value_cents]::bigint[]);
  ELSE
    PERFORM deal_sums_apply(OLD.tenant_id,
      ARRAY[coalesce(OLD.assigned_to, ''), coalesce(NEW.assigned_to, '')], ARRAY[OLD.stage, NEW.stage], ARRAY[OLD.currency, NEW.currency],
      ARRAY[-1, 1]::bigint[], ARRAY[-OLD.value_cents, NEW.value_cents]::bigint[]);
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER deal_sums_change AFTER INSERT OR DELETE OR UPDATE OF stage, assigned_to, value_cents, currency ON deals
  FOR EACH ROW WHEN (current_setting('suite.counters_by_batch', true) IS DISTINCT FROM 'on')
  EXECUTE FUNCTION deal_sums_trigger();

-- The deals already there.
INSERT INTO deal_sums (tenant_id, assignee, stage, currency, n, cents)
  SELECT tenant_id, coalesce(assigned_to, ''), stage, currency, count(*), sum(value_cents) FROM deals GROUP BY tenant_id, coalesce(assigned_to, ''), stage, currency;
