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

-- ---- version 4 changed sessions: only a hash of the secret sid is kept, and the last proof ----
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
-- (its indexes: version 5, below)

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

-- ---- version 3: CRM ----

-- Per-tenant CRM numbering. A deal's rowid (seq) is tenant_no * 2^32 + n, so one tenant's deals
-- are one rowid range: full-text matches are limited to a tenant by a rowid range that FTS5
-- seeks to, instead of joining every match of every tenant to its deal.
CREATE TABLE crm_tenants (
  tenant_id TEXT PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
  tenant_no INTEGER NOT NULL UNIQUE,
  next_deal INTEGER NOT NULL DEFAULT 0
) STRICT;

CREATE TABLE accounts (
  id         TEXT PRIMARY KEY,
  tenant_id  TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  name       TEXT NOT NULL,
  domain     TEXT,
  industry   TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;
CREATE INDEX accounts_by_tenant ON accounts (tenant_id, created_at, id);

CREATE TABLE contacts (
  id         TEXT PRIMARY KEY,
  tenant_id  TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  first_name TEXT NOT NULL,
  last_name  TEXT,
  email      TEXT,
  phone      TEXT,
  account_id TEXT REFERENCES accounts(id) ON DELETE SET NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;
CREATE INDEX contacts_by_tenant ON contacts (tenant_id, created_at, id);
CREATE INDEX contacts_by_account ON contacts (tenant_id, account_id);

-- Deals. account_name, contact_name, assignee_name and assignee_email are copies of the names a
-- deal shows, and the *_key columns their lower-cased sort keys: a page of deals is read without
-- a join. The transaction that renames an account, contact or user rewrites every copy (and
-- search_text, the lower-cased title, notes, account name and contact name that deals_fts indexes).
CREATE TABLE deals (
  seq          INTEGER PRIMARY KEY,
  id           TEXT NOT NULL UNIQUE,
  tenant_id    TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  title        TEXT NOT NULL,
  account_id   TEXT NOT NULL REFERENCES accounts(id),
  contact_id   TEXT REFERENCES contacts(id),
  assigned_to  TEXT REFERENCES users(id),
  stage        TEXT NOT NULL,
  value_cents  INTEGER NOT NULL DEFAULT 0,   -- exact: the decimal text times 100
  currency     TEXT NOT NULL DEFAULT 'USD',
  close_date   TEXT,                         -- YYYY-MM-DD
  probability  INTEGER CHECK (probability BETWEEN 0 AND 100),
  notes        TEXT,
  custom_data  TEXT,                         -- JSON object
  created_at   INTEGER NOT NULL,
  updated_at   INTEGER NOT NULL,
  title_key    TEXT NOT NULL,
  account_key  TEXT NOT NULL,
  contact_key  TEXT,
  assignee_key TEXT,
  search_text  TEXT NOT NULL,
  account_name   TEXT NOT NULL,
  contact_name   TEXT,
  assignee_name  TEXT,
  assignee_email TEXT,
  -- The stage as one exact token for the search index ("\x01won\x01"): a search within some
  -- stages is counted by the index alone. Computed, never stored.
  stage_token  TEXT GENERATED ALWAYS AS (char(1) || stage || char(1)) VIRTUAL
) STRICT;
-- One index per sort order (ties by id). Nullable keys sort nulls last both ways, so they get an
-- ascending and a descending index that both lead with (key IS NULL).
-- The default order also carries the filter columns, so a filtered deep page is read from the index alone.
CREATE INDEX deals_by_created ON deals (tenant_id, created_at, id, stage, assigned_to);
CREATE INDEX deals_by_updated ON deals (tenant_id, updated_at, id);
CREATE INDEX deals_by_title ON deals (tenant_id, title_key, id);
CREATE INDEX deals_by_value ON deals (tenant_id, value_cents, id);
CREATE INDEX deals_by_stage ON deals (tenant_id, stage, id);
CREATE INDEX deals_by_account ON deals (tenant_id, account_key, id);
CREATE INDEX deals_by_stage_created ON deals (tenant_id, stage, created_at, id);
CREATE INDEX deals_by_assignee_created ON deals (tenant_id, assigned_to, created_at, id);
CREATE INDEX deals_by_close_asc ON deals (tenant_id, close_date IS NULL, close_date, id);
CREATE INDEX deals_by_close_desc ON deals (tenant_id, close_date IS NULL, close_date DESC, id DESC);
CREATE INDEX deals_by_probability_asc ON deals (tenant_id, probability IS NULL, probability, id);
CREATE INDEX deals_by_probability_desc ON deals (tenant_id, probability IS NULL, probability DESC, id DESC);
CREATE INDEX deals_by_contact_asc ON deals (tenant_id, contact_key IS NULL, contact_key, id);
CREATE INDEX deals_by_contact_desc ON deals (tenant_id, contact_key IS NULL, contact_key DESC, id DESC);
CREATE INDEX deals_by_assignee_asc ON deals (tenant_id, assignee_key IS NULL, assignee_key, id);
CREATE INDEX deals_by_assignee_desc ON deals (tenant_id, assignee_key IS NULL, assignee_key DESC, id DESC);
-- The filter columns and search text by rowid: a rare search's matches are filtered by stage and
-- assignee from this narrow index instead of reading each deal's row, and a one- or two-letter
-- search (too short for trigrams) is counted by reading it in the tenant's rowid range.
CREATE INDEX deals_text_by_seq ON deals (seq, stage, assigned_to, search_text);
-- Renames find the deals that copy a name.
CREATE INDEX deals_by_account_id ON deals (tenant_id, account_id);
CREATE INDEX deals_by_contact_id ON deals (tenant_id, contact_id);

-- Substring search: trigram FTS over deals.search_text, and stage_token for searches within
-- stages (external content, rowid = deals.seq), kept in step by these triggers inside the
-- writing transaction. Queries always name the column they match.
CREATE VIRTUAL TABLE deals_fts USING fts5(search_text, stage_token, content='deals', content_rowid='seq', tokenize='trigram case_sensitive 1');

CREATE TRIGGER deals_fts_insert AFTER INSERT ON deals BEGIN
  INSERT INTO deals_fts (rowid, search_text, stage_token) VALUES (new.seq, new.search_text, new.stage_token);
END;
CREATE TRIGGER deals_fts_delete AFTER DELETE ON deals BEGIN
  INSERT INTO deals_fts (deals_fts, rowid, search_text, stage_token) VALUES ('delete', old.seq, old.search_text, old.stage_token);
END;
CREATE TRIGGER deals_fts_update AFTER UPDATE OF search_text, stage ON deals BEGIN
  INSERT INTO deals_fts (deals_fts, rowid, search_text, stage_token) VALUES ('delete', old.seq, old.search_text, old.stage_token);
  INSERT INTO deals_fts (rowid, search_text, stage_token) VALUES (new.seq, new.search_text, new.stage_token);
END;

-- Deal counts by tenant, assignee ('' = unassigned) and stage, plus one row per stage with
-- assignee '*' for all assignees together, so that the unfiltered, stage and assignee totals of
-- the deal list are sums of a few rows instead of a count over every deal. Kept by triggers, so
-- no write path can forget them.
CREATE TABLE deal_counts (
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  assignee  TEXT NOT NULL,
  stage     TEXT NOT NULL,
  n         INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, assignee, stage)
) STRICT, WITHOUT ROWID;

CREATE TRIGGER deal_counts_insert AFTER INSERT ON deals BEGIN
  INSERT INTO deal_counts (tenant_id, assignee, stage, n) VALUES (new.tenant_id, coalesce(new.assigned_to, ''), new.stage, 1), (new.tenant_id, '*', new.stage, 1)
    ON CONFLICT (tenant_id, assignee, stage) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER deal_counts_delete AFTER DELETE ON deals BEGIN
  UPDATE deal_counts SET n = n - 1
   WHERE tenant_id = old.tenant_id AND stage = old.stage AND assignee IN (coalesce(old.assigned_to, ''), '*');
END;
CREATE TRIGGER deal_counts_update AFTER UPDATE OF stage, assigned_to ON deals BEGIN
  UPDATE deal_counts SET n = n - 1
   WHERE tenant_id = old.tenant_id AND stage = old.stage AND assignee IN (coalesce(old.assigned_to, ''), '*');
  INSERT INTO deal_counts (tenant_id, assignee, stage, n) VALUES (new.tenant_id, coalesce(new.assigned_to, ''), new.stage, 1), (new.tenant_id, '*', new.stage, 1)
    ON CONFLICT (tenant_id, assignee, stage) DO UPDATE SET n = n + 1;
END;

-- ---- version 4: sign-in challenges (the 2FA temp_token), spent once ----

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

-- ---- version 6: email verification, password resets ----

-- When the user proved they receive mail at `email` (a verification link, a used magic link or an
-- accepted invitation); NULL: not proven. Sign-in and magic links without a tenant prefer
-- accounts whose address is proven (auth/email/).
ALTER TABLE users ADD COLUMN email_verified_at INTEGER;

-- Mailed single-use tokens of an account: password resets and address verifications. Only the
-- SHA-256 of the token is kept; `email` is the address a verification proves (the user's
-- address when it was mailed).
CREATE TABLE account_tokens (
  token_hash TEXT PRIMARY KEY,
  purpose    TEXT NOT NULL CHECK (purpose IN ('password_reset', 'email_verify')),
  tenant_id  TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  email      TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  used_at    INTEGER,
  created_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX account_tokens_by_user ON account_tokens (tenant_id, user_id, purpose);
CREATE INDEX account_tokens_by_expiry ON account_tokens (expires_at);

-- ---- version 7: the audit log read by admins, newest first, filtered by time, user and action ----
-- By time, carrying the filter columns so that a filtered page is read from the index alone; and by user.
CREATE INDEX audit_by_tenant_time ON audit_log (tenant_id, created_at, id, user_id, action);
CREATE INDEX audit_by_tenant_user ON audit_log (tenant_id, user_id, created_at, id);

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

-- ---- version 9: an operator can disable an organization (`suite tenant disable`) ----

-- When the organization was disabled; NULL: it is in service. A disabled one keeps its data and
-- answers 403 `tenant_disabled` to every request that names it or carries one of its sessions.
ALTER TABLE tenants ADD COLUMN disabled_at INTEGER;

-- ---- version 10: the deal search index knows which deals are unassigned (issue 15) ----

-- One token ("\x01-\x01") for a deal nobody is assigned to, none otherwise: a search among the
-- unassigned is one walk of the trigram index (the term AND this token) instead of the term's
-- matches intersected with every unassigned deal. Computed, never stored.
ALTER TABLE deals ADD COLUMN unassigned_token TEXT GENERATED ALWAYS AS (CASE WHEN assigned_to IS NULL THEN char(1) || '-' || char(1) END) VIRTUAL;
DROP TRIGGER deals_fts_insert;
DROP TRIGGER deals_fts_delete;
DROP TRIGGER deals_fts_update;
DROP TABLE deals_fts;
CREATE VIRTUAL TABLE deals_fts USING fts5(search_text, stage_token, unassigned_token, content='deals', content_rowid='seq', tokenize='trigram case_sensitive 1');
INSERT INTO deals_fts (deals_fts) VALUES ('rebuild');
CREATE TRIGGER deals_fts_insert AFTER INSERT ON deals BEGIN
  INSERT INTO deals_fts (rowid, search_text, stage_token, unassigned_token) VALUES (new.seq, new.search_text, new.stage_token, new.unassigned_token);
END;
CREATE TRIGGER deals_fts_delete AFTER DELETE ON deals BEGIN
  INSERT INTO deals_fts (deals_fts, rowid, search_text, stage_token, unassigned_token) VALUES ('delete', old.seq, old.search_text, old.stage_token, old.unassigned_token);
END;
CREATE TRIGGER deals_fts_update AFTER UPDATE OF search_text, stage, assigned_to ON deals BEGIN
  INSERT INTO deals_fts (deals_fts, rowid, search_text, stage_token, unassigned_token) VALUES ('delete', old.seq, old.search_text, old.stage_token, old.unassigned_token);
  INSERT INTO deals_fts (rowid, search_text, stage_token, unassigned_token) VALUES (new.seq, new.search_text, new.stage_token, new.unassigned_token);
END;

-- ---- version 11: how many deals hold each 1- and 2-character piece of their search text (issue 15) ----

-- Per organization, stage and assignee ('' for nobody), how many deals' search text contains each
-- one- and two-character string (`gram`; none spanning the newline between title, notes, account
-- and contact: a search term cannot hold a control character). A 1-2 letter search's exact total
-- is then a sum of a few rows instead of a read of the organization's text (about 150 ms at 1M
-- deals), and says whether its matches are dense enough to find by walking the page's order.
-- Kept by the triggers below in the writing transaction; rows that fall to 0 stay (a sum ignores them).
CREATE TABLE deal_gram_counts (
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  gram      TEXT NOT NULL,
  stage     TEXT NOT NULL,
  assignee  TEXT NOT NULL,
  n         INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, gram, stage, assignee)
) STRICT, WITHOUT ROWID;

