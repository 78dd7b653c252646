-- ---- version 4: sessions keep only a hash of their secret id, and the time of their last proof;
-- sign-in challenges (the 2FA temp_token) are spent once ----

-- A session's id was the secret carried in its tokens, stored in clear. SQLite has no SHA-256 to
-- hash the old ids in place, so the sessions of the previous release end here: everyone signs in
-- again once after this upgrade (docs/decisions.md, "Sign-in, tokens, sessions").
DROP TABLE sessions;

CREATE TABLE sessions (
  id           TEXT PRIMARY KEY,        -- public id: what GET /auth/sessions lists and revoke names
  sid_hash     TEXT NOT NULL UNIQUE,    -- SHA-256 of the secret sid the tokens carry; the sid itself is never stored
  tenant_id    TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  user_id      TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  method       TEXT NOT NULL,           -- password | signup | 2fa | magic_link | invitation | cli
  created_at   INTEGER NOT NULL,
  last_used_at INTEGER NOT NULL,
  expires_at   INTEGER NOT NULL,        -- absolute: refresh never extends it
  proven_at    INTEGER NOT NULL,        -- the last proof of the first factor (sign-in, reauthenticate); refresh keeps it
  revoked_at   INTEGER,
  revoke_reason TEXT,
  ip           TEXT,
  user_agent   TEXT,
  -- No refresh token material is stored: a refresh token's jti is an HMAC of (secret sid,
  -- refresh_gen) under a server key, so only the generation counter and the time it last moved are kept.
  refresh_gen  INTEGER NOT NULL DEFAULT 0,
  rotated_at   INTEGER
) STRICT;
CREATE INDEX sessions_by_user ON sessions (tenant_id, user_id, created_at);
CREATE INDEX sessions_by_expiry ON sessions (expires_at);

-- One row per outstanding temp_token: the verify that succeeds deletes it in the transaction that
-- opens the session, so a temp_token makes one session at most; logout-all, 2FA disable and a
-- password change delete a user's rows, so their outstanding temp_tokens stop working.
CREATE TABLE sign_in_challenges (
  id         TEXT PRIMARY KEY,          -- the temp_token's sid
  tenant_id  TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  method     TEXT NOT NULL,             -- the first factor proven: password | magic_link
  created_at INTEGER NOT NULL,          -- when it was proven: the session's proven_at
  expires_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX sign_in_challenges_by_user ON sign_in_challenges (tenant_id, user_id);
CREATE INDEX sign_in_challenges_by_expiry ON sign_in_challenges (expires_at);
