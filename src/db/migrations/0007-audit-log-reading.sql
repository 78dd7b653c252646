-- Version 7: the audit log is read by admins, newest first and filtered (GET /api/v1/audit-log).
DROP INDEX IF EXISTS audit_by_tenant;
CREATE INDEX audit_by_tenant_time ON audit_log (tenant_id, created_at, id, user_id, action);
CREATE INDEX audit_by_tenant_user ON audit_log (tenant_id, user_id, created_at, id);