CREATE TRIGGER deal_grams_insert AFTER INSERT ON deals BEGIN
  INSERT INTO deal_gram_counts (tenant_id, gram, stage, assignee, n)
    SELECT new.tenant_id, gram, new.stage, coalesce(new.assigned_to, ''), 1 FROM (
      WITH RECURSIVE pos(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM pos WHERE i < length(new.search_text))
      SELECT substr(new.search_text, i, 1) AS gram FROM pos UNION SELECT substr(new.search_text, i, 2) FROM pos WHERE i < length(new.search_text))
    WHERE instr(gram, char(10)) = 0
    ON CONFLICT (tenant_id, gram, stage, assignee) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER deal_grams_delete AFTER DELETE ON deals BEGIN
  UPDATE deal_gram_counts SET n = n - 1
   WHERE tenant_id = old.tenant_id AND stage = old.stage AND assignee = coalesce(old.assigned_to, '') AND gram IN (
      WITH RECURSIVE pos(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM pos WHERE i < length(old.search_text))
      SELECT substr(old.search_text, i, 1) FROM pos UNION SELECT substr(old.search_text, i, 2) FROM pos WHERE i < length(old.search_text));
END;
-- Only when what it counts changed: an edit of the value or the close date writes no counter.
CREATE TRIGGER deal_grams_update AFTER UPDATE OF search_text, stage, assigned_to ON deals
  WHEN old.search_text IS NOT new.search_text OR old.stage IS NOT new.stage OR old.assigned_to IS NOT new.assigned_to BEGIN
  UPDATE deal_gram_counts SET n = n - 1
   WHERE tenant_id = old.tenant_id AND stage = old.stage AND assignee = coalesce(old.assigned_to, '') AND gram IN (
      WITH RECURSIVE pos(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM pos WHERE i < length(old.search_text))
      SELECT substr(old.search_text, i, 1) FROM pos UNION SELECT substr(old.search_text, i, 2) FROM pos WHERE i < length(old.search_text));
  INSERT INTO deal_gram_counts (tenant_id, gram, stage, assignee, n)
    SELECT new.tenant_id, gram, new.stage, coalesce(new.assigned_to, ''), 1 FROM (
      WITH RECURSIVE pos(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM pos WHERE i < length(new.search_text))
      SELECT substr(new.search_text, i, 1) AS gram FROM pos UNION SELECT substr(new.search_text, i, 2) FROM pos WHERE i < length(new.search_text))
    WHERE instr(gram, char(10)) = 0
    ON CONFLICT (tenant_id, gram, stage, assignee) DO UPDATE SET n = n + 1;
