-- Imports are background jobs; records carry an external id (schema version 8, issue 27).
-- The same tables as SQLite's migration 18, tenant_id first in every key.

ALTER TABLE accounts ADD COLUMN external_id text;
ALTER TABLE contacts ADD COLUMN external_id text;
ALTER TABLE deals ADD COLUMN external_id text;
CREATE UNIQUE INDEX accounts_by_external_id ON accounts (tenant_id, external_id) WHERE external_id IS NOT NULL;
CREATE UNIQUE INDEX contacts_by_external_id ON contacts (tenant_id, external_id) WHERE external_id IS NOT NULL;
CREATE UNIQUE INDEX deals_by_external_id ON deals (tenant_id, external_id) WHERE external_id IS NOT NULL;

CREATE TABLE crm_jobs (
  tenant_id   text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  id          text COLLATE "C" NOT NULL,
  kind        text NOT NULL,
  status      text NOT NULL,
  user_id     text,
  total       integer NOT NULL,
  done        integer NOT NULL DEFAULT 0,
  added       integer NOT NULL DEFAULT 0,
  updated     integer NOT NULL DEFAULT 0,
  unchanged   integer NOT NULL DEFAULT 0,
  error_count integer NOT NULL DEFAULT 0,
  errors      text NOT NULL DEFAULT '[]',
  message     text,
  created_at  bigint NOT NULL,
  finished_at bigint,
  lease_until bigint NOT NULL,
  PRIMARY KEY (tenant_id, id)
);
CREATE INDEX crm_jobs_by_created ON crm_jobs (tenant_id, created_at, id);
CREATE UNIQUE INDEX crm_jobs_one_running ON crm_jobs (tenant_id) WHERE status = 'running';

CREATE TABLE crm_job_undo (
  tenant_id text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  job_id    text COLLATE "C" NOT NULL,
  n         integer NOT NULL,
  entity    text NOT NULL,
  record_id text NOT NULL,
  before    text,
  PRIMARY KEY (tenant_id, job_id, n)
);

-- An import writes a batch of deals with multi-row statements and adds their counts up once per
-- batch (src/stores/postgres/import-batch.ts), setting suite.counters_by_batch for its
-- transaction: row by row, each deal upserted its ~120 counter rows again, so that a transaction
-- of n deals rewrote the same rows n times over (4,000 rows took 153 s). Other writes are unchanged.
DROP TRIGGER deal_counts_change ON deals;
CREATE TRIGGER deal_counts_change AFTER INSERT OR DELETE OR UPDATE OF stage, assigned_to ON deals
  FOR EACH ROW WHEN (current_setting('suite.counters_by_batch', true) IS DISTINCT FROM 'on')
  EXECUTE FUNCTION deal_counts_trigger();
DROP TRIGGER deal_gram_counts_change ON deals;
CREATE TRIGGER deal_gram_counts_change AFTER INSERT OR DELETE OR UPDATE OF search_text, stage, assigned_to ON deals
  FOR EACH ROW WHEN (current_setting('suite.counters_by_batch', true) IS DISTINCT FROM 'on')
  EXECUTE FUNCTION deal_gram_counts_trigger();
