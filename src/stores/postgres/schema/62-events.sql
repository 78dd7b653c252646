-- The organization's event log (schema version 12, issue 31): the same tables as SQLite's
-- migration 22. `seq` orders an organization's log; the counter row hands it out inside the
-- writing transaction and stays locked to its commit, so seq follows the order of commits.
-- `data` is JSON text (as SQLite's, so `suite copy-to-postgres` copies rows as they are).
CREATE TABLE events (
  tenant_id  text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  seq        bigint NOT NULL,
  type       text NOT NULL,
  created_at bigint NOT NULL,
  actor_type text NOT NULL CHECK (actor_type IN ('user', 'system')),
  actor_id   text,
  data       text NOT NULL,
  PRIMARY KEY (tenant_id, seq)
);
CREATE INDEX events_by_time ON events (tenant_id, created_at);
CREATE TABLE event_counters (
  tenant_id text PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
  last_seq  bigint NOT NULL
);