END;

-- ---- version 12: deal_gram_counts also counts 3-character pieces (issue 15) ----

-- A 3-letter search's exact total, with any stage and assignee filter, becomes a sum of a few rows
-- instead of a count over the trigram index's matches (every match read: 20-45 ms at 1M deals for
-- a common fragment), and tells the page how dense the matches are within the filters. The
-- triggers now write each distinct 1-, 2- and 3-character piece of a deal's text once.

DROP TRIGGER deal_grams_insert;
DROP TRIGGER deal_grams_delete;
DROP TRIGGER deal_grams_update;
CREATE TRIGGER deal_grams_insert AFTER INSERT ON deals BEGIN
  INSERT INTO deal_gram_counts (tenant_id, gram, stage, assignee, n)
    SELECT new.tenant_id, gram, new.stage, coalesce(new.assigned_to, ''), 1 FROM (
      WITH RECURSIVE pos(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM pos WHERE i < length(new.search_text))
      SELECT substr(new.search_text, i, 1) AS gram FROM pos
      UNION SELECT substr(new.search_text, i, 2) FROM pos WHERE i < length(new.search_text)
      UNION SELECT substr(new.search_text, i, 3) FROM pos WHERE i < length(new.search_text) - 1)
    WHERE instr(gram, char(10)) = 0
    ON CONFLICT (tenant_id, gram, stage, assignee) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER deal_grams_delete AFTER DELETE ON deals BEGIN
  UPDATE deal_gram_counts SET n = n - 1
   WHERE tenant_id = old.tenant_id AND stage = old.stage AND assignee = coalesce(old.assigned_to, '') AND gram IN (
      WITH RECURSIVE pos(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM pos WHERE i < length(old.search_text))
      SELECT substr(old.search_text, i, 1) FROM pos
      UNION SELECT substr(old.search_text, i, 2) FROM pos WHERE i < length(old.search_text)
      UNION SELECT substr(old.search_text, i, 3) FROM pos WHERE i < length(old.search_text) - 1);
END;
-- Only when what it counts changed: an edit of the value or the close date writes no counter.
CREATE TRIGGER deal_grams_update AFTER UPDATE OF search_text, stage, assigned_to ON deals
  WHEN old.search_text IS NOT new.search_text OR old.stage IS NOT new.stage OR old.assigned_to IS NOT new.assigned_to BEGIN
  UPDATE deal_gram_counts SET n = n - 1
   WHERE tenant_id = old.tenant_id AND stage = old.stage AND assignee = coalesce(old.assigned_to, '') AND gram IN (
      WITH RECURSIVE pos(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM pos WHERE i < length(old.search_text))
      SELECT substr(old.search_text, i, 1) FROM pos
      UNION SELECT substr(old.search_text, i, 2) FROM pos WHERE i < length(old.search_text)
      UNION SELECT substr(old.search_text, i, 3) FROM pos WHERE i < length(old.search_text) - 1);
  INSERT INTO deal_gram_counts (tenant_id, gram, stage, assignee, n)
    SELECT new.tenant_id, gram, new.stage, coalesce(new.assigned_to, ''), 1 FROM (
      WITH RECURSIVE pos(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM pos WHERE i < length(new.search_text))
      SELECT substr(new.search_text, i, 1) AS gram FROM pos
      UNION SELECT substr(new.search_text, i, 2) FROM pos WHERE i < length(new.search_text)
      UNION SELECT substr(new.search_text, i, 3) FROM pos WHERE i < length(new.search_text) - 1)
    WHERE instr(gram, char(10)) = 0
    ON CONFLICT (tenant_id, gram, stage, assignee) DO UPDATE SET n = n + 1;
END;

-- ---- version 13: where along each text order a 3-character piece occurs (issue 15) ----

-- A common 3-letter term can cluster along a text order ("ser" only in "Managed services" titles,
-- 56 % of the way down title order): a walk of the order's index from its start crosses hundreds
-- of thousands of entries before the first match, and sorting looks up every match (125k seeks,
-- 80-130 ms at 1M deals). deal_key_grams counts, for each text sort (t: title_key, a: account_key,
-- c: contact_key) and each bucket of it (the key's first 6 characters), how many deals hold each
-- distinct 3-character piece of their search text, and under gram '' how many deals the bucket
-- holds. The search walks only the buckets where its term occurs (n > 0), in order. Deals without
-- a contact (contact_key NULL) are not counted under 'c'.

-- Existing deals are counted after this file, in the same transaction, by recountDealKeyGrams
-- (src/db/deal-key-grams.ts): one read of the deals and sorted inserts.

CREATE TABLE deal_key_grams (
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  ord       TEXT NOT NULL,
  gram      TEXT NOT NULL,
  bucket    TEXT NOT NULL,
  n         INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, ord, gram, bucket)
) STRICT, WITHOUT ROWID;

