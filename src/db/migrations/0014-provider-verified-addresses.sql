-- ---- version 14: how an address was verified (issue 29.1) ----

-- When an identity provider of the user's organization vouched for the address (the user joined
-- through it); NULL: none did. Such a provider, its issuer and its allowed domains are chosen by
-- that organization's admin, so this counts inside the organization only. `email_verified_at` is
-- from now on the suite's own mailed proof alone (a verification, magic link, reset or invitation
-- link): what sign-in, magic links and resets without a tenant go by.
ALTER TABLE users ADD COLUMN provider_verified_at INTEGER;

-- Users who joined through a provider had `email_verified_at` set by the join: the join wrote the
-- user and its identity at the same instant, and later mailed proofs only fill an empty column, so
-- "verified when created, with an identity made then" tells them apart.
UPDATE users SET provider_verified_at = email_verified_at, email_verified_at = NULL
 WHERE email_verified_at = created_at
   AND EXISTS (SELECT 1 FROM user_identities i WHERE i.tenant_id = users.tenant_id AND i.user_id = users.id AND i.created_at = users.created_at);
