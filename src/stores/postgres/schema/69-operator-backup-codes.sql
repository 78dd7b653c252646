-- Operators' backup codes (schema version 19, issue 34): the same table as SQLite's migration 30.
-- Only the keyed hash of each code is kept. Not tenant data: operators belong to no organization.

CREATE TABLE operator_backup_codes (
  code_hash   text PRIMARY KEY,
  operator_id text NOT NULL REFERENCES operators(id) ON DELETE CASCADE,
  used_at     bigint,
  created_at  bigint NOT NULL
);
CREATE INDEX operator_backup_codes_by_operator ON operator_backup_codes (operator_id);
