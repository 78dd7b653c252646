-- The organization's sign-in policy (schema version 11, issue 33): the same two switches as
-- SQLite's migration 21. Members must hold a passkey or 2FA; admins must hold a passkey.
ALTER TABLE tenants ADD COLUMN require_passkey_or_2fa boolean NOT NULL DEFAULT false;
ALTER TABLE tenants ADD COLUMN require_passkey_for_admins boolean NOT NULL DEFAULT false;
