-- ---- version 9: an operator can disable an organization (`suite tenant disable`) ----

-- When the organization was disabled; NULL: it is in service. A disabled one keeps its data and
-- answers 403 `tenant_disabled` to every request that names it or carries one of its sessions.
ALTER TABLE tenants ADD COLUMN disabled_at INTEGER;
