-- Tenant-first keys (schema version 3, issue 19). A distributed PostgreSQL (Citus, distributed by
-- tenant_id) enforces a unique index only when it holds tenant_id, and sends a statement to one
-- node only when it names the tenant. Every lookup now names it (sessions by the tokens' tid,
-- mailed tokens and OAuth states carry it), so the global indexes beside the tenant-first keys go:
-- every key and index of tenant data starts with tenant_id (tests/stores/tenant-first-keys.test.ts
-- reads the catalog). Not tenant data, left as they are: settings, tenants (a reference table:
-- small, read by every request's host), rate_limits and mail_outbox (kept on the coordinator).
-- IF EXISTS throughout: a database made with files 10 to 52 has them; the statements are for it.

-- Ids are random (126 bits): unique within their organization is the key; the global copies go.
ALTER TABLE profiles DROP CONSTRAINT IF EXISTS profiles_id_key;
ALTER TABLE users DROP CONSTRAINT IF EXISTS users_id_key;
ALTER TABLE sessions DROP CONSTRAINT IF EXISTS sessions_id_key;
ALTER TABLE sign_in_challenges DROP CONSTRAINT IF EXISTS sign_in_challenges_id_key;
ALTER TABLE identity_providers DROP CONSTRAINT IF EXISTS identity_providers_id_key;
ALTER TABLE user_identities DROP CONSTRAINT IF EXISTS user_identities_id_key;
ALTER TABLE invitations DROP CONSTRAINT IF EXISTS invitations_id_key;
ALTER TABLE pipeline_stages DROP CONSTRAINT IF EXISTS pipeline_stages_id_key;
ALTER TABLE accounts DROP CONSTRAINT IF EXISTS accounts_id_key;
ALTER TABLE contacts DROP CONSTRAINT IF EXISTS contacts_id_key;
ALTER TABLE deals DROP CONSTRAINT IF EXISTS deals_id_key;
ALTER TABLE user_totp DROP CONSTRAINT IF EXISTS user_totp_user_id_key;

-- Hashes of secrets: their (tenant_id, hash) primary keys already hold them.
ALTER TABLE backup_codes DROP CONSTRAINT IF EXISTS backup_codes_code_hash_key;
ALTER TABLE magic_links DROP CONSTRAINT IF EXISTS magic_links_token_hash_key;
ALTER TABLE account_tokens DROP CONSTRAINT IF EXISTS account_tokens_token_hash_key;
ALTER TABLE oauth_flows DROP CONSTRAINT IF EXISTS oauth_flows_state_hash_key;

-- A session is found by the tokens' tenant and the hash of their sid; an invitation by the
-- tenant its mailed token carries and the token's hash.
DROP INDEX IF EXISTS sessions_by_sid;
CREATE UNIQUE INDEX sessions_by_sid ON sessions (tenant_id, sid_hash);
DROP INDEX IF EXISTS invitations_by_token;
CREATE UNIQUE INDEX invitations_by_token ON invitations (tenant_id, token_hash);

-- Sign-in without a tenant probes users (tenant_id, email) once per organization instead.
DROP INDEX IF EXISTS users_by_email;

-- The housekeeping sweeps delete organization by organization.
DROP INDEX IF EXISTS sessions_by_expiry;
CREATE INDEX sessions_by_expiry ON sessions (tenant_id, expires_at);
DROP INDEX IF EXISTS sign_in_challenges_by_expiry;
CREATE INDEX sign_in_challenges_by_expiry ON sign_in_challenges (tenant_id, expires_at);
DROP INDEX IF EXISTS magic_links_by_expiry;
CREATE INDEX magic_links_by_expiry ON magic_links (tenant_id, expires_at);
DROP INDEX IF EXISTS account_tokens_by_expiry;
CREATE INDEX account_tokens_by_expiry ON account_tokens (tenant_id, expires_at);
DROP INDEX IF EXISTS oauth_flows_by_expiry;
CREATE INDEX oauth_flows_by_expiry ON oauth_flows (tenant_id, expires_at);

-- A deal's seq needs to be unique only within its organization ((tenant_id, seq) is the key);
-- tenant numbers stay distinct by how they are drawn (max + 1 under an advisory lock).
ALTER TABLE crm_tenants DROP CONSTRAINT IF EXISTS crm_tenants_tenant_no_key;

-- The audit log's key is (tenant_id, id). A distribution column holds no NULL: the rows of no
-- organization (a sign-in attempt for an unknown address, an unknown link) are kept under ''.
UPDATE audit_log SET tenant_id = '' WHERE tenant_id IS NULL;
ALTER TABLE audit_log ALTER COLUMN tenant_id SET DEFAULT '';
ALTER TABLE audit_log ALTER COLUMN tenant_id SET NOT NULL;
ALTER TABLE audit_log DROP CONSTRAINT IF EXISTS audit_log_pkey;
ALTER TABLE audit_log ADD PRIMARY KEY (tenant_id, id);
