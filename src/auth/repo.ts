import { type Db, writeTx } from "../db/database";
import type { AuditEntry, SecurityRepo } from "../security/repo";

export interface SessionRow {
  id: string;
  tenant_id: string;
  user_id: string;
  method: string;
  created_at: number;
  last_used_at: number;
  expires_at: number;
  revoked_at: number | null;
  revoke_reason: string | null;
  ip: string | null;
  user_agent: string | null;
  refresh_gen: number;
  rotated_at: number | null;
}

/** A session with what every authenticated request needs about its user and tenant. */
export interface SessionPrincipalRow extends SessionRow {
  role: "admin" | "member";
  email: string;
  subdomain: string;
}

/** SQL of sessions. Every statement is prepared once. */
export function createSessionsRepo(db: Db, others: { security: SecurityRepo }) {
  const insert = db.prepare<never, [string, string, string, string, number, number, string | null, string | null]>(
    `INSERT INTO sessions (id, tenant_id, user_id, method, created_at, last_used_at, expires_at, ip, user_agent)
     VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6, ?7, ?8)`,
  );
  const principal = db.prepare<SessionPrincipalRow, [string]>(
    `SELECT s.*, u.role, u.email, t.subdomain
       FROM sessions s JOIN users u ON u.id = s.user_id JOIN tenants t ON t.id = s.tenant_id
      WHERE s.id = ?1`,
  );
  const byId = db.prepare<SessionRow, [string]>("SELECT * FROM sessions WHERE id = ?1");
  const touch = db.prepare<never, [string, number]>("UPDATE sessions SET last_used_at = ?2 WHERE id = ?1");
  // Compare-and-swap on the generation: of two rotations racing, exactly one moves it.
  const rotate = db.prepare<never, [string, number, number]>(
    "UPDATE sessions SET refresh_gen = refresh_gen + 1, rotated_at = ?3, last_used_at = ?3 WHERE id = ?1 AND refresh_gen = ?2 AND revoked_at IS NULL",
  );
  // Only a live session can be revoked: one past its end is gone, as GET /sessions shows.
  const revokeOne = db.prepare<never, [string, string, string, number, string]>(
    "UPDATE sessions SET revoked_at = ?4, revoke_reason = ?5 WHERE id = ?1 AND tenant_id = ?2 AND user_id = ?3 AND revoked_at IS NULL AND expires_at > ?4",
  );
  const revokeOthers = db.prepare<never, [string, string, string, number, string]>(
    "UPDATE sessions SET revoked_at = ?4, revoke_reason = ?5 WHERE tenant_id = ?1 AND user_id = ?2 AND id <> ?3 AND revoked_at IS NULL",
  );
  const revokeAll = db.prepare<never, [string, string, number, string]>(
    "UPDATE sessions SET revoked_at = ?3, revoke_reason = ?4 WHERE tenant_id = ?1 AND user_id = ?2 AND revoked_at IS NULL",
  );
  const live = db.prepare<SessionRow, [string, string, number]>(
    `SELECT * FROM sessions WHERE tenant_id = ?1 AND user_id = ?2 AND revoked_at IS NULL AND expires_at > ?3
      ORDER BY created_at DESC, id DESC`,
  );
  const purge = db.prepare<never, [number]>("DELETE FROM sessions WHERE expires_at <= ?1");

  const insertInTx = (s: Pick<SessionRow, "id" | "tenant_id" | "user_id" | "method" | "created_at" | "expires_at" | "ip" | "user_agent">) =>
    void insert.run(s.id, s.tenant_id, s.user_id, s.method, s.created_at, s.expires_at, s.ip, s.user_agent);

  return {
    /** Session rows are also written inside signup's and invitation-accept's transactions. */
    insertInTx,
    /** A new session and its audit row in one commit: a sign-in flood then costs half the fsyncs. */
    insertAudited: async (s: Parameters<typeof insertInTx>[0], entry: AuditEntry, now: number) =>
      writeTx(db, () => {
        insertInTx(s);
        others.security.auditInTx(entry, now);
      }),
    principal: async (id: string) => principal.get(id),
    byId: async (id: string) => byId.get(id),
    touch: async (id: string, now: number) => void touch.run(id, now),
    rotate: async (id: string, fromGen: number, now: number) => rotate.run(id, fromGen, now).changes === 1,
    revoke: async (tenantId: string, userId: string, id: string, reason: string, now: number) =>
      revokeOne.run(id, tenantId, userId, now, reason).changes,
    revokeOthers: async (tenantId: string, userId: string, keepId: string, reason: string, now: number) =>
      revokeOthers.run(tenantId, userId, keepId, now, reason).changes,
    revokeAll: async (tenantId: string, userId: string, reason: string, now: number) => revokeAll.run(tenantId, userId, now, reason).changes,
    live: async (tenantId: string, userId: string, now: number) => live.all(tenantId, userId, now),
    /** Drops sessions that ended long enough ago that nobody can present their tokens. */
    purgeExpired: async (before: number) => purge.run(before).changes,
  };
}

export type SessionsRepo = ReturnType<typeof createSessionsRepo>;
