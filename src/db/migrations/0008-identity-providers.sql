-- ---- version 8: sign-in with an identity provider (Google, Microsoft, GitHub, any OpenID Connect) ----

-- An organization's identity providers. The client secret is sealed under the server's encryption
-- key (AES-GCM, bound to the provider's id); it never leaves the server. allowed_domains is a JSON
-- array of lower-case domains whose verified addresses may join (auto_join) or link.
CREATE TABLE identity_providers (
  id                   TEXT PRIMARY KEY,
  tenant_id            TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  kind                 TEXT NOT NULL CHECK (kind IN ('oidc', 'google', 'microsoft', 'github')),
  name                 TEXT NOT NULL,
  issuer               TEXT,
  client_id            TEXT NOT NULL,
  client_secret_sealed TEXT NOT NULL,
  allowed_domains      TEXT NOT NULL,
  auto_join            INTEGER NOT NULL,
  default_profile_id   TEXT REFERENCES profiles(id) ON DELETE SET NULL,
  enabled              INTEGER NOT NULL,
  created_at           INTEGER NOT NULL,
  updated_at           INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE UNIQUE INDEX identity_providers_by_name ON identity_providers (tenant_id, name);
CREATE INDEX identity_providers_by_tenant ON identity_providers (tenant_id, created_at, id);

-- An outside identity linked to a user: found by (issuer, subject) only, never by address. The
-- same outside account may be linked in several organizations, once in each.
CREATE TABLE user_identities (
  id          TEXT PRIMARY KEY,
  tenant_id   TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  user_id     TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  provider_id TEXT NOT NULL REFERENCES identity_providers(id) ON DELETE CASCADE,
  issuer      TEXT NOT NULL,
  subject     TEXT NOT NULL,
  email       TEXT,
  created_at  INTEGER NOT NULL,
  last_used_at INTEGER
) STRICT, WITHOUT ROWID;
CREATE UNIQUE INDEX user_identities_by_subject ON user_identities (tenant_id, issuer, subject);
CREATE INDEX user_identities_by_user ON user_identities (tenant_id, user_id, created_at);
CREATE INDEX user_identities_by_provider ON user_identities (tenant_id, provider_id);

-- Authorization requests under way: one row per /start, spent once by the callback. Only hashes
-- of the state and of the browser cookie are kept; the PKCE verifier is sealed.
CREATE TABLE oauth_flows (
  state_hash      TEXT PRIMARY KEY,
  tenant_id       TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  provider_id     TEXT NOT NULL REFERENCES identity_providers(id) ON DELETE CASCADE,
  user_id         TEXT REFERENCES users(id) ON DELETE CASCADE,
  browser_hash    TEXT NOT NULL,
  verifier_sealed TEXT NOT NULL,
  nonce           TEXT NOT NULL,
  created_at      INTEGER NOT NULL,
  expires_at      INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX oauth_flows_by_tenant ON oauth_flows (tenant_id, provider_id);
CREATE INDEX oauth_flows_by_expiry ON oauth_flows (expires_at);
