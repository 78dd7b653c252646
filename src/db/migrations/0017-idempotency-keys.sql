-- ---- version 17: Idempotency-Key on creates (issue 28 item 6) ----

-- A create sent with an Idempotency-Key header: per organization and user, kept 24 hours. `state`
-- is 'running' while the first request works (`claim` names it), 'created' once the record is
-- committed (in the create's own transaction, with `resource_id`), 'done' once its answer
-- (`status`, `answer`: the JSON body) is saved; a retry with the same `request_hash` (SHA-256 of
-- method, path and canonical body) gets that answer.
CREATE TABLE idempotency_keys (
  tenant_id    TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  user_id      TEXT NOT NULL,
  key          TEXT NOT NULL,
  request_hash TEXT NOT NULL,
  claim        TEXT NOT NULL,
  state        TEXT NOT NULL CHECK (state IN ('running', 'created', 'done')),
  resource_id  TEXT,
  status       INTEGER,
  answer       TEXT,
  created_at   INTEGER NOT NULL,
  expires_at   INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, user_id, key)
) STRICT, WITHOUT ROWID;
CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys (tenant_id, expires_at);
