-- ---- version 28: signed webhooks and their deliveries (issue 31) ----

-- An organization's webhook endpoint: where its events are POSTed, signed by the Standard
-- Webhooks scheme. `events` is JSON: event types, or ["*"] for every one. The secret is sealed
-- (AES-GCM under the server key, bound to the endpoint's id); after a rotation the previous one
-- keeps signing alongside until `previous_secret_until`. `disabled_reason`: why the server
-- disabled it (gone: the receiver answered 410; failing: three days without a 2xx).
CREATE TABLE webhook_endpoints (
  tenant_id              TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  id                     TEXT NOT NULL,
  url                    TEXT NOT NULL,
  description            TEXT,
  events                 TEXT NOT NULL,
  enabled                INTEGER NOT NULL,
  disabled_reason        TEXT,
  secret_sealed          TEXT NOT NULL,
  previous_secret_sealed TEXT,
  previous_secret_until  INTEGER,
  created_at             INTEGER NOT NULL,
  updated_at             INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, id)
) STRICT, WITHOUT ROWID;

-- One delivery per (event, endpoint), written in the event's transaction; a test event carries
-- its body in `payload` (it is not in the log). A pending delivery is due at `next_attempt_at`;
-- a sender leases it by moving that time past its timeout (a crashed sender's lease runs out and
-- the delivery is due again). `window_start`: retries go on for three days from it (a manual
-- retry starts a new window). `last_error`: a fixed reason, never the receiver's text.
CREATE TABLE webhook_deliveries (
  tenant_id        TEXT NOT NULL,
  id               TEXT NOT NULL,
  endpoint_id      TEXT NOT NULL,
  event_seq        INTEGER,
  event_type       TEXT NOT NULL,
  payload          TEXT,
  status           TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts         INTEGER NOT NULL,
  next_attempt_at  INTEGER NOT NULL,
  window_start     INTEGER NOT NULL,
  last_status      INTEGER,
  last_duration_ms INTEGER,
  last_error       TEXT,
  created_at       INTEGER NOT NULL,
  updated_at       INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, endpoint_id) REFERENCES webhook_endpoints (tenant_id, id) ON DELETE CASCADE
) STRICT, WITHOUT ROWID;
CREATE INDEX webhook_deliveries_by_endpoint ON webhook_deliveries (tenant_id, endpoint_id, created_at);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (tenant_id, next_attempt_at) WHERE status = 'pending';