CREATE TRIGGER deal_key_grams_insert AFTER INSERT ON deals BEGIN
  INSERT INTO deal_key_grams (tenant_id, ord, gram, bucket, n)
    SELECT new.tenant_id, k.ord, g.gram, k.bucket, 1 FROM (
      SELECT 't' AS ord, substr(new.title_key, 1, 6) AS bucket
      UNION ALL SELECT 'a', substr(new.account_key, 1, 6)
      UNION ALL SELECT 'c', substr(new.contact_key, 1, 6)) k, (
      WITH RECURSIVE pos(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM pos WHERE i < length(new.search_text) - 2)
      SELECT '' AS gram UNION SELECT substr(new.search_text, i, 3) FROM pos) g
    WHERE k.bucket IS NOT NULL AND (g.gram = '' OR (length(g.gram) = 3 AND instr(g.gram, char(10)) = 0))
    ON CONFLICT (tenant_id, ord, gram, bucket) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER deal_key_grams_delete AFTER DELETE ON deals BEGIN
  -- One statement a sort: with the three ORed, SQLite reads every row of the tenant.
  UPDATE deal_key_grams SET n = n - 1
   WHERE tenant_id = old.tenant_id AND ord = 't' AND bucket = substr(old.title_key, 1, 6) AND gram IN (
      WITH RECURSIVE pos(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM pos WHERE i < length(old.search_text) - 2)
      SELECT '' UNION SELECT substr(old.search_text, i, 3) FROM pos);
  UPDATE deal_key_grams SET n = n - 1
   WHERE tenant_id = old.tenant_id AND ord = 'a' AND bucket = substr(old.account_key, 1, 6) AND gram IN (
      WITH RECURSIVE pos(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM pos WHERE i < length(old.search_text) - 2)
      SELECT '' UNION SELECT substr(old.search_text, i, 3) FROM pos);
  UPDATE deal_key_grams SET n = n - 1
   WHERE tenant_id = old.tenant_id AND ord = 'c' AND bucket = substr(old.contact_key, 1, 6) AND gram IN (
      WITH RECURSIVE pos(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM pos WHERE i < length(old.search_text) - 2)
      SELECT '' UNION SELECT substr(old.search_text, i, 3) FROM pos);
END;
-- Only when what it counts changed: an edit of the stage, the assignee or the value writes none.
CREATE TRIGGER deal_key_grams_update AFTER UPDATE OF search_text, title_key, account_key, contact_key ON deals
  WHEN old.search_text IS NOT new.search_text OR old.title_key IS NOT new.title_key OR old.account_key IS NOT new.account_key OR old.contact_key IS NOT new.contact_key BEGIN
  -- One statement a sort: with the three ORed, SQLite reads every row of the tenant.
  UPDATE deal_key_grams SET n = n - 1
   WHERE tenant_id = old.tenant_id AND ord = 't' AND bucket = substr(old.title_key, 1, 6) AND gram IN (
      WITH RECURSIVE pos(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM pos WHERE i < length(old.search_text) - 2)
      SELECT '' UNION SELECT substr(old.search_text, i, 3) FROM pos);
  UPDATE deal_key_grams SET n = n - 1
   WHERE tenant_id = old.tenant_id AND ord = 'a' AND bucket = substr(old.account_key, 1, 6) AND gram IN (
      WITH RECURSIVE pos(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM pos WHERE i < length(old.search_text) - 2)
      SELECT '' UNION SELECT substr(old.search_text, i, 3) FROM pos);
  UPDATE deal_key_grams SET n = n - 1
   WHERE tenant_id = old.tenant_id AND ord = 'c' AND bucket = substr(old.contact_key, 1, 6) AND gram IN (
      WITH RECURSIVE pos(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM pos WHERE i < length(old.search_text) - 2)
      SELECT '' UNION SELECT substr(old.search_text, i, 3) FROM pos);
  INSERT INTO deal_key_grams (tenant_id, ord, gram, bucket, n)
    SELECT new.tenant_id, k.ord, g.gram, k.bucket, 1 FROM (
      SELECT 't' AS ord, substr(new.title_key, 1, 6) AS bucket
      UNION ALL SELECT 'a', substr(new.account_key, 1, 6)
      UNION ALL SELECT 'c', substr(new.contact_key, 1, 6)) k, (
      WITH RECURSIVE pos(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM pos WHERE i < length(new.search_text) - 2)
      SELECT '' AS gram UNION SELECT substr(new.search_text, i, 3) FROM pos) g
    WHERE k.bucket IS NOT NULL AND (g.gram = '' OR (length(g.gram) = 3 AND instr(g.gram, char(10)) = 0))
    ON CONFLICT (tenant_id, ord, gram, bucket) DO UPDATE SET n = n + 1;
END;

-- Each order's index also holds the stage and the assignee (as deals_by_created always did): a
-- search walking an order tests the list's filters on the index entry and reads the row (for its
-- search text) only for entries within them. "ati" within one stage among the unassigned, 9,000
-- entries of title order walked: 40-74 ms reading every row, 7-10 ms so.
DROP INDEX deals_by_updated;
CREATE INDEX deals_by_updated ON deals (tenant_id, updated_at, id, stage, assigned_to);
DROP INDEX deals_by_title;
CREATE INDEX deals_by_title ON deals (tenant_id, title_key, id, stage, assigned_to);
DROP INDEX deals_by_value;
CREATE INDEX deals_by_value ON deals (tenant_id, value_cents, id, stage, assigned_to);
DROP INDEX deals_by_stage;
CREATE INDEX deals_by_stage ON deals (tenant_id, stage, id, stage, assigned_to);
DROP INDEX deals_by_account;
CREATE INDEX deals_by_account ON deals (tenant_id, account_key, id, stage, assigned_to);
DROP INDEX deals_by_close_asc;
CREATE INDEX deals_by_close_asc ON deals (tenant_id, close_date IS NULL, close_date, id, stage, assigned_to);
DROP INDEX deals_by_close_desc;
CREATE INDEX deals_by_close_desc ON deals (tenant_id, close_date IS NULL, close_date DESC, id DESC, stage, assigned_to);
DROP INDEX deals_by_probability_asc;
CREATE INDEX deals_by_probability_asc ON deals (tenant_id, probability IS NULL, probability, id, stage, assigned_to);
DROP INDEX deals_by_probability_desc;
CREATE INDEX deals_by_probability_desc ON deals (tenant_id, probability IS NULL, probability DESC, id DESC, stage, assigned_to);
DROP INDEX deals_by_contact_asc;
CREATE INDEX deals_by_contact_asc ON deals (tenant_id, contact_key IS NULL, contact_key, id, stage, assigned_to);
DROP INDEX deals_by_contact_desc;
CREATE INDEX deals_by_contact_desc ON deals (tenant_id, contact_key IS NULL, contact_key DESC, id DESC, stage, assigned_to);
DROP INDEX deals_by_assignee_asc;
CREATE INDEX deals_by_assignee_asc ON deals (tenant_id, assignee_key IS NULL, assignee_key, id, stage, assigned_to);
DROP INDEX deals_by_assignee_desc;
CREATE INDEX deals_by_assignee_desc ON deals (tenant_id, assignee_key IS NULL, assignee_key DESC, id DESC, stage, assigned_to);

-- ---- version 14: how an address was verified (issue 29.1) ----

