-- Signed webhooks and their deliveries (schema version 17, issue 31): the same tables as SQLite's
-- migration 28. `events` is JSON text (["*"] or event types); the event's append statement
-- (events.ts) writes a delivery for each enabled endpoint that asks for the event's type.
CREATE TABLE webhook_endpoints (
  tenant_id              text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  id                     text COLLATE "C" NOT NULL,
  url                    text NOT NULL,
  description            text,
  events                 text NOT NULL,
  enabled                integer NOT NULL,
  disabled_reason        text,
  secret_sealed          text NOT NULL,
  previous_secret_sealed text,
  previous_secret_until  bigint,
  created_at             bigint NOT NULL,
  updated_at             bigint NOT NULL,
  PRIMARY KEY (tenant_id, id)
);

-- A pending delivery is due at next_attempt_at; a sender leases it (FOR UPDATE SKIP LOCKED) by
-- moving that time past its timeout, so no two instances send it at once.
CREATE TABLE webhook_deliveries (
  tenant_id        text NOT NULL,
  id               text COLLATE "C" NOT NULL,
  endpoint_id      text COLLATE "C" NOT NULL,
  event_seq        bigint,
  event_type       text NOT NULL,
  payload          text,
  status           text NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts         integer NOT NULL,
  next_attempt_at  bigint NOT NULL,
  window_start     bigint NOT NULL,
  last_status      integer,
  last_duration_ms integer,
  last_error       text,
  created_at       bigint NOT NULL,
  updated_at       bigint NOT NULL,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, endpoint_id) REFERENCES webhook_endpoints (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX webhook_deliveries_by_endpoint ON webhook_deliveries (tenant_id, endpoint_id, created_at);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (tenant_id, next_attempt_at) WHERE status = 'pending';
