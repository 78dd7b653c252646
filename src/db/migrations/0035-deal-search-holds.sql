
-- ---- version 35: a process seeding an organization's deals beside the server holds the search counters' fold off it (issue 27) ----

-- `suite seed` beside a running server writes the organization's deals from another process; each
-- appends a pending counter row, and the server's fold swept them as they came, its steps reading
-- pages the seed's commits had just made cold (event-loop turns of 67-145 ms). While a row here is
-- current (until, ms since the epoch, renewed by the seed as it goes) the fold leaves that
-- organization's rows for one sweep after the seed, as it does for an organization's running job,
-- and the other organizations' few rows wait too (their steps read the same stale pages); a seed
-- that is killed stops renewing, and its hold runs out.
CREATE TABLE deal_search_holds (
  tenant_id TEXT PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
  until     INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
