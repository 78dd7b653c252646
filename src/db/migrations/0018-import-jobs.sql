-- ---- version 18: imports are background jobs; records carry an external id (issue 27) ----

-- The id a record has in the system it came from: an import row naming it updates that record
-- instead of adding a second. Unique within the organization when present.
ALTER TABLE accounts ADD COLUMN external_id TEXT;
ALTER TABLE contacts ADD COLUMN external_id TEXT;
ALTER TABLE deals ADD COLUMN external_id TEXT;
CREATE UNIQUE INDEX accounts_by_external_id ON accounts (tenant_id, external_id) WHERE external_id IS NOT NULL;
CREATE UNIQUE INDEX contacts_by_external_id ON contacts (tenant_id, external_id) WHERE external_id IS NOT NULL;
CREATE UNIQUE INDEX deals_by_external_id ON deals (tenant_id, external_id) WHERE external_id IS NOT NULL;

-- An import written in bounded batches. status: running, succeeded, failed. A running job's
-- lease is pushed on by every batch; one whose lease ran out (its server died) is rolled back
-- from crm_job_undo. One running job per organization (the partial unique index).
CREATE TABLE crm_jobs (
  tenant_id   TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  id          TEXT NOT NULL,
  kind        TEXT NOT NULL,
  status      TEXT NOT NULL,
  user_id     TEXT,
  total       INTEGER NOT NULL,
  done        INTEGER NOT NULL DEFAULT 0,
  added       INTEGER NOT NULL DEFAULT 0,
  updated     INTEGER NOT NULL DEFAULT 0,
  unchanged   INTEGER NOT NULL DEFAULT 0,
  error_count INTEGER NOT NULL DEFAULT 0,
  errors      TEXT NOT NULL DEFAULT '[]',
  message     TEXT,
  created_at  INTEGER NOT NULL,
  finished_at INTEGER,
  lease_until INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, id)
) STRICT, WITHOUT ROWID;
CREATE INDEX crm_jobs_by_created ON crm_jobs (tenant_id, created_at, id);
CREATE UNIQUE INDEX crm_jobs_one_running ON crm_jobs (tenant_id) WHERE status = 'running';

-- What each batch of a running job changed, in order: `before` is the record's columns before
-- the job updated it (JSON), NULL for a record the job added. A rollback undoes the entries from
-- the last; a finished job's entries are deleted.
CREATE TABLE crm_job_undo (
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  job_id    TEXT NOT NULL,
  n         INTEGER NOT NULL,
  entity    TEXT NOT NULL,
  record_id TEXT NOT NULL,
  before    TEXT,
  PRIMARY KEY (tenant_id, job_id, n)
) STRICT, WITHOUT ROWID;