-- When an identity provider of the user's organization vouched for the address (the user joined
-- through it); NULL: none did. It counts inside that organization only (its admin chooses the
-- provider); `email_verified_at` is the suite's own mailed proof alone, what sign-in, magic links
-- and resets without a tenant go by.
ALTER TABLE users ADD COLUMN provider_verified_at INTEGER;
-- ---- version 15: the search counters follow deal writes through a pending table (issues 27, 28) ----

-- A deal write no longer updates deal_gram_counts and deal_key_grams itself (about 250 counter rows
-- spread over two large tables: 0.6-1.9 MB of pages and 2-8 ms of CPU a write at 1M deals). Its
-- triggers append one row here per deal state that leaves (-1) or enters (+1) the counters: the
-- deal's stage, assignee, search text and text sort keys. A background step (src/db/search-fold.ts)
-- folds the oldest rows of an organization into both counter tables and deletes them in one short
-- transaction; readers add the rows still pending to what the counters say, so totals stay exact
-- at every moment, and a killed process leaves either the rows or their fold, never half.
CREATE TABLE deal_search_pending (
  tenant_id    TEXT NOT NULL,
  id           INTEGER NOT NULL,
  sign         INTEGER NOT NULL,
  stage        TEXT NOT NULL,
  assigned_to  TEXT,
  search_text  TEXT NOT NULL,
  title_key    TEXT NOT NULL,
  account_key  TEXT NOT NULL,
  contact_key  TEXT,
  PRIMARY KEY (tenant_id, id)
) STRICT, WITHOUT ROWID;

DROP TRIGGER deal_grams_insert;
DROP TRIGGER deal_grams_delete;
DROP TRIGGER deal_grams_update;
DROP TRIGGER deal_key_grams_insert;
DROP TRIGGER deal_key_grams_delete;
DROP TRIGGER deal_key_grams_update;

CREATE TRIGGER deal_search_pending_insert AFTER INSERT ON deals BEGIN
  INSERT INTO deal_search_pending (tenant_id, id, sign, stage, assigned_to, search_text, title_key, account_key, contact_key)
    VALUES (new.tenant_id, (SELECT coalesce(max(id), 0) + 1 FROM deal_search_pending WHERE tenant_id = new.tenant_id), 1,
      new.stage, new.assigned_to, new.search_text, new.title_key, new.account_key, new.contact_key);
END;
CREATE TRIGGER deal_search_pending_delete AFTER DELETE ON deals BEGIN
  INSERT INTO deal_search_pending (tenant_id, id, sign, stage, assigned_to, search_text, title_key, account_key, contact_key)
    VALUES (old.tenant_id, (SELECT coalesce(max(id), 0) + 1 FROM deal_search_pending WHERE tenant_id = old.tenant_id), -1,
      old.stage, old.assigned_to, old.search_text, old.title_key, old.account_key, old.contact_key);
END;
-- Only when what the counters count changed: an edit of the value or the close date writes nothing here.
CREATE TRIGGER deal_search_pending_update AFTER UPDATE OF search_text, stage, assigned_to, title_key, account_key, contact_key ON deals
  WHEN old.search_text IS NOT new.search_text OR old.stage IS NOT new.stage OR old.assigned_to IS NOT new.assigned_to
    OR old.title_key IS NOT new.title_key OR old.account_key IS NOT new.account_key OR old.contact_key IS NOT new.contact_key BEGIN
  INSERT INTO deal_search_pending (tenant_id, id, sign, stage, assigned_to, search_text, title_key, account_key, contact_key)
    VALUES (old.tenant_id, (SELECT coalesce(max(id), 0) + 1 FROM deal_search_pending WHERE tenant_id = old.tenant_id), -1,
      old.stage, old.assigned_to, old.search_text, old.title_key, old.account_key, old.contact_key);
  INSERT INTO deal_search_pending (tenant_id, id, sign, stage, assigned_to, search_text, title_key, account_key, contact_key)
    VALUES (new.tenant_id, (SELECT coalesce(max(id), 0) + 1 FROM deal_search_pending WHERE tenant_id = new.tenant_id), 1,
      new.stage, new.assigned_to, new.search_text, new.title_key, new.account_key, new.contact_key);
END;

-- ---- version 16: the outbox keeps links sealed (issue 29) ----

-- A pending mail's link is a live credential; the store seals it (and the bodies that carry it)
-- under a subkey of the key file's encryption key (src/mail/outbox-seal.ts), so a copy of the
-- file holds no usable link. The rows an earlier release left clear are sealed before this step
-- runs (and before the `.v<N>.bak` copy), by the code that holds the key. From here on, a link
-- that is not sealed is refused, whoever writes it: an older release writing clear links into
-- this file (it refuses to open it anyway: the version is newer than it knows) or a code path
-- that forgot to seal.
CREATE TRIGGER mail_outbox_link_sealed_insert BEFORE INSERT ON mail_outbox
  WHEN new.link IS NOT NULL AND new.link NOT GLOB 'v1.*'
BEGIN
  SELECT RAISE(ABORT, 'mail_outbox.link must be sealed');
END;
CREATE TRIGGER mail_outbox_link_sealed_update BEFORE UPDATE OF link ON mail_outbox
  WHEN new.link IS NOT NULL AND new.link NOT GLOB 'v1.*'
BEGIN
  SELECT RAISE(ABORT, 'mail_outbox.link must be sealed');
END;

-- ---- version 17: Idempotency-Key on creates (issue 28 item 6) ----

-- A create sent with an Idempotency-Key header: per organization and user, kept 24 hours. `state`
-- is 'running' while the first request works (`claim` names it), 'created' once the record is
-- committed (in the create's own transaction, with `resource_id`), 'done' once its answer
-- (`status`, `answer`: the JSON body) is saved; a retry with the same `request_hash` (SHA-256 of
-- method, path and canonical body) gets that answer.
CREATE TABLE idempotency_keys (
  tenant_id    TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  user_id      TEXT NOT NULL,
  key          TEXT NOT NULL,
  request_hash TEXT NOT NULL,
  claim        TEXT NOT NULL,
  state        TEXT NOT NULL CHECK (state IN ('running', 'created', 'done')),
  resource_id  TEXT,
  status       INTEGER,
  answer       TEXT,
  created_at   INTEGER NOT NULL,
  expires_at   INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, user_id, key)
) STRICT, WITHOUT ROWID;
CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys (tenant_id, expires_at);

-- ---- version 18: imports are background jobs; records carry an external id (issue 27) ----

-- The id a record has in the system it came from: an import row naming it updates that record
-- instead of adding a second. Unique within the organization when present.
ALTER TABLE accounts ADD COLUMN external_id TEXT;
ALTER TABLE contacts ADD COLUMN external_id TEXT;
ALTER TABLE deals ADD COLUMN external_id TEXT;
CREATE UNIQUE INDEX accounts_by_external_id ON accounts (tenant_id, external_id) WHERE external_id IS NOT NULL;
CREATE UNIQUE INDEX contacts_by_external_id ON contacts (tenant_id, external_id) WHERE external_id IS NOT NULL;
CREATE UNIQUE INDEX deals_by_external_id ON deals (tenant_id, external_id) WHERE external_id IS NOT NULL;

