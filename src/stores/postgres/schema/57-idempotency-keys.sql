-- Idempotency-Key on creates (schema version 7, issue 28 item 6). A create sent with the header,
-- per organization and user, kept 24 hours: 'running' while the first request works (`claim`
-- names it), 'created' once the record is committed (in the create's own transaction, with
-- `resource_id`), 'done' once its answer (`status`, `answer`: the JSON body) is saved. A retry with
-- the same `request_hash` (SHA-256 of method, path and canonical body) gets that answer. Tenant
-- data: the key and the expiry index start with tenant_id.
CREATE TABLE idempotency_keys (
  tenant_id    text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  user_id      text NOT NULL,
  key          text NOT NULL,
  request_hash text NOT NULL,
  claim        text NOT NULL,
  state        text NOT NULL CHECK (state IN ('running', 'created', 'done')),
  resource_id  text,
  status       integer,
  answer       text,
  created_at   bigint NOT NULL,
  expires_at   bigint NOT NULL,
  PRIMARY KEY (tenant_id, user_id, key)
);
CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys (tenant_id, expires_at);
