import type { PasskeyChallengeRow, PasskeyRemoval, PasskeyRow, PasskeysStore } from "../../auth/passkeys/repo";
import { type Db, writeTxAsync } from "../../db/database";
import type { AuditEntry } from "../../security/repo";
import type { SqliteSecurityStore } from "./security";

type Stored = Omit<PasskeyRow, "backed_up"> & { backed_up: number };
const fromStored = (r: Stored | null): PasskeyRow | null => (r ? { ...r, backed_up: r.backed_up === 1 } : null);

/** SQL of passkeys and their challenges. Every statement is prepared once. */
export function createSqlitePasskeysStore(db: Db, others: { security: SqliteSecurityStore }) {
  const insert = db.prepare<never, [string, string, string, string, string, number, string, number, string, string, number]>(
    `INSERT INTO passkeys (tenant_id, id, user_id, credential_id, public_key, counter, transports, backed_up, rp_id, name, created_at, last_used_at)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, NULL) ON CONFLICT (tenant_id, credential_id) DO NOTHING`,
  );
  const list = db.prepare<Stored, [string, string]>("SELECT * FROM passkeys WHERE tenant_id = ?1 AND user_id = ?2 ORDER BY created_at, id");
  const byCredential = db.prepare<Stored, [string, string]>("SELECT * FROM passkeys WHERE tenant_id = ?1 AND credential_id = ?2");
  const rename = db.prepare<Stored, [string, string, string, string]>(
    "UPDATE passkeys SET name = ?4 WHERE tenant_id = ?1 AND user_id = ?2 AND id = ?3 RETURNING *",
  );
  const count = db.prepare<{ n: number }, [string, string]>("SELECT count(*) AS n FROM passkeys WHERE tenant_id = ?1 AND user_id = ?2");
  const remove = db.prepare<never, [string, string, string]>("DELETE FROM passkeys WHERE tenant_id = ?1 AND user_id = ?2 AND id = ?3");
  const exists = db.prepare<{ x: number }, [string, string, string]>("SELECT 1 AS x FROM passkeys WHERE tenant_id = ?1 AND user_id = ?2 AND id = ?3");
  // Forward only; an authenticator that keeps no counter (0 then and now) may sign any number of times.
  const recordUse = db.prepare<never, [string, string, number, number, number]>(
    `UPDATE passkeys SET counter = ?3, backed_up = ?4, last_used_at = ?5
      WHERE tenant_id = ?1 AND id = ?2 AND (counter < ?3 OR (counter = 0 AND ?3 = 0))`,
  );
  const openChallenge = db.prepare<never, [string, string, string | null, string | null, string, number, number]>(
    "INSERT INTO passkey_challenges (challenge_hash, purpose, tenant_id, user_id, rp_id, created_at, expires_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
  );
  const spend = db.prepare<PasskeyChallengeRow, [string, string | null, number]>(
    "DELETE FROM passkey_challenges WHERE challenge_hash = ?1 AND tenant_id IS ?2 AND expires_at > ?3 RETURNING *",
  );
  const purge = db.prepare<never, [number]>("DELETE FROM passkey_challenges WHERE expires_at <= ?1");

  const store = {
    insert: async (r: PasskeyRow, audit: AuditEntry, now: number) =>
      writeTxAsync(db, () => {
        const n = insert.run(r.tenant_id, r.id, r.user_id, r.credential_id, r.public_key, r.counter, r.transports, r.backed_up ? 1 : 0, r.rp_id, r.name, r.created_at).changes;
        if (n === 0) return false;
        others.security.auditInTx(audit, now);
        return true;
      }),
    list: async (tenantId: string, userId: string) => list.all(tenantId, userId).map((r) => fromStored(r)!),
    byCredential: async (tenantId: string, credentialId: string) => fromStored(byCredential.get(tenantId, credentialId)),
    rename: async (tenantId: string, userId: string, id: string, name: string, audit: AuditEntry, now: number) =>
      writeTxAsync(db, () => {
        const row = fromStored(rename.get(tenantId, userId, id, name));
        if (row) others.security.auditInTx(audit, now);
        return row;
      }),
    remove: async (tenantId: string, userId: string, id: string, keepOne: boolean, audit: AuditEntry, now: number) =>
      writeTxAsync(db, (): PasskeyRemoval => {
        if (!exists.get(tenantId, userId, id)) return "not_found";
        if (keepOne && count.get(tenantId, userId)!.n <= 1) return "last";
        remove.run(tenantId, userId, id);
        others.security.auditInTx(audit, now);
        return "removed";
      }),
    recordUse: async (tenantId: string, id: string, counter: number, backedUp: boolean, now: number) =>
      writeTxAsync(db, () => recordUse.run(tenantId, id, counter, backedUp ? 1 : 0, now).changes > 0),
    openChallenge: async (c: PasskeyChallengeRow) => {
      await writeTxAsync(db, () => openChallenge.run(c.challenge_hash, c.purpose, c.tenant_id, c.user_id, c.rp_id, c.created_at, c.expires_at));
    },
    spendChallenge: async (hash: string, tenantId: string | null, now: number) => writeTxAsync(db, () => spend.get(hash, tenantId, now) ?? null),
    purgeExpired: async (now: number) => writeTxAsync(db, () => purge.run(now).changes),
  };
  return store satisfies PasskeysStore;
}

export type SqlitePasskeysStore = ReturnType<typeof createSqlitePasskeysStore>;