-- An import written in bounded batches. status: running, succeeded, failed. A running job's
-- lease is pushed on by every batch; one whose lease ran out (its server died) is rolled back
-- from crm_job_undo. One running job per organization (the partial unique index).
CREATE TABLE crm_jobs (
  tenant_id   TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  id          TEXT NOT NULL,
  kind        TEXT NOT NULL,
  status      TEXT NOT NULL,
  user_id     TEXT,
  total       INTEGER NOT NULL,
  done        INTEGER NOT NULL DEFAULT 0,
  added       INTEGER NOT NULL DEFAULT 0,
  updated     INTEGER NOT NULL DEFAULT 0,
  unchanged   INTEGER NOT NULL DEFAULT 0,
  error_count INTEGER NOT NULL DEFAULT 0,
  errors      TEXT NOT NULL DEFAULT '[]',
  message     TEXT,
  created_at  INTEGER NOT NULL,
  finished_at INTEGER,
  lease_until INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, id)
) STRICT, WITHOUT ROWID;
CREATE INDEX crm_jobs_by_created ON crm_jobs (tenant_id, created_at, id);
CREATE UNIQUE INDEX crm_jobs_one_running ON crm_jobs (tenant_id) WHERE status = 'running';

-- What each batch of a running job changed, in order: `before` is the record's columns before
-- the job updated it (JSON), NULL for a record the job added. A rollback undoes the entries from
-- the last; a finished job's entries are deleted.
CREATE TABLE crm_job_undo (
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  job_id    TEXT NOT NULL,
  n         INTEGER NOT NULL,
  entity    TEXT NOT NULL,
  record_id TEXT NOT NULL,
  before    TEXT,
  PRIMARY KEY (tenant_id, job_id, n)
) STRICT, WITHOUT ROWID;

-- ---- version 19: the new-device sign-in mail and "this wasn't me" (issue 33.2) ----

-- Where a user has signed in from, per organization: a browser's device cookie (kind 'cookie':
-- `device_hash` is SHA-256 of the cookie's secret; known from then on), or, for a client that sent
-- no device cookie and is not a browser, its IP address and user agent (kind 'source': SHA-256 of
-- both; known for 30 days from `noticed_at`, when it was last mailed about). Not tied to a
-- session: signing out keeps a device known.
CREATE TABLE known_devices (
  tenant_id    TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  user_id      TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  device_hash  TEXT NOT NULL,
  kind         TEXT NOT NULL CHECK (kind IN ('cookie', 'source')),
  noticed_at   INTEGER NOT NULL,
  last_seen_at INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, user_id, device_hash)
) STRICT, WITHOUT ROWID;
CREATE INDEX known_devices_by_last_seen ON known_devices (last_seen_at);

-- The "this wasn't me" link of a new-device mail: SHA-256 of its token, the session that sign-in
-- opened (its id and start). Used once, within 7 days: it ends that session and every later one.
CREATE TABLE sign_in_notices (
  tenant_id          TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  token_hash         TEXT NOT NULL,
  user_id            TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  session_id         TEXT NOT NULL,
  session_created_at INTEGER NOT NULL,
  created_at         INTEGER NOT NULL,
  expires_at         INTEGER NOT NULL,
  used_at            INTEGER,
  PRIMARY KEY (tenant_id, token_hash)
) STRICT, WITHOUT ROWID;
CREATE INDEX sign_in_notices_by_expiry ON sign_in_notices (expires_at);

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

-- ---- version 21: the organization's sign-in policy (issue 33) ----

-- Two switches an admin turns on: every member must hold a passkey or 2FA (`require_passkey_or_2fa`), and
-- admins must hold a passkey (`require_passkey_for_admins`). A member who does not comply may only
-- set one up until they do (the auth guard reads both with the session).
ALTER TABLE tenants ADD COLUMN require_passkey_or_2fa INTEGER NOT NULL DEFAULT 0 CHECK (require_passkey_or_2fa IN (0, 1));
ALTER TABLE tenants ADD COLUMN require_passkey_for_admins INTEGER NOT NULL DEFAULT 0 CHECK (require_passkey_for_admins IN (0, 1));

-- ---- version 22: the organization's event log (issue 31) ----

-- One ordered log per organization: each change of its CRM and team writes its event in the
-- change's own transaction. `seq` orders the log (the API's event id is seq, zero-padded); the
-- organization's counter row hands it out, so numbers never go back even once old events are
-- swept. `data` is JSON and never holds a password, token, code or link. Swept after
-- SUITE_EVENTS_RETENTION (30 days) through events_by_time.
CREATE TABLE events (
  tenant_id  TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  seq        INTEGER NOT NULL,
  type       TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  actor_type TEXT NOT NULL CHECK (actor_type IN ('user', 'system')),
  actor_id   TEXT,
  data       TEXT NOT NULL,
  PRIMARY KEY (tenant_id, seq)
) STRICT, WITHOUT ROWID;
CREATE INDEX events_by_time ON events (tenant_id, created_at);
CREATE TABLE event_counters (
  tenant_id TEXT PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
  last_seq  INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

-- ---- version 23: a deal's activity timeline and notes (issue 32) ----

-- When the deal entered its current stage. NULL on deals written before this version: read as
-- updated_at, and set to it by the next write that does not change the stage (no backfill: an
-- UPDATE of every deal would hold the writer for seconds at a million deals).
ALTER TABLE deals ADD COLUMN stage_changed_at INTEGER;

-- What happened to a deal, newest first by `n` (1, 2, ... per deal, taken in the writing
-- transaction). Written in the same transaction as the change; removed with the deal (trigger below).
-- `data` is the entry's JSON; a note's entry has the note's id as its id and the note's text is
-- read from deal_notes, so an edited note shows its current text.
CREATE TABLE deal_activities (
  tenant_id  TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  deal_id    TEXT NOT NULL,
  n          INTEGER NOT NULL,
  id         TEXT NOT NULL,
  type       TEXT NOT NULL,
  actor_id   TEXT,
  created_at INTEGER NOT NULL,
  data       TEXT NOT NULL,
  PRIMARY KEY (tenant_id, deal_id, n)
) STRICT, WITHOUT ROWID;

-- Notes on a deal: plain text, changed or deleted by their author or an admin.
CREATE TABLE deal_notes (
  tenant_id  TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  id         TEXT NOT NULL,
  deal_id    TEXT NOT NULL,
  author_id  TEXT NOT NULL,
  body       TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, id)
) STRICT, WITHOUT ROWID;
CREATE INDEX deal_notes_by_deal ON deal_notes (tenant_id, deal_id);

