-- The organization's sign-in policy (schema version 11, issue 33): the same two switches as
-- SQLite's migration 21. Members must hold a passkey or 2FA; admins must hold a passkey.
-- 0 or 1, like every other flag of this schema (is_admin, is_won): the same values as SQLite's,
-- so that `suite copy-to-postgres` copies rows as they are.
ALTER TABLE tenants ADD COLUMN require_passkey_or_2fa integer NOT NULL DEFAULT 0 CHECK (require_passkey_or_2fa IN (0, 1));
ALTER TABLE tenants ADD COLUMN require_passkey_for_admins integer NOT NULL DEFAULT 0 CHECK (require_passkey_for_admins IN (0, 1));
