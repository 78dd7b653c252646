-- How an address was verified (schema version 5, issue 29.1). `provider_verified_at`: when an
-- identity provider of the user's organization vouched for the address (the user joined through
-- it). Its admin chooses that provider, its issuer and allowed domains, so it counts inside the
-- organization only; `email_verified_at` is from now on the suite's own mailed proof alone, what
-- sign-in, magic links and resets without a tenant go by.
ALTER TABLE users ADD COLUMN IF NOT EXISTS provider_verified_at bigint;

-- A provider join wrote the user and its identity at the same instant and set email_verified_at
-- then; later mailed proofs only fill an empty column.
UPDATE users SET provider_verified_at = email_verified_at, email_verified_at = NULL
 WHERE email_verified_at = created_at
   AND EXISTS (SELECT 1 FROM user_identities i WHERE i.tenant_id = users.tenant_id AND i.user_id = users.id AND i.created_at = users.created_at);