-- Kept as long as the deal exists, whichever path deletes it (the API, an import's undo).
CREATE TRIGGER deal_activities_with_deal AFTER DELETE ON deals BEGIN
  DELETE FROM deal_activities WHERE tenant_id = old.tenant_id AND deal_id = old.id;
  DELETE FROM deal_notes WHERE tenant_id = old.tenant_id AND deal_id = old.id;
END;

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

-- Operators' backup codes: one-time codes for the sign-in's code step; only the keyed hash of
-- each (HMAC under the server key, of operator id : code) is kept, as the users' are.
CREATE TABLE operator_backup_codes (
  code_hash   TEXT PRIMARY KEY,
  operator_id TEXT NOT NULL REFERENCES operators(id) ON DELETE CASCADE,
  used_at     INTEGER,
  created_at  INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX operator_backup_codes_by_operator ON operator_backup_codes (operator_id);

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

-- ---- version 25: a nullable sort's one index serves both directions (issues 27, 28) ----

-- Every deal create and delete wrote each of the deal's 20 indexes (a create 93 pages, 1.8 ms of
-- CPU at 1M deals on a freshly seeded file, 4-5 pages for each index whose full leaf it split).
-- The four nullable sorts (close date, probability, contact, assignee) had an ascending and a
-- descending index so that their deals without a key come last both ways; the list now reads a
-- descending page by walking the ascending index backwards, over the keyed entries and then over
-- the keyless ones (src/stores/sqlite/deals-list-request.ts), and the descending ones go.
DROP INDEX deals_by_close_desc;
DROP INDEX deals_by_probability_desc;
DROP INDEX deals_by_contact_desc;
DROP INDEX deals_by_assignee_desc;

-- ---- version 26: the deal board's sums (issue 32) ----

-- Deal counts and value sums by tenant, assignee ('' = unassigned), stage and currency, so that
-- the board's column heads without a search (GET /crm/deals/summary) add up a few hundred rows
-- instead of every deal. Kept by triggers, as deal_counts is: no write path can forget them.
CREATE TABLE deal_sums (
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  assignee  TEXT NOT NULL,
  stage     TEXT NOT NULL,
  currency  TEXT NOT NULL,
  n         INTEGER NOT NULL,
  cents     INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, assignee, stage, currency)
) STRICT, WITHOUT ROWID;

CREATE TRIGGER deal_sums_insert AFTER INSERT ON deals BEGIN
  INSERT INTO deal_sums (tenant_id, assignee, stage, currency, n, cents) VALUES (new.tenant_id, coalesce(new.assigned_to, ''), new.stage, new.currency, 1, new.value_cents)
    ON CONFLICT (tenant_id, assignee, stage, currency) DO UPDATE SET n = n + 1, cents = cents + excluded.cents;
END;
CREATE TRIGGER deal_sums_delete AFTER DELETE ON deals BEGIN
  UPDATE deal_sums SET n = n - 1, cents = cents - old.value_cents
   WHERE tenant_id = old.tenant_id AND assignee = coalesce(old.assigned_to, '') AND stage = old.stage AND currency = old.currency;
END;
CREATE TRIGGER deal_sums_update AFTER UPDATE OF stage, assigned_to, value_cents, currency ON deals BEGIN
  UPDATE deal_sums SET n = n - 1, cents = cents - old.value_cents
   WHERE tenant_id = old.tenant_id AND assignee = coalesce(old.assigned_to, '') AND stage = old.stage AND currency = old.currency;
  INSERT INTO deal_sums (tenant_id, assignee, stage, currency, n, cents) VALUES (new.tenant_id, coalesce(new.assigned_to, ''), new.stage, new.currency, 1, new.value_cents)
    ON CONFLICT (tenant_id, assignee, stage, currency) DO UPDATE SET n = n + 1, cents = cents + excluded.cents;
END;

-- ---- version 27: saved views of the deal list (issue 32) ----

-- A member's view of the deal list: the list's parameters (`query`, JSON) and how it shows them
-- (`kind` table or board, `columns` JSON or NULL). A personal view is its owner's alone; a shared
-- one (shared = 1) every member sees and admins write.
CREATE TABLE saved_views (
  tenant_id  TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  id         TEXT NOT NULL,
  owner_id   TEXT NOT NULL,
  name       TEXT NOT NULL,
  kind       TEXT NOT NULL,
  query      TEXT NOT NULL,
  columns    TEXT,
  shared     INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, id)
) STRICT, WITHOUT ROWID;
CREATE INDEX saved_views_by_owner ON saved_views (tenant_id, owner_id);
CREATE INDEX saved_views_shared ON saved_views (tenant_id, shared);

