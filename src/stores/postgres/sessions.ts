import type { SessionsStore } from "../../auth/repo";
import { appendEventsInTx } from "./events";
import { revokedEvent, signedInEvent } from "../../events/changes";
import type { ChallengeRow, NewSessionRow, SessionAccessRow, SessionPrincipalRow, SessionRow } from "../../auth/repo";
import type { AuditEntry } from "../../security/repo";
import type { Pg, PgTx } from "./database";

/** What the auth stores need of the security store: an audit row written inside their transaction. */
export interface PgAuditInTx {
  auditInTx(tx: PgTx, entry: AuditEntry, now: number): Promise<unknown>;
}

/**
 * Sessions and sign-in challenges on PostgreSQL: the same functions as the SQLite store.
 * Transactions run at once here (READ COMMITTED), so every check-and-change is ONE statement whose
 * WHERE re-reads the row it locks (a concurrent UPDATE or DELETE waits, then sees the winner's
 * row): rotate's generation, a challenge's spend and a revoke cannot be won twice.
 */
export function createPostgresSessionsStore(pg: Pg, others: { security: PgAuditInTx }) {
  async function insertInTx(tx: PgTx, s: NewSessionRow): Promise<void> {
    await tx.run`INSERT INTO sessions (id, sid_hash, tenant_id, user_id, method, created_at, last_used_at, expires_at, proven_at, ip, user_agent)
      VALUES (${s.id}, ${s.sid_hash}, ${s.tenant_id}, ${s.user_id}, ${s.method}, ${s.created_at}, ${s.created_at}, ${s.expires_at}, ${s.proven_at}, ${s.ip}, ${s.user_agent})`;
  }
  // The challenge delete and the session revoke in this order everywhere (revokeAll, a password
  // change): two such transactions on one user wait for each other instead of deadlocking.
  const endChallengesInTx = (tx: PgTx, tenantId: string, userId: string) =>
    tx.run`DELETE FROM sign_in_challenges WHERE tenant_id = ${tenantId} AND user_id = ${userId}`;

  const store = {
    /** Session rows are also written inside signup's and invitation-accept's transactions. */
    insertInTx,
    /** A new session and its audit row in one commit. */
    insertAudited: async (s: NewSessionRow, entry: AuditEntry, now: number): Promise<void> =>
      pg.begin(async (tx) => {
        await insertInTx(tx, s);
        await others.security.auditInTx(tx, entry, now);
        await appendEventsInTx(tx, s.tenant_id, [signedInEvent(s)], now);
      }),
    /** The session of `tenantId` whose secret sid hashes to `sidHash`, with its user's role and email and its tenant's subdomain. */
    principal: async (tenantId: string, sidHash: string): Promise<SessionPrincipalRow | null> =>
      pg.one<SessionPrincipalRow>`SELECT s.*, u.role, u.email, t.subdomain, t.disabled_at AS tenant_disabled_at
        FROM sessions s JOIN users u ON u.tenant_id = s.tenant_id AND u.id = s.user_id JOIN tenants t ON t.id = s.tenant_id
       WHERE s.tenant_id = ${tenantId} AND s.sid_hash = ${sidHash}`,
    /** An API request's check: the session's live columns, its user and tenant, and whether the tenant has `module`, in one statement. */
    access: async (tenantId: string, sidHash: string, module: string): Promise<SessionAccessRow | null> =>
      pg.one<SessionAccessRow>`SELECT s.id, s.tenant_id, s.user_id, s.last_used_at, s.expires_at, s.proven_at, s.revoked_at,
             u.role, u.email, t.subdomain, t.disabled_at AS tenant_disabled_at,
             EXISTS (SELECT 1 FROM tenant_modules m WHERE m.tenant_id = s.tenant_id AND m.module = ${module}) AS has_module,
             -- The sign-in policy (issue 33): with neither switch on, CASE reads no passkey nor 2FA row.
             CASE
               WHEN t.require_passkey_or_2fa = 0 AND t.require_passkey_for_admins = 0 THEN NULL
               WHEN EXISTS (SELECT 1 FROM passkeys p WHERE p.tenant_id = s.tenant_id AND p.user_id = s.user_id) THEN NULL
               WHEN t.require_passkey_for_admins = 1 AND u.role = 'admin' THEN 'passkey'
               WHEN t.require_passkey_or_2fa = 1
                AND NOT EXISTS (SELECT 1 FROM user_totp x WHERE x.tenant_id = s.tenant_id AND x.user_id = s.user_id AND x.enabled_at IS NOT NULL) THEN 'passkey_or_2fa'
             END AS policy_setup
        FROM sessions s JOIN users u ON u.tenant_id = s.tenant_id AND u.id = s.user_id JOIN tenants t ON t.id = s.tenant_id
       WHERE s.tenant_id = ${tenantId} AND s.sid_hash = ${sidHash}`,
    touch: async (tenantId: string, id: string, now: number): Promise<undefined> => {
      await pg.run`UPDATE sessions SET last_used_at = ${now} WHERE tenant_id = ${tenantId} AND id = ${id}`;
      return undefined;
    },
    /** Compare-and-swap on the generation: of two rotations racing (any instances), exactly one moves it. */
    rotate: async (tenantId: string, id: string, fromGen: number, now: number): Promise<boolean> =>
      (await pg.run`UPDATE sessions SET refresh_gen = refresh_gen + 1, rotated_at = ${now}, last_used_at = ${now}
        WHERE tenant_id = ${tenantId} AND id = ${id} AND refresh_gen = ${fromGen} AND revoked_at IS NULL`) === 1,
    /** Records a fresh proof of the first factor on a live session, with its audit row. False when the session ended. */
    prove: async (tenantId: string, id: string, entry: AuditEntry, now: number): Promise<boolean> =>
      pg.begin(async (tx) => {
        const n = await tx.run`UPDATE sessions SET proven_at = ${now}, last_used_at = ${now}
          WHERE tenant_id = ${tenantId} AND id = ${id} AND revoked_at IS NULL AND expires_at > ${now}`;
        if (n === 0) return false;
        await others.security.auditInTx(tx, entry, now);
        return true;
      }),
    /** Only a live session can be revoked: one past its end is gone, as GET /sessions shows. */
    revoke: async (tenantId: string, userId: string, id: string, reason: string, now: number): Promise<number> =>
      pg.begin(async (tx) => {
        const n = await tx.run`UPDATE sessions SET revoked_at = ${now}, revoke_reason = ${reason}
          WHERE tenant_id = ${tenantId} AND id = ${id} AND user_id = ${userId} AND revoked_at IS NULL AND expires_at > ${now}`;
        if (n > 0) await appendEventsInTx(tx, tenantId, [revokedEvent(userId, id, n, reason, true)], now);
        return n;
      }),
    revokeOthers: async (tenantId: string, userId: string, keepId: string, reason: string, now: number): Promise<number> =>
      pg.begin(async (tx) => {
        const n = await tx.run`UPDATE sessions SET revoked_at = ${now}, revoke_reason = ${reason}
          WHERE tenant_id = ${tenantId} AND user_id = ${userId} AND id <> ${keepId} AND revoked_at IS NULL`;
        if (n > 0) await appendEventsInTx(tx, tenantId, [revokedEvent(userId, null, n, reason, true)], now);
        return n;
      }),
    /**
     * Ends every session and every outstanding 2FA challenge of a user, in one commit. A verify
     * spending a challenge at the same moment either loses the challenge, or commits its session
     * before the revoke's UPDATE starts (the DELETE waited for it), which then revokes it too.
     */
    revokeAll: async (tenantId: string, userId: string, reason: string, now: number): Promise<number> =>
      pg.begin(async (tx) => {
        await endChallengesInTx(tx, tenantId, userId);
        const n = await tx.run`UPDATE sessions SET revoked_at = ${now}, revoke_reason = ${reason}
          WHERE tenant_id = ${tenantId} AND user_id = ${userId} AND revoked_at IS NULL`;
        if (n > 0) await appendEventsInTx(tx, tenantId, [revokedEvent(userId, null, n, reason, false)], now);
        return n;
      }),
    live: async (tenantId: string, userId: string, now: number): Promise<SessionRow[]> => [
      ...(await pg.all<SessionRow>`SELECT * FROM sessions
        WHERE tenant_id = ${tenantId} AND user_id = ${userId} AND revoked_at IS NULL AND expires_at > ${now}
        ORDER BY created_at DESC, id DESC`),
    ],
    /**
     * Drops sessions and challenges that ended long enough ago that nobody can present their tokens.
     * Joined with tenants, the planner may read each organization's range of the tenant-first expiry
     * index where few rows ended; where many did it reads the table once.
     */
    purgeExpired: async (before: number): Promise<number> =>
      pg.begin(async (tx) => {
        const sessions = await tx.run`DELETE FROM sessions s USING tenants t WHERE s.tenant_id = t.id AND s.expires_at <= ${before}`;
        return sessions + (await tx.run`DELETE FROM sign_in_challenges c USING tenants t WHERE c.tenant_id = t.id AND c.expires_at <= ${before}`);
      }),

    /** A new 2FA challenge and its audit row, in one commit. */
    openChallenge: async (c: ChallengeRow, entry: AuditEntry): Promise<void> =>
      pg.begin(async (tx) => {
        await tx.run`INSERT INTO sign_in_challenges (id, tenant_id, user_id, method, created_at, expires_at)
          VALUES (${c.id}, ${c.tenant_id}, ${c.user_id}, ${c.method}, ${c.created_at}, ${c.expires_at})`;
        await others.security.auditInTx(tx, entry, c.created_at);
      }),
    /** An outstanding challenge of this user, or null when it was spent, ended or expired. */
    challenge: async (id: string, tenantId: string, userId: string, now: number): Promise<ChallengeRow | null> =>
      pg.one<ChallengeRow>`SELECT id, tenant_id, user_id, method, created_at, expires_at FROM sign_in_challenges
        WHERE tenant_id = ${tenantId} AND id = ${id} AND user_id = ${userId} AND expires_at > ${now}`,
    /**
     * Spends a challenge and opens the session it leads to, atomically: false (and no session)
     * when another verify spent it first (its DELETE waits for ours, then finds no row), or it
     * was ended meanwhile.
     */
    spendChallengeForSession: async (c: ChallengeRow, s: NewSessionRow, entry: AuditEntry, now: number): Promise<boolean> =>
      pg.begin(async (tx) => {
        const spent = await tx.run`DELETE FROM sign_in_challenges
          WHERE tenant_id = ${c.tenant_id} AND id = ${c.id} AND user_id = ${c.user_id} AND expires_at > ${now}`;
        if (spent === 0) return false;
        await insertInTx(tx, s);
        await others.security.auditInTx(tx, entry, now);
        await appendEventsInTx(tx, s.tenant_id, [signedInEvent(s)], now);
        return true;
      }),
    /** Ends a user's outstanding challenges: their temp_tokens stop working (2FA disable, a password change). */
    endChallenges: async (tenantId: string, userId: string): Promise<number> =>
      pg.run`DELETE FROM sign_in_challenges WHERE tenant_id = ${tenantId} AND user_id = ${userId}`,
  };
  return store satisfies SessionsStore;
}

export type PostgresSessionsStore = ReturnType<typeof createPostgresSessionsStore>;
