-- ---- version 24: the server's operators and their console (issue 34) ----

-- The people who run this server, apart from every organization's users: made and removed with
-- `suite operator create|remove`, signed in on the base domain only, always with a TOTP code.
-- `totp_secret` is sealed under the encryption key as the users' are; `totp_last_step` keeps a
-- code from being accepted twice.
CREATE TABLE operators (
  id             TEXT PRIMARY KEY,
  email          TEXT NOT NULL UNIQUE,
  password_hash  TEXT NOT NULL,
  totp_secret    TEXT NOT NULL,
  totp_last_step INTEGER,
  created_at     INTEGER NOT NULL,
  last_sign_in_at INTEGER
) STRICT;

-- An operator's sign-in between the password and the code: the temp_token's hash, spent once.
CREATE TABLE operator_challenges (
  token_hash  TEXT PRIMARY KEY,
  operator_id TEXT NOT NULL REFERENCES operators(id) ON DELETE CASCADE,
  expires_at  INTEGER NOT NULL
) STRICT;
CREATE INDEX operator_challenges_by_operator ON operator_challenges (operator_id);

-- Operators' sessions, apart from the organizations' (the token is random, kept as its hash):
-- an absolute end (`expires_at`) and an idle one (`last_used_at`); `proven_at` is the last
-- password proof, which destructive actions need recent.
CREATE TABLE operator_sessions (
  id           TEXT PRIMARY KEY,
  token_hash   TEXT NOT NULL UNIQUE,
  operator_id  TEXT NOT NULL REFERENCES operators(id) ON DELETE CASCADE,
  created_at   INTEGER NOT NULL,
  last_used_at INTEGER NOT NULL,
  expires_at   INTEGER NOT NULL,
  proven_at    INTEGER NOT NULL,
  ended_at     INTEGER,
  ip           TEXT,
  user_agent   TEXT
) STRICT;
CREATE INDEX operator_sessions_by_operator ON operator_sessions (operator_id);

-- Everything operators do, and every sign-in attempt: the server's own audit log (an
-- organization's security log never shows it). Kept when the operator is removed.
CREATE TABLE operator_audit (
  id             INTEGER PRIMARY KEY,
  operator_id    TEXT,
  operator_email TEXT,
  action         TEXT NOT NULL,
  target         TEXT,
  ip             TEXT,
  user_agent     TEXT,
  detail         TEXT NOT NULL DEFAULT '{}',
  created_at     INTEGER NOT NULL
) STRICT;
CREATE INDEX operator_audit_by_time ON operator_audit (created_at, id);
