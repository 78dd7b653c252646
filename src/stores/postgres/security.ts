import type { SecurityStore } from "../../security/repo";
import type { AuditEntry, AuditRow } from "../../security/repo";
import type { Pg, PgQueries, PgTx } from "./database";

/**
 * Rate limits and audit writes on PostgreSQL. The counter is one `INSERT … ON CONFLICT DO UPDATE
 * … RETURNING`: the row is locked by the upsert, so every instance on this database counts into
 * the same row and no hit is lost or counted twice however many arrive at once.
 */
export function createPostgresSecurityStore(pg: Pg) {
  // Rows of no organization go under tenant_id '' (schema 53: the audit log's key starts with it).
  const insertAudit = (q: PgQueries, e: AuditEntry, now: number) =>
    q.run`INSERT INTO audit_log (tenant_id, user_id, action, ip, user_agent, detail, created_at)
          VALUES (${e.tenantId ?? ""}::text, ${e.userId}::text, ${e.action}, ${e.ip}::text, ${e.userAgent}::text,
                  ${e.detail ? JSON.stringify(e.detail) : null}::text, ${now}::bigint)`;

  const store = {
    // The window restarts once it has passed; SET reads the old row, as on SQLite.
    hit: async (key: string, now: number, windowMs: number) =>
      (await pg.one<{ count: number; window_start: number }>`
        INSERT INTO rate_limits (key, window_start, window_ms, count) VALUES (${key}, ${now}::bigint, ${windowMs}::bigint, 1)
        ON CONFLICT (key) DO UPDATE SET
          count        = CASE WHEN rate_limits.window_start + rate_limits.window_ms <= ${now}::bigint THEN 1 ELSE rate_limits.count + 1 END,
          window_start = CASE WHEN rate_limits.window_start + rate_limits.window_ms <= ${now}::bigint THEN ${now}::bigint ELSE rate_limits.window_start END,
          window_ms    = ${windowMs}::bigint
        RETURNING count, window_start`)!,
    peek: async (key: string) =>
      pg.one<{ count: number; window_start: number; window_ms: number }>`SELECT count, window_start, window_ms FROM rate_limits WHERE key = ${key}`,
    clear: async (key: string) => void (await pg.run`DELETE FROM rate_limits WHERE key = ${key}`),
    // starts_with needs no LIKE escaping (addresses may hold % and _); an admin's unlock is rare.
    clearPrefix: async (prefix: string) => void (await pg.run`DELETE FROM rate_limits WHERE starts_with(key, ${prefix}::text)`),
    anyReached: async (prefix: string, max: number, now: number) =>
      (await pg.one`SELECT 1 AS one FROM rate_limits WHERE starts_with(key, ${prefix}::text) AND count >= ${max}
                    AND window_start + window_ms > ${now}::bigint LIMIT 1`) !== null,
    sweep: async (now: number) => pg.run`DELETE FROM rate_limits WHERE window_start + window_ms <= ${now}::bigint`,
    audit: async (e: AuditEntry, now: number) => void (await insertAudit(pg, e, now)),
    /** Audit rows are also written inside other features' transactions. */
    auditInTx: async (tx: PgTx, e: AuditEntry, now: number) => void (await insertAudit(tx, e, now)),
    auditForTenant: async (tenantId: string, limit = 100) =>
      pg.all<AuditRow>`SELECT * FROM audit_log WHERE tenant_id = ${tenantId} ORDER BY created_at DESC, id DESC LIMIT ${limit}`,
  };
  return store satisfies SecurityStore;
}

export type PostgresSecurityStore = ReturnType<typeof createPostgresSecurityStore>;

/**
 * The key file's view of a PostgreSQL database (security/key-file.ts's StoredKeys, read ahead):
 * no release ever kept keys in PostgreSQL's settings table, but the rows are read all the same so
 * that the key file's logic is the same on both backends, and "does any account exist" decides
 * whether a missing key file is an error. StoredKeys is synchronous, so the answers are read
 * before it is built, and `forget` deletes rows by awaiting `flush()` afterwards.
 */
export async function loadPostgresKeyStore(pg: Pg, names: readonly string[]) {
  const rows = await pg.all<{ key: string; value: string }>`SELECT key, value FROM settings WHERE key = ANY(${pg.sql.array([...names], "text")})`;
  const holds = (await pg.one`SELECT 1 AS one FROM users LIMIT 1`) !== null;
  const forgotten = new Set<string>();
  return {
    stored(wanted: readonly string[]): Record<string, string> {
      const out: Record<string, string> = {};
      for (const r of rows) if (wanted.includes(r.key) && !forgotten.has(r.key)) out[r.key] = r.value;
      return out;
    },
    forget(names: readonly string[]): void {
      for (const n of names) forgotten.add(n);
    },
    holdsAccounts: () => holds,
    /** Deletes the rows `forget` named. */
    async flush(): Promise<void> {
      if (forgotten.size > 0) await pg.run`DELETE FROM settings WHERE key = ANY(${pg.sql.array([...forgotten], "text")})`;
    },
  };
}
