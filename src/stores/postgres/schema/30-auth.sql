-- Sessions, sign-in challenges, second factors, magic links, mailed account tokens and identity
-- providers. Tokens are kept only as hashes.

CREATE TABLE sessions (
  tenant_id     text NOT NULL,
  id            text COLLATE "C" NOT NULL,          -- public id: what GET /auth/sessions lists and revoke names
  sid_hash      text NOT NULL,          -- SHA-256 of the secret sid the tokens carry
  user_id       text NOT NULL,
  method        text NOT NULL,
  created_at    bigint NOT NULL,
  last_used_at  bigint NOT NULL,
  expires_at    bigint NOT NULL,
  proven_at     bigint NOT NULL,
  revoked_at    bigint,
  revoke_reason text,
  ip            text,
  user_agent    text,
  refresh_gen   integer NOT NULL DEFAULT 0,
  rotated_at    bigint,
  PRIMARY KEY (tenant_id, id),
  UNIQUE (id),
  FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
);
-- Every request finds its session by the hash of the sid its token carries.
CREATE UNIQUE INDEX sessions_by_sid ON sessions (sid_hash);
CREATE INDEX sessions_by_user ON sessions (tenant_id, user_id, created_at);
CREATE INDEX sessions_by_expiry ON sessions (expires_at);

CREATE TABLE sign_in_challenges (
  tenant_id  text NOT NULL,
  id         text COLLATE "C" NOT NULL,             -- the temp_token's sid
  user_id    text NOT NULL,
  method     text NOT NULL,
  created_at bigint NOT NULL,
  expires_at bigint NOT NULL,
  PRIMARY KEY (tenant_id, id),
  UNIQUE (id),
  FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX sign_in_challenges_by_user ON sign_in_challenges (tenant_id, user_id);
CREATE INDEX sign_in_challenges_by_expiry ON sign_in_challenges (expires_at);

CREATE TABLE user_totp (
  tenant_id    text NOT NULL,
  user_id      text NOT NULL,
  secret_enc   text NOT NULL,           -- sealed under a server key; never the plain secret
  enabled_at   bigint,
  last_step    bigint,                  -- highest time step accepted (no replay)
  failures     integer NOT NULL DEFAULT 0,
  locked_until bigint,
  created_at   bigint NOT NULL,
  updated_at   bigint NOT NULL,
  PRIMARY KEY (tenant_id, user_id),
  UNIQUE (user_id),
  FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
);

CREATE TABLE backup_codes (
  tenant_id  text NOT NULL,
  code_hash  text NOT NULL,             -- HMAC-SHA256(server key, user id : code)
  user_id    text NOT NULL,
  used_at    bigint,
  created_at bigint NOT NULL,
  PRIMARY KEY (tenant_id, code_hash),
  UNIQUE (code_hash),
  FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX backup_codes_by_user ON backup_codes (tenant_id, user_id);

CREATE TABLE magic_links (
  tenant_id  text NOT NULL,
  token_hash text NOT NULL,
  user_id    text NOT NULL,
  expires_at bigint NOT NULL,
  used_at    bigint,
  created_at bigint NOT NULL,
  PRIMARY KEY (tenant_id, token_hash),
  UNIQUE (token_hash),
  FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX magic_links_by_user ON magic_links (tenant_id, user_id);
CREATE INDEX magic_links_by_expiry ON magic_links (expires_at);

CREATE TABLE account_tokens (
  tenant_id  text NOT NULL,
  token_hash text NOT NULL,
  purpose    text NOT NULL CHECK (purpose IN ('password_reset', 'email_verify')),
  user_id    text NOT NULL,
  email      text NOT NULL,
  expires_at bigint NOT NULL,
  used_at    bigint,
  created_at bigint NOT NULL,
  PRIMARY KEY (tenant_id, token_hash),
  UNIQUE (token_hash),
  FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX account_tokens_by_user ON account_tokens (tenant_id, user_id, purpose);
CREATE INDEX account_tokens_by_expiry ON account_tokens (expires_at);

CREATE TABLE identity_providers (
  tenant_id            text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  id                   text COLLATE "C" NOT NULL,
  kind                 text NOT NULL CHECK (kind IN ('oidc', 'google', 'microsoft', 'github')),
  name                 text NOT NULL,
  issuer               text,
  client_id            text NOT NULL,
  client_secret_sealed text NOT NULL,
  allowed_domains      text NOT NULL,   -- JSON array
  auto_join            integer NOT NULL,
  default_profile_id   text,
  enabled              integer NOT NULL,
  created_at           bigint NOT NULL,
  updated_at           bigint NOT NULL,
  PRIMARY KEY (tenant_id, id),
  UNIQUE (id),
  FOREIGN KEY (tenant_id, default_profile_id) REFERENCES profiles (tenant_id, id) ON DELETE SET NULL (default_profile_id)
);
CREATE UNIQUE INDEX identity_providers_by_name ON identity_providers (tenant_id, name);
CREATE INDEX identity_providers_by_tenant ON identity_providers (tenant_id, created_at, id);

CREATE TABLE user_identities (
  tenant_id    text NOT NULL,
  id           text COLLATE "C" NOT NULL,
  user_id      text NOT NULL,
  provider_id  text NOT NULL,
  issuer       text NOT NULL,
  subject      text NOT NULL,
  email        text,
  created_at   bigint NOT NULL,
  last_used_at bigint,
  PRIMARY KEY (tenant_id, id),
  UNIQUE (id),
  FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, provider_id) REFERENCES identity_providers (tenant_id, id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX user_identities_by_subject ON user_identities (tenant_id, issuer, subject);
CREATE INDEX user_identities_by_user ON user_identities (tenant_id, user_id, created_at);
CREATE INDEX user_identities_by_provider ON user_identities (tenant_id, provider_id);

CREATE TABLE oauth_flows (
  tenant_id       text NOT NULL,
  state_hash      text NOT NULL,
  provider_id     text NOT NULL,
  user_id         text,
  browser_hash    text NOT NULL,
  verifier_sealed text NOT NULL,
  nonce           text NOT NULL,
  created_at      bigint NOT NULL,
  expires_at      bigint NOT NULL,
  PRIMARY KEY (tenant_id, state_hash),
  UNIQUE (state_hash),
  FOREIGN KEY (tenant_id, provider_id) REFERENCES identity_providers (tenant_id, id) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX oauth_flows_by_tenant ON oauth_flows (tenant_id, provider_id);
CREATE INDEX oauth_flows_by_expiry ON oauth_flows (expires_at);
