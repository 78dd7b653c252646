import type { PasskeyChallengeRow, PasskeyRemoval, PasskeyRow, PasskeysStore } from "../../auth/passkeys/repo";
import type { AuditEntry } from "../../security/repo";
import type { Pg } from "./database";
import type { PgAuditInTx } from "./sessions";

const COLUMNS = "tenant_id, id, user_id, credential_id, public_key, counter, transports, backed_up, rp_id, name, created_at, last_used_at";

/**
 * Passkeys and their challenges on PostgreSQL, the same functions as the SQLite store. A
 * counter moves forward in one statement that re-reads the row it locks, a challenge is spent by
 * one DELETE … RETURNING, and a removal that must keep the user's last passkey locks the user's
 * passkeys first: of two removals at once, the second sees what the first left.
 */
export function createPostgresPasskeysStore(pg: Pg, others: { security: PgAuditInTx }) {
  const store = {
    insert: async (r: PasskeyRow, audit: AuditEntry, now: number) =>
      pg.begin(async (tx) => {
        const n = await tx.run`INSERT INTO passkeys (tenant_id, id, user_id, credential_id, public_key, counter, transports, backed_up, rp_id, name, created_at, last_used_at)
          VALUES (${r.tenant_id}, ${r.id}, ${r.user_id}, ${r.credential_id}, ${r.public_key}, ${r.counter}, ${r.transports}, ${r.backed_up}, ${r.rp_id}, ${r.name}, ${r.created_at}, NULL)
          ON CONFLICT (tenant_id, credential_id) DO NOTHING`;
        if (n === 0) return false;
        await others.security.auditInTx(tx, audit, now);
        return true;
      }),
    list: async (tenantId: string, userId: string) =>
      pg.unsafe<PasskeyRow>(`SELECT ${COLUMNS} FROM passkeys WHERE tenant_id = $1 AND user_id = $2 ORDER BY created_at, id`, [tenantId, userId]),
    byCredential: async (tenantId: string, credentialId: string) =>
      (await pg.unsafe<PasskeyRow>(`SELECT ${COLUMNS} FROM passkeys WHERE tenant_id = $1 AND credential_id = $2`, [tenantId, credentialId]))[0] ?? null,
    rename: async (tenantId: string, userId: string, id: string, name: string, audit: AuditEntry, now: number) =>
      pg.begin(async (tx) => {
        const [row] = await tx.unsafe<PasskeyRow>(`UPDATE passkeys SET name = $4 WHERE tenant_id = $1 AND user_id = $2 AND id = $3 RETURNING ${COLUMNS}`, [tenantId, userId, id, name]);
        if (row) await others.security.auditInTx(tx, audit, now);
        return row ?? null;
      }),
    remove: async (tenantId: string, userId: string, id: string, keepOne: boolean, audit: AuditEntry, now: number) =>
      pg.begin(async (tx): Promise<PasskeyRemoval> => {
        const mine = await tx.all<{ id: string }>`SELECT id FROM passkeys WHERE tenant_id = ${tenantId} AND user_id = ${userId} ORDER BY id FOR UPDATE`;
        if (!mine.some((r) => r.id === id)) return "not_found";
        if (keepOne && mine.length <= 1) return "last";
        await tx.run`DELETE FROM passkeys WHERE tenant_id = ${tenantId} AND user_id = ${userId} AND id = ${id}`;
        await others.security.auditInTx(tx, audit, now);
        return "removed";
      }),
    recordUse: async (tenantId: string, id: string, counter: number, backedUp: boolean, now: number) =>
      (await pg.run`UPDATE passkeys SET counter = ${counter}, backed_up = ${backedUp}, last_used_at = ${now}
        WHERE tenant_id = ${tenantId} AND id = ${id} AND (counter < ${counter} OR (counter = 0 AND ${counter}::bigint = 0))`) > 0,
    openChallenge: async (c: PasskeyChallengeRow) =>
      void (await pg.run`INSERT INTO passkey_challenges (challenge_hash, purpose, tenant_id, user_id, rp_id, created_at, expires_at)
        VALUES (${c.challenge_hash}, ${c.purpose}, ${c.tenant_id}, ${c.user_id}, ${c.rp_id}, ${c.created_at}, ${c.expires_at})`),
    spendChallenge: async (hash: string, tenantId: string | null, now: number) =>
      pg.one<PasskeyChallengeRow>`DELETE FROM passkey_challenges WHERE challenge_hash = ${hash} AND tenant_id IS NOT DISTINCT FROM ${tenantId}::text AND expires_at > ${now} RETURNING challenge_hash, purpose, tenant_id, user_id, rp_id, created_at, expires_at`,
    purgeExpired: async (now: number) => pg.run`DELETE FROM passkey_challenges WHERE expires_at <= ${now}`,
  };
  return store satisfies PasskeysStore;
}
