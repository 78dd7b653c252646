-- ---- version 21: the organization's sign-in policy (issue 33) ----

-- Two switches an admin turns on: every member must hold a passkey or 2FA (`require_passkey_or_2fa`), and
-- admins must hold a passkey (`require_passkey_for_admins`). A member who does not comply may only
-- set one up until they do (the auth guard reads both with the session).
ALTER TABLE tenants ADD COLUMN require_passkey_or_2fa INTEGER NOT NULL DEFAULT 0 CHECK (require_passkey_or_2fa IN (0, 1));
ALTER TABLE tenants ADD COLUMN require_passkey_for_admins INTEGER NOT NULL DEFAULT 0 CHECK (require_passkey_for_admins IN (0, 1));
