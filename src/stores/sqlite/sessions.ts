import type { SessionsStore, SessionRow, NewSessionRow, SessionPrincipalRow, SessionAccessRow, ChallengeRow } from "../../auth/repo";
import type { AppendEventsInTx } from "./deals";
import { revokedEvent, signedInEvent } from "../../events/changes";
import { type Db, writeTxAsync } from "../../db/database";
import type { AuditEntry } from "../../security/repo";
import { type SqliteSecurityStore } from "./security";
import { readTx } from "./read-tx";

/** SQL of sessions and sign-in challenges. Every statement is prepared once. */
export function createSqliteSessionsStore(db: Db, others: { security: SqliteSecurityStore; appendEventsInTx?: AppendEventsInTx }) {
  const insert = db.prepare<never, [string, string, string, string, string, number, number, number, string | null, string | null]>(
    `INSERT INTO sessions (id, sid_hash, tenant_id, user_id, method, created_at, last_used_at, expires_at, proven_at, ip, user_agent)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6, ?7, ?8, ?9, ?10)`,
  );
  // Three primary-key lookups in one read transaction cost about 40 % less than the three-table
  // join did (11.5 -> 7 µs, issue 15), and every request starts with this one.
  const sessionBySid = db.prepare<SessionRow, [string, string]>("SELECT * FROM sessions WHERE sid_hash = ?1 AND tenant_id = ?2");
  const userOf = db.prepare<Pick<SessionPrincipalRow, "role" | "email">, [string, string]>("SELECT role, email FROM users WHERE id = ?1 AND tenant_id = ?2");
  const tenantOf = db.prepare<Pick<SessionPrincipalRow, "subdomain" | "tenant_disabled_at">, [string]>(
    "SELECT subdomain, disabled_at AS tenant_disabled_at FROM tenants WHERE id = ?1",
  );
  const read = readTx(db);
  const principal = (tenantId: string, sidHash: string): SessionPrincipalRow | null =>
    read(() => {
      const s = sessionBySid.get(sidHash, tenantId);
      if (!s) return null;
      const u = userOf.get(s.user_id, tenantId);
      const t = u && tenantOf.get(s.tenant_id);
      if (!t) return null;
      // The row is this call's own: completed in place, not copied.
      const p = s as SessionPrincipalRow;
      p.role = u.role;
      p.email = u.email;
      p.subdomain = t.subdomain;
      p.tenant_disabled_at = t.tenant_disabled_at;
      return p;
    });
  // An API request's check: one statement (one snapshot, no BEGIN and COMMIT), the few columns it
  // needs, and the module check that was a read of its own. Scalar subqueries, each a primary-key
  // lookup: the same three tables joined cost about six times as much (issue 15).
  // The sign-in policy's check (issue 33): with neither switch on (most organizations), CASE
  // stops at its first branch and reads no passkey nor 2FA row.
  const POLICY_SETUP = `(SELECT CASE
              WHEN t.require_passkey_or_2fa = 0 AND t.require_passkey_for_admins = 0 THEN NULL
              WHEN EXISTS (SELECT 1 FROM passkeys p WHERE p.tenant_id = s.tenant_id AND p.user_id = s.user_id) THEN NULL
              WHEN t.require_passkey_for_admins = 1 AND (SELECT role FROM users WHERE id = s.user_id AND tenant_id = s.tenant_id) = 'admin' THEN 'passkey'
              WHEN t.require_passkey_or_2fa = 1
               AND NOT EXISTS (SELECT 1 FROM user_totp WHERE user_id = s.user_id AND tenant_id = s.tenant_id AND enabled_at IS NOT NULL) THEN 'passkey_or_2fa'
            END FROM tenants t WHERE t.id = s.tenant_id)`;
  const accessBySid = db.prepare<Omit<SessionAccessRow, "has_module"> & { has_module: number }, [string, string, string]>(
    `SELECT s.id, s.tenant_id, s.user_id, s.last_used_at, s.expires_at, s.proven_at, s.revoked_at,
            (SELECT role FROM users WHERE id = s.user_id AND tenant_id = s.tenant_id) AS role,
            (SELECT email FROM users WHERE id = s.user_id AND tenant_id = s.tenant_id) AS email,
            (SELECT subdomain FROM tenants WHERE id = s.tenant_id) AS subdomain,
            (SELECT disabled_at FROM tenants WHERE id = s.tenant_id) AS tenant_disabled_at,
            EXISTS (SELECT 1 FROM tenant_modules WHERE tenant_id = s.tenant_id AND module = ?2) AS has_module,
            ${POLICY_SETUP} AS policy_setup
       FROM sessions s WHERE s.sid_hash = ?1 AND s.tenant_id = ?3`,
  );
  const access = (tenantId: string, sidHash: string, module: string): SessionAccessRow | null => {
    const r = accessBySid.get(sidHash, module, tenantId);
    // A session whose user or tenant is gone (the foreign keys cascade, so never seen) is no session.
    if (!r || r.role === null || r.subdomain === null) return null;
    return { ...r, has_module: r.has_module === 1 };
  };
  const touch = db.prepare<never, [string, number, string]>("UPDATE sessions SET last_used_at = ?2 WHERE id = ?1 AND tenant_id = ?3");
  // Compare-and-swap on the generation: of two rotations racing, exactly one moves it.
  const rotate = db.prepare<never, [string, number, number, string]>(
    "UPDATE sessions SET refresh_gen = refresh_gen + 1, rotated_at = ?3, last_used_at = ?3 WHERE id = ?1 AND tenant_id = ?4 AND refresh_gen = ?2 AND revoked_at IS NULL",
  );
  const prove = db.prepare<never, [string, number, string]>(
    "UPDATE sessions SET proven_at = ?2, last_used_at = ?2 WHERE id = ?1 AND tenant_id = ?3 AND revoked_at IS NULL AND expires_at > ?2",
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

  const insertChallenge = db.prepare<never, [string, string, string, string, number, number]>(
    "INSERT INTO sign_in_challenges (id, tenant_id, user_id, method, created_at, expires_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
  );
  const challenge = db.prepare<ChallengeRow, [string, string, string, number]>(
    "SELECT * FROM sign_in_challenges WHERE id = ?1 AND tenant_id = ?2 AND user_id = ?3 AND expires_at > ?4",
  );
  // The spend: of two verifies of one temp_token, exactly one deletes the row.
  const spendChallenge = db.prepare<never, [string, string, string, number]>(
    "DELETE FROM sign_in_challenges WHERE id = ?1 AND tenant_id = ?2 AND user_id = ?3 AND expires_at > ?4",
  );
  const endChallenges = db.prepare<never, [string, string]>("DELETE FROM sign_in_challenges WHERE tenant_id = ?1 AND user_id = ?2");
  const purgeChallenges = db.prepare<never, [number]>("DELETE FROM sign_in_challenges WHERE expires_at <= ?1");

  const insertInTx = (s: NewSessionRow) =>
    void insert.run(s.id, s.sid_hash, s.tenant_id, s.user_id, s.method, s.created_at, s.expires_at, s.proven_at, s.ip, s.user_agent);
  const auditInTx = (entry: AuditEntry | undefined, now: number) => entry && others.security.auditInTx(entry, now);
  const events = (): AppendEventsInTx => others.appendEventsInTx ?? (() => {});
  const signedInInTx = (s: NewSessionRow, now: number) => events()(s.tenant_id, [signedInEvent(s)], now);
  const revokedInTx = (tenantId: string, userId: string, sessionId: string | null, count: number, reason: string, self: boolean, now: number) =>
    count > 0 && events()(tenantId, [revokedEvent(userId, sessionId, count, reason, self)], now);

  const store = {
    /** Session rows are also written inside signup's and invitation-accept's transactions. */
    insertInTx,
    /** A new session and its audit row in one commit: a sign-in flood then costs half the fsyncs. */
    insertAudited: async (s: NewSessionRow, entry: AuditEntry, now: number) =>
      writeTxAsync(db, () => {
        insertInTx(s);
        auditInTx(entry, now);
        signedInInTx(s, now);
      }),
    /** The session whose secret sid hashes to `sidHash`, with its user's role and email and its tenant's subdomain. */
    principal: async (tenantId: string, sidHash: string) => principal(tenantId, sidHash),
    access: async (tenantId: string, sidHash: string, module: string) => access(tenantId, sidHash, module),
    // Single statements through writeTxAsync too: while another process writes, the wait lets other requests run (database.ts).
    touch: async (tenantId: string, id: string, now: number) => writeTxAsync(db, () => void touch.run(id, now, tenantId)),
    rotate: async (tenantId: string, id: string, fromGen: number, now: number) => writeTxAsync(db, () => rotate.run(id, fromGen, now, tenantId).changes === 1),
    /** Records a fresh proof of the first factor on a live session, with its audit row. False when the session ended. */
    prove: async (tenantId: string, id: string, entry: AuditEntry, now: number) =>
      writeTxAsync(db, () => {
        if (prove.run(id, now, tenantId).changes === 0) return false;
        auditInTx(entry, now);
        return true;
      }),
    revoke: async (tenantId: string, userId: string, id: string, reason: string, now: number) =>
      writeTxAsync(db, () => {
        const n = revokeOne.run(id, tenantId, userId, now, reason).changes;
        revokedInTx(tenantId, userId, id, n, reason, true, now);
        return n;
      }),
    revokeOthers: async (tenantId: string, userId: string, keepId: string, reason: string, now: number) =>
      writeTxAsync(db, () => {
        const n = revokeOthers.run(tenantId, userId, keepId, now, reason).changes;
        revokedInTx(tenantId, userId, null, n, reason, true, now);
        return n;
      }),
    /** Ends every session and every outstanding 2FA challenge of a user, in one commit. */
    revokeAll: async (tenantId: string, userId: string, reason: string, now: number) =>
      writeTxAsync(db, () => {
        endChallenges.run(tenantId, userId);
        const n = revokeAll.run(tenantId, userId, now, reason).changes;
        revokedInTx(tenantId, userId, null, n, reason, false, now);
        return n;
      }),
    live: async (tenantId: string, userId: string, now: number) => live.all(tenantId, userId, now),
    /** Drops sessions and challenges that ended long enough ago that nobody can present their tokens. */
    purgeExpired: async (before: number) =>
      writeTxAsync(db, () => purge.run(before).changes + purgeChallenges.run(before).changes),

    /** A new 2FA challenge and its audit row, in one commit. */
    openChallenge: async (c: ChallengeRow, entry: AuditEntry) =>
      writeTxAsync(db, () => {
        insertChallenge.run(c.id, c.tenant_id, c.user_id, c.method, c.created_at, c.expires_at);
        auditInTx(entry, c.created_at);
      }),
    /** An outstanding challenge of this user, or undefined when it was spent, ended or expired. */
    challenge: async (id: string, tenantId: string, userId: string, now: number) => challenge.get(id, tenantId, userId, now),
    /**
     * Spends a challenge and opens the session it leads to, atomically: false (and no session)
     * when another verify spent it first, or it was ended meanwhile.
     */
    spendChallengeForSession: async (c: ChallengeRow, s: NewSessionRow, entry: AuditEntry, now: number) =>
      writeTxAsync(db, () => {
        if (spendChallenge.run(c.id, c.tenant_id, c.user_id, now).changes === 0) return false;
        insertInTx(s);
        auditInTx(entry, now);
        signedInInTx(s, now);
        return true;
      }),
    /** Ends a user's outstanding challenges: their temp_tokens stop working (2FA disable, a password change). */
    endChallenges: async (tenantId: string, userId: string) => writeTxAsync(db, () => endChallenges.run(tenantId, userId).changes),
  };
  return store satisfies SessionsStore;
}

export type SqliteSessionsStore = ReturnType<typeof createSqliteSessionsStore>;