-- Each member's default view (theirs even when the view is shared): at most one per member.
CREATE TABLE saved_view_defaults (
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  user_id   TEXT NOT NULL,
  view_id   TEXT NOT NULL,
  PRIMARY KEY (tenant_id, user_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX saved_view_defaults_by_view ON saved_view_defaults (tenant_id, view_id);

-- ---- version 28: signed webhooks and their deliveries (issue 31) ----
-- An organization's webhook endpoint: where its events are POSTed, signed by the Standard
-- Webhooks scheme. `events` is JSON: event types, or ["*"] for every one. The secret is sealed
-- (AES-GCM under the server key, bound to the endpoint's id); after a rotation the previous one
-- keeps signing alongside until `previous_secret_until`. `disabled_reason`: why the server
-- disabled it (gone: the receiver answered 410; failing: three days without a 2xx).
CREATE TABLE webhook_endpoints (
  tenant_id              TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  id                     TEXT NOT NULL,
  url                    TEXT NOT NULL,
  description            TEXT,
  events                 TEXT NOT NULL,
  enabled                INTEGER NOT NULL,
  disabled_reason        TEXT,
  secret_sealed          TEXT NOT NULL,
  previous_secret_sealed TEXT,
  previous_secret_until  INTEGER,
  created_at             INTEGER NOT NULL,
  updated_at             INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, id)
) STRICT, WITHOUT ROWID;

-- One delivery per (event, endpoint), written in the event's transaction; a test event carries
-- its body in `payload` (it is not in the log). A pending delivery is due at `next_attempt_at`;
-- a sender leases it by moving that time past its timeout (a crashed sender's lease runs out and
-- the delivery is due again). `window_start`: retries go on for three days from it (a manual
-- retry starts a new window). `last_error`: a fixed reason, never the receiver's text.
CREATE TABLE webhook_deliveries (
  tenant_id        TEXT NOT NULL,
  id               TEXT NOT NULL,
  endpoint_id      TEXT NOT NULL,
  event_seq        INTEGER,
  event_type       TEXT NOT NULL,
  payload          TEXT,
  status           TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts         INTEGER NOT NULL,
  next_attempt_at  INTEGER NOT NULL,
  window_start     INTEGER NOT NULL,
  last_status      INTEGER,
  last_duration_ms INTEGER,
  last_error       TEXT,
  created_at       INTEGER NOT NULL,
  updated_at       INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, endpoint_id) REFERENCES webhook_endpoints (tenant_id, id) ON DELETE CASCADE
) STRICT, WITHOUT ROWID;
CREATE INDEX webhook_deliveries_by_endpoint ON webhook_deliveries (tenant_id, endpoint_id, created_at);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (tenant_id, next_attempt_at) WHERE status = 'pending';

-- ---- version 29: bulk changes of deals are jobs too, and can be undone (issue 32) ----
-- What a job was asked (JSON: a bulk change's action, its undo); NULL for imports. A bulk change
-- keeps its crm_job_undo entries for the ten minutes it may be undone.
ALTER TABLE crm_jobs ADD COLUMN detail TEXT;

-- The full-text index re-indexes a deal's whole text only when what it holds changes: the text, the
-- stage, or whether anybody is assigned (unassigned_token). A change from one assignee to another
-- (a bulk reassignment) left every token as it was, yet re-indexed the whole text (689 against 764 µs
-- a deal in `bench bulk` with BENCH_BULK_SET=assignee at 100k deals, load 5–8).
DROP TRIGGER deals_fts_update;
CREATE TRIGGER deals_fts_update AFTER UPDATE OF search_text, stage, assigned_to ON deals
  WHEN old.search_text IS NOT new.search_text OR old.stage IS NOT new.stage OR (old.assigned_to IS NULL) IS NOT (new.assigned_to IS NULL)
BEGIN
  INSERT INTO deals_fts (deals_fts, rowid, search_text, stage_token, unassigned_token) VALUES ('delete', old.seq, old.search_text, old.stage_token, old.unassigned_token);
  INSERT INTO deals_fts (rowid, search_text, stage_token, unassigned_token) VALUES (new.seq, new.search_text, new.stage_token, new.unassigned_token);
END;

-- ---- version 31: an account's and a contact's activity timeline (issue 32) ----

-- What happened to an account, to a contact, newest first by `n` (1, 2, ... per record, taken in
-- the writing transaction), as a deal's (deal_activities): written in the same transaction as
-- the change; removed with the record (triggers below: a foreign key's cascade would look the
-- rows up by the record id alone, outside any tenant-first index).
CREATE TABLE account_activities (
  tenant_id  TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  account_id TEXT NOT NULL,
  n          INTEGER NOT NULL,
  id         TEXT NOT NULL,
  type       TEXT NOT NULL,
  actor_id   TEXT,
  created_at INTEGER NOT NULL,
  data       TEXT NOT NULL,
  PRIMARY KEY (tenant_id, account_id, n)
) STRICT, WITHOUT ROWID;

CREATE TABLE contact_activities (
  tenant_id  TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  contact_id TEXT NOT NULL,
  n          INTEGER NOT NULL,
  id         TEXT NOT NULL,
  type       TEXT NOT NULL,
  actor_id   TEXT,
  created_at INTEGER NOT NULL,
  data       TEXT NOT NULL,
  PRIMARY KEY (tenant_id, contact_id, n)
) STRICT, WITHOUT ROWID;

CREATE TRIGGER account_activities_with_account AFTER DELETE ON accounts BEGIN
  DELETE FROM account_activities WHERE tenant_id = old.tenant_id AND account_id = old.id;
END;
CREATE TRIGGER contact_activities_with_contact AFTER DELETE ON contacts BEGIN
  DELETE FROM contact_activities WHERE tenant_id = old.tenant_id AND contact_id = old.id;
END;

-- ---- version 32: the deal search's full-text index merged in the background, never inside a deal write ----

-- The deal search's full-text index merges its segments in the background, never inside a deal
-- write (src/db/fts-merge.ts): FTS5's automerge is off, the server's upkeep runs `merge` steps of
-- about 10 ms while the writer is idle, and the crisis merge (a level of that many segments merged
-- whole in the transaction that adds the last) is only a backstop for a writer with no upkeep
-- beside it. At 16 (FTS5's default) it ran inside import batches: 190-307 ms of CPU in one batch
-- of 32 deals at 200k deals. usermerge is FTS5's default, written down: the `merge` steps merge a
-- level once it holds 4 segments, as the automerge did, so a search reads as many segments as before.
INSERT INTO deals_fts (deals_fts, rank) VALUES ('automerge', 0);
INSERT INTO deals_fts (deals_fts, rank) VALUES ('crisismerge', 64);
INSERT INTO deals_fts (deals_fts, rank) VALUES ('usermerge', 4);

-- ---- version 33: a deal's notes are found by the deal search (issue 32) ----

-- The newest 20,000 characters of the deal's notes, newest first, joined by line breaks
-- (src/db/deal-note-text.ts), kept by each note's create, edit and delete in its own transaction,
-- and a part of search_text: the search's index, counters and every page of the list read the
-- deal's one text, so a deal found by its title and by a note counts once. Deals with notes are
-- filled in by the migration's data step (JS: search_text is lower-cased the JS way).
ALTER TABLE deals ADD COLUMN note_text TEXT NOT NULL DEFAULT '';

-- A deal's notes newest first, for that text: read one at a time until the bound is reached.
DROP INDEX deal_notes_by_deal;
CREATE INDEX deal_notes_newest ON deal_notes (tenant_id, deal_id, created_at);

-- ---- version 34: the deal search's counters swept through in key order after a burst of writes (issues 27, 28, 32) ----

-- An organization with many pending rows (an import, a bulk change) has them folded by a sweep
-- (src/db/search-sweep.ts) instead of a few at a time: the rows up to upto_id are added up off the
-- writer, then written to deal_gram_counts and deal_key_grams in key order, in short steps that
-- each move a cursor (the last key written), then deleted. A reader adds a pending row up to
-- upto_id only where its counter's key is past the cursor (not swept yet), so totals stay exact at
-- every step; a killed process adds the same rows up again and goes on from the cursor.
CREATE TABLE deal_search_sweeps (
  tenant_id     TEXT PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
  upto_id       INTEGER NOT NULL,
  -- deal_gram_counts: 1 when every key is written; else the last key written ('' three times: none).
  grams_done    INTEGER NOT NULL DEFAULT 0,
  gram          TEXT NOT NULL DEFAULT '',
  gram_stage    TEXT NOT NULL DEFAULT '',
  gram_assignee TEXT NOT NULL DEFAULT '',
  -- deal_key_grams, the same way.
  keys_done     INTEGER NOT NULL DEFAULT 0,
  key_ord       TEXT NOT NULL DEFAULT '',
  key_gram      TEXT NOT NULL DEFAULT '',
  key_bucket    TEXT NOT NULL DEFAULT ''
) STRICT, WITHOUT ROWID;

-- ---- version 35: a process seeding an organization's deals beside the server holds the search counters' fold off it (issue 27) ----

-- `suite seed` beside a running server writes the organization's deals from another process; each
-- appends a pending counter row, and the server's fold swept them as they came, its steps reading
-- pages the seed's commits had just made cold (event-loop turns of 67-145 ms). While a row here is
-- current (until, ms since the epoch, renewed by the seed as it goes) the fold leaves that
-- organization's rows for one sweep after the seed, as it does for an organization's running job,
-- and the other organizations' few rows wait too (their steps read the same stale pages); a seed
-- that is killed stops renewing, and its hold runs out.
CREATE TABLE deal_search_holds (
  tenant_id TEXT PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
  until     INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
