-- Workspace Suite: the whole current schema (its version is the last one in src/db/migrations.ts).
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

-- ---- version 2: second factor, magic links, invitations, mail ----

-- A user's TOTP authenticator. One row per user: a second setup before confirm replaces it.
CREATE TABLE user_totp (
  user_id      TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
  tenant_id    TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  secret_enc   TEXT NOT NULL,           -- AES-256-GCM under a server key; never the plain secret
  enabled_at   INTEGER,                 -- null while the setup awaits confirmation
  last_step    INTEGER,                 -- highest time step accepted (RFC 6238 §5.2: no replay)
  failures     INTEGER NOT NULL DEFAULT 0, -- consecutive failed codes, across all temp tokens
  locked_until INTEGER,
  created_at   INTEGER NOT NULL,
  updated_at   INTEGER NOT NULL
) STRICT;
CREATE INDEX user_totp_by_tenant ON user_totp (tenant_id, user_id);

-- One-time backup codes, stored only as keyed hashes.
CREATE TABLE backup_codes (
  code_hash  TEXT PRIMARY KEY,          -- HMAC-SHA256(server key, user id : code)
  tenant_id  TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  used_at    INTEGER,
  created_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX backup_codes_by_user ON backup_codes (tenant_id, user_id);

-- Magic sign-in links: only the SHA-256 of the token is kept; single use.
CREATE TABLE magic_links (
  token_hash TEXT PRIMARY KEY,
  tenant_id  TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  expires_at INTEGER NOT NULL,
  used_at    INTEGER,
  created_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX magic_links_by_user ON magic_links (tenant_id, user_id);
CREATE INDEX magic_links_by_expiry ON magic_links (expires_at);

-- Invitations to join a tenant. Status is derived: accepted, revoked, expired (expires_at past) or pending.
CREATE TABLE invitations (
  id               TEXT PRIMARY KEY,
  tenant_id        TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  email            TEXT NOT NULL,       -- trimmed and lower-cased
  profile_id       TEXT REFERENCES profiles(id) ON DELETE SET NULL,
  invited_by       TEXT REFERENCES users(id) ON DELETE SET NULL,
  token_hash       TEXT NOT NULL UNIQUE, -- SHA-256 of the mailed token; a resend replaces it
  expires_at       INTEGER NOT NULL,
  accepted_at      INTEGER,
  accepted_user_id TEXT REFERENCES users(id) ON DELETE SET NULL,
  revoked_at       INTEGER,
  created_at       INTEGER NOT NULL,
  updated_at       INTEGER NOT NULL
) STRICT;
CREATE INDEX invitations_by_tenant ON invitations (tenant_id, created_at, id);
CREATE INDEX invitations_by_email ON invitations (tenant_id, email);

-- Transactional outbox: a mail row is written in the same transaction as the token it carries,
-- then delivered by SMTP with retries. A system queue, not tenant data read per tenant, so its
-- delivery index starts with the status. The bodies are cleared once the mail is sent.
CREATE TABLE mail_outbox (
  id              TEXT PRIMARY KEY,
  tenant_id       TEXT REFERENCES tenants(id) ON DELETE CASCADE,
  kind            TEXT NOT NULL,        -- magic_link | invitation | ...
  recipient       TEXT NOT NULL,
  subject         TEXT NOT NULL,
  text_body       TEXT,
  html_body       TEXT,
  link            TEXT,                 -- the link the mail carries, for `suite mail list`; cleared once sent
  status          TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sending', 'sent', 'failed')),
  attempts        INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,
  locked_until    INTEGER,              -- a claim by one sender; a crash lets it lapse and the mail is retried
  last_error      TEXT,
  created_at      INTEGER NOT NULL,
  sent_at         INTEGER
) STRICT;
CREATE INDEX mail_outbox_due ON mail_outbox (status, next_attempt_at);
CREATE INDEX mail_outbox_by_created ON mail_outbox (created_at);
