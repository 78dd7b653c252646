-- Passkeys (schema version 10, issue 33). The same tables as SQLite's migration 20, tenant_id
-- first in every key; a challenge of the base domain (no organization yet) has none.

CREATE TABLE passkeys (
  tenant_id     text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  id            text COLLATE "C" NOT NULL,
  user_id       text NOT NULL,
  credential_id text COLLATE "C" NOT NULL,
  public_key    text NOT NULL,
  counter       bigint NOT NULL,
  transports    text NOT NULL DEFAULT '[]',
  backed_up     boolean NOT NULL,
  rp_id         text NOT NULL,
  name          text NOT NULL,
  created_at    bigint NOT NULL,
  last_used_at  bigint,
  PRIMARY KEY (tenant_id, id),
  UNIQUE (tenant_id, credential_id),
  FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX passkeys_by_user ON passkeys (tenant_id, user_id, created_at);

CREATE TABLE passkey_challenges (
  challenge_hash text PRIMARY KEY,
  purpose        text NOT NULL CHECK (purpose IN ('register', 'login')),
  tenant_id      text REFERENCES tenants(id) ON DELETE CASCADE,
  user_id        text,
  rp_id          text NOT NULL,
  created_at     bigint NOT NULL,
  expires_at     bigint NOT NULL
);
CREATE INDEX passkey_challenges_by_expiry ON passkey_challenges (expires_at);
