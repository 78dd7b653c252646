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

-- Accounts made by accepting an invitation proved their address by opening its mail.
UPDATE users SET email_verified_at = (SELECT i.accepted_at FROM invitations i WHERE i.accepted_user_id = users.id)
 WHERE email_verified_at IS NULL AND id IN (SELECT accepted_user_id FROM invitations WHERE accepted_user_id IS NOT NULL);
