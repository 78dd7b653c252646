-- ---- version 20: passkeys (WebAuthn; issue 33) ----

-- A user's passkeys: the public key of a discoverable credential and what the authenticator last
-- said of it. `credential_id` is the authenticator's id (base64url), unique within the
-- organization; `counter` the highest signature counter seen (0 for authenticators that keep
-- none); `rp_id` the relying party it was made for (it signs for that one only).
CREATE TABLE passkeys (
  tenant_id     TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  id            TEXT NOT NULL,
  user_id       TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  credential_id TEXT NOT NULL,
  public_key    TEXT NOT NULL,
  counter       INTEGER NOT NULL,
  transports    TEXT NOT NULL DEFAULT '[]',
  backed_up     INTEGER NOT NULL CHECK (backed_up IN (0, 1)),
  rp_id         TEXT NOT NULL,
  name          TEXT NOT NULL,
  created_at    INTEGER NOT NULL,
  last_used_at  INTEGER,
  PRIMARY KEY (tenant_id, id)
) STRICT, WITHOUT ROWID;
CREATE UNIQUE INDEX passkeys_by_credential ON passkeys (tenant_id, credential_id);
CREATE INDEX passkeys_by_user ON passkeys (tenant_id, user_id, created_at);

-- Outstanding WebAuthn challenges, by the SHA-256 of the challenge, each spent once. `purpose`:
-- register (for `user_id` of `tenant_id`) or login (`tenant_id` null on the base domain).
CREATE TABLE passkey_challenges (
  challenge_hash TEXT PRIMARY KEY,
  purpose        TEXT NOT NULL CHECK (purpose IN ('register', 'login')),
  tenant_id      TEXT REFERENCES tenants(id) ON DELETE CASCADE,
  user_id        TEXT,
  rp_id          TEXT NOT NULL,
  created_at     INTEGER NOT NULL,
  expires_at     INTEGER NOT NULL
) STRICT;
CREATE INDEX passkey_challenges_by_expiry ON passkey_challenges (expires_at);
