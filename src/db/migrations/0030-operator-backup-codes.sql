-- ---- version 30: operators' backup codes (issue 34) ----

-- Ten one-time codes an operator types at the sign-in's code step when their authenticator is
-- not at hand: made by `suite operator create` and again from the console. Only the keyed hash
-- of each (HMAC under the server key, of operator id : code) is kept, as the users' are.
CREATE TABLE operator_backup_codes (
  code_hash   TEXT PRIMARY KEY,
  operator_id TEXT NOT NULL REFERENCES operators(id) ON DELETE CASCADE,
  used_at     INTEGER,
  created_at  INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX operator_backup_codes_by_operator ON operator_backup_codes (operator_id);
