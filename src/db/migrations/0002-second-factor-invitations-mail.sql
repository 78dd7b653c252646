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
