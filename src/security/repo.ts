import type { Db } from "../db/database";

export interface AuditEntry {
  tenantId: string | null;
  userId: string | null;
  action: string;
  ip: string | null;
  userAgent: string | null;
  detail?: Record<string, unknown>;
}

export interface AuditRow {
  id: number;
  tenant_id: string | null;
  user_id: string | null;
  action: string;
  ip: string | null;
  user_agent: string | null;
  detail: string | null;
  created_at: number;
}

/** SQL of rate limits, audit and stored keys. Each statement is prepared once. */
export function createSecurityRepo(db: Db) {
  // One statement, so the count cannot be raced: the window restarts once it has passed.
  const hit = db.prepare<{ count: number; window_start: number }, [string, number, number]>(
    `INSERT INTO rate_limits (key, window_start, window_ms, count) VALUES (?1, ?2, ?3, 1)
     ON CONFLICT (key) DO UPDATE SET
       count        = CASE WHEN window_start + window_ms <= ?2 THEN 1 ELSE count + 1 END,
       window_start = CASE WHEN window_start + window_ms <= ?2 THEN ?2 ELSE window_start END,
       window_ms    = ?3
     RETURNING count, window_start`,
  );
  const peek = db.prepare<{ count: number; window_start: number; window_ms: number }, [string]>(
    "SELECT count, window_start, window_ms FROM rate_limits WHERE key = ?1",
  );
  const clear = db.prepare<never, [string]>("DELETE FROM rate_limits WHERE key = ?1");
  const sweep = db.prepare<never, [number]>("DELETE FROM rate_limits WHERE window_start + window_ms <= ?1");
  const insertAudit = db.prepare<never, [string | null, string | null, string, string | null, string | null, string | null, number]>(
    "INSERT INTO audit_log (tenant_id, user_id, action, ip, user_agent, detail, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
  );
  const auditForTenant = db.prepare<AuditRow, [string, number]>(
    "SELECT * FROM audit_log WHERE tenant_id = ?1 ORDER BY created_at DESC, id DESC LIMIT ?2",
  );
  const insertSetting = db.prepare<never, [string, string]>("INSERT OR IGNORE INTO settings (key, value) VALUES (?1, ?2)");
  const getSetting = db.prepare<{ value: string }, [string]>("SELECT value FROM settings WHERE key = ?1");

  const auditInTx = (e: AuditEntry, now: number) =>
    void insertAudit.run(e.tenantId, e.userId, e.action, e.ip, e.userAgent, e.detail ? JSON.stringify(e.detail) : null, now);

  return {
    hit: async (key: string, now: number, windowMs: number) => hit.get(key, now, windowMs)!,
    peek: async (key: string) => peek.get(key),
    clear: async (key: string) => void clear.run(key),
    sweep: async (now: number) => sweep.run(now).changes,
    audit: async (e: AuditEntry, now: number) => auditInTx(e, now),
    /** Audit rows are also written inside other features' transactions. */
    auditInTx,
    auditForTenant: async (tenantId: string, limit = 100) => auditForTenant.all(tenantId, limit),
    /** Keeps the first value ever stored under `key` (safe when two processes start at once). */
    settingOrCreate: (key: string, make: () => string): string => {
      insertSetting.run(key, make());
      return getSetting.get(key)!.value;
    },
  };
}

export type SecurityRepo = ReturnType<typeof createSecurityRepo>;
