-- ---- version 26: the deal board's sums (issue 32) ----

-- Deal counts and value sums by tenant, assignee ('' = unassigned), stage and currency, so that
-- the board's column heads without a search (GET /crm/deals/summary) add up a few hundred rows
-- instead of every deal. Kept by triggers, as deal_counts is: no write path can forget them.
CREATE TABLE deal_sums (
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  assignee  TEXT NOT NULL,
  stage     TEXT NOT NULL,
  currency  TEXT NOT NULL,
  n         INTEGER NOT NULL,
  cents     INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, assignee, stage, currency)
) STRICT, WITHOUT ROWID;

CREATE TRIGGER deal_sums_insert AFTER INSERT ON deals BEGIN
  INSERT INTO deal_sums (tenant_id, assignee, stage, currency, n, cents) VALUES (new.tenant_id, coalesce(new.assigned_to, ''), new.stage, new.currency, 1, new.value_cents)
    ON CONFLICT (tenant_id, assignee, stage, currency) DO UPDATE SET n = n + 1, cents = cents + excluded.cents;
END;
CREATE TRIGGER deal_sums_delete AFTER DELETE ON deals BEGIN
  UPDATE deal_sums SET n = n - 1, cents = cents - old.value_cents
   WHERE tenant_id = old.tenant_id AND assignee = coalesce(old.assigned_to, '') AND stage = old.stage AND currency = old.currency;
END;
CREATE TRIGGER deal_sums_update AFTER UPDATE OF stage, assigned_to, value_cents, currency ON deals BEGIN
  UPDATE deal_sums SET n = n - 1, cents = cents - old.value_cents
   WHERE tenant_id = old.tenant_id AND assignee = coalesce(old.assigned_to, '') AND stage = old.stage AND currency = old.currency;
  INSERT INTO deal_sums (tenant_id, assignee, stage, currency, n, cents) VALUES (new.tenant_id, coalesce(new.assigned_to, ''), new.stage, new.currency, 1, new.value_cents)
    ON CONFLICT (tenant_id, assignee, stage, currency) DO UPDATE SET n = n + 1, cents = cents + excluded.cents;
END;

-- The deals already there.
INSERT INTO deal_sums (tenant_id, assignee, stage, currency, n, cents)
  SELECT tenant_id, coalesce(assigned_to, ''), stage, currency, count(*), sum(value_cents) FROM deals GROUP BY tenant_id, coalesce(assigned_to, ''), stage, currency;
