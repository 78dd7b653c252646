-- Workspace Suite: the whole current schema (version 1).
-- A new database gets this file at once; an older one is upgraded by src/db/migrations.ts.
-- Times are INTEGER milliseconds since the epoch (UTC); ids are nanoid text.
-- Every index over tenant data starts with tenant_id.

CREATE TABLE settings (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) STRICT;

CREATE TABLE tenants (
  id         TEXT PRIMARY KEY,
  name       TEXT NOT NULL,
  subdomain  TEXT NOT NULL UNIQUE,
  created_at INTEGER NOT NULL
) STRICT;

CREATE TABLE tenant_modules (
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  module    TEXT NOT NULL,
  PRIMARY KEY (tenant_id, module)
) STRICT, WITHOUT ROWID;

CREATE TABLE profiles (
  id         TEXT PRIMARY KEY,
  tenant_id  TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  name       TEXT NOT NULL,
  is_admin   INTEGER NOT NULL DEFAULT 0 CHECK (is_admin IN (0, 1)),
  created_at INTEGER NOT NULL,
  UNIQUE (tenant_id, name)
) STRICT;

CREATE TABLE users (
  id            TEXT PRIMARY KEY,
  tenant_id     TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  email         TEXT NOT NULL,          -- trimmed and lower-cased
  full_name     TEXT,
  role          TEXT NOT NULL CHECK (role IN ('admin', 'member')),
  profile_id    TEXT REFERENCES profiles(id) ON DELETE SET NULL,
  password_hash TEXT NOT NULL,
  created_at    INTEGER NOT NULL,
  updated_at    INTEGER NOT NULL,
  UNIQUE (tenant_id, email)
) STRICT;
-- Sign-in without a tenant looks an email up across tenants.
CREATE INDEX users_by_email ON users (email);

CREATE TABLE sessions (
  id           TEXT PRIMARY KEY,
  tenant_id    TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  user_id      TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  method       TEXT NOT NULL,           -- password | signup | 2fa | magic_link | invitation
  created_at   INTEGER NOT NULL,
  last_used_at INTEGER NOT NULL,
  expires_at   INTEGER NOT NULL,        -- absolute: refresh never extends it
  revoked_at   INTEGER,
  revoke_reason TEXT,
  ip           TEXT,
  user_agent   TEXT,
  -- No refresh token material is stored: a refresh token's jti is an HMAC of (id, refresh_gen)
  -- under a server key, so only the generation counter and the time it last moved are kept.
  refresh_gen  INTEGER NOT NULL DEFAULT 0,
  rotated_at   INTEGER
) STRICT;
CREATE INDEX sessions_by_user ON sessions (tenant_id, user_id, created_at);
CREATE INDEX sessions_by_expiry ON sessions (expires_at);

CREATE TABLE pipeline_stages (
  id          TEXT PRIMARY KEY,
  tenant_id   TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  key         TEXT NOT NULL,
  name        TEXT NOT NULL,
  color       TEXT NOT NULL,
  position    INTEGER NOT NULL,
  probability INTEGER NOT NULL CHECK (probability BETWEEN 0 AND 100),
  is_won      INTEGER NOT NULL DEFAULT 0 CHECK (is_won IN (0, 1)),
  is_lost     INTEGER NOT NULL DEFAULT 0 CHECK (is_lost IN (0, 1)),
  created_at  INTEGER NOT NULL,
  UNIQUE (tenant_id, key)
) STRICT;

-- Fixed-window counters; kept in the database so that a restart does not reset them.
CREATE TABLE rate_limits (
  key          TEXT PRIMARY KEY,
  window_start INTEGER NOT NULL,
  window_ms    INTEGER NOT NULL,
  count        INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

-- Who did what, where and when. Never a secret. No foreign keys: history outlives its rows.
CREATE TABLE audit_log (
  id         INTEGER PRIMARY KEY,
  tenant_id  TEXT,
  user_id    TEXT,
  action     TEXT NOT NULL,
  ip         TEXT,
  user_agent TEXT,
  detail     TEXT,                      -- JSON
  created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX audit_by_tenant ON audit_log (tenant_id, created_at);
