import type { SecurityStore, AuditEntry, AuditRow } from "../../security/repo";
import { type Db, writeTx, writeTxAsync } from "../../db/database";
import type { StoredKeys } from "../../security/key-file";

/** SQL of rate limits, audit and stored keys. Each statement is prepared once. */
export function createSqliteSecurityStore(db: Db) {
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
  // The range lets the primary key find the rows; the substr comparison makes it exact.
  const clearPrefix = db.prepare<never, [string]>(
    "DELETE FROM rate_limits WHERE key >= ?1 AND key < ?1 || char(1114111) AND substr(key, 1, length(?1)) = ?1",
  );
  const anyReached = db.prepare<{ one: number }, [string, number, number]>(
    `SELECT 1 AS one FROM rate_limits WHERE key >= ?1 AND key < ?1 || char(1114111) AND substr(key, 1, length(?1)) = ?1
       AND count >= ?2 AND window_start + window_ms > ?3 LIMIT 1`,
  );
  const sweep = db.prepare<never, [number]>("DELETE FROM rate_limits WHERE window_start + window_ms <= ?1");
  const insertAudit = db.prepare<never, [string | null, string | null, string, string | null, string | null, string | null, number]>(
    "INSERT INTO audit_log (tenant_id, user_id, action, ip, user_agent, detail, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
  );
  const auditForTenant = db.prepare<AuditRow, [string, number]>(
    "SELECT * FROM audit_log WHERE tenant_id = ?1 ORDER BY created_at DESC, id DESC LIMIT ?2",
  );

  const auditInTx = (e: AuditEntry, now: number) =>
    void insertAudit.run(e.tenantId, e.userId, e.action, e.ip, e.userAgent, e.detail ? JSON.stringify(e.detail) : null, now);

  // Single-statement writes go through writeTxAsync too: it waits for another process's writer a
  // try every millisecond (SQLite's busy handler slept through its short gaps), and lets other
  // requests run between the tries (database.ts).
  const store = {
    hit: async (key: string, now: number, windowMs: number) => writeTxAsync(db, () => hit.get(key, now, windowMs)!),
    peek: async (key: string) => peek.get(key),
    clear: async (key: string) => writeTxAsync(db, () => void clear.run(key)),
    clearPrefix: async (prefix: string) => writeTxAsync(db, () => void clearPrefix.run(prefix)),
    anyReached: async (prefix: string, max: number, now: number) => anyReached.get(prefix, max, now) !== null,
    sweep: async (now: number) => writeTxAsync(db, () => sweep.run(now).changes),
    audit: async (e: AuditEntry, now: number) => writeTxAsync(db, () => auditInTx(e, now)),
    /** Audit rows are also written inside other features' transactions. */
    auditInTx,
    auditForTenant: async (tenantId: string, limit = 100) => auditForTenant.all(tenantId, limit),
  };
  return store satisfies SecurityStore;
}

export type SqliteSecurityStore = ReturnType<typeof createSqliteSecurityStore>;

/**
 * The key file's view of the database (security/key-file.ts): keys an earlier release kept in the
 * settings table, and whether any account exists. Prepared on use, so that it works on a database
 * of any version, before its migrations run (a `.v<N>.bak` copy must not carry the keys either).
 */
export function createKeyStore(db: Db): StoredKeys {
  const hasTable = (name: string) => db.query("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?1").get(name) !== null;
  return {
    stored(names) {
      const out: Record<string, string> = {};
      if (!hasTable("settings")) return out;
      const get = db.query("SELECT value FROM settings WHERE key = ?1");
      for (const k of names) {
        const row = get.get(k) as { value: string } | null;
        if (row) out[k] = row.value;
      }
      return out;
    },
    // The rows' bytes are overwritten in the file (secure_delete), not left in free pages.
    forget(names) {
      if (!hasTable("settings")) return;
      const was = (db.query("PRAGMA secure_delete").get() as { secure_delete: number }).secure_delete;
      db.run("PRAGMA secure_delete = ON");
      try {
        writeTx(db, () => {
          for (const k of names) db.run("DELETE FROM settings WHERE key = ?1", [k]);
        });
      } finally {
        db.run(`PRAGMA secure_delete = ${was ? "ON" : "OFF"}`);
      }
    },
    // Lost keys would end every session and 2FA secret of these accounts.
    holdsAccounts: () => hasTable("users") && db.query("SELECT 1 FROM users LIMIT 1").get() !== null,
  };
}
