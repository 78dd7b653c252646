-- ---- version 22: the organization's event log (issue 31) ----

-- One ordered log per organization: each change of its CRM and team writes its event in the
-- change's own transaction. `seq` orders the log (the API's event id is seq, zero-padded); the
-- organization's counter row hands it out, so numbers never go back even once old events are
-- swept. `data` is JSON and never holds a password, token, code or link. Swept after
-- SUITE_EVENTS_RETENTION (30 days) through events_by_time.
CREATE TABLE events (
  tenant_id  TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  seq        INTEGER NOT NULL,
  type       TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  actor_type TEXT NOT NULL CHECK (actor_type IN ('user', 'system')),
  actor_id   TEXT,
  data       TEXT NOT NULL,
  PRIMARY KEY (tenant_id, seq)
) STRICT, WITHOUT ROWID;
CREATE INDEX events_by_time ON events (tenant_id, created_at);
CREATE TABLE event_counters (
  tenant_id TEXT PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
  last_seq  INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
