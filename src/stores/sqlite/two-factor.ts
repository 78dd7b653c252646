import type { TwoFactorStore, TotpRow, Owner } from "../../auth/two-factor/repo";
import type { AppendEventsInTx } from "./deals";
import { type Db, writeTxAsync } from "../../db/database";
import type { AuditEntry } from "../../security/repo";
import { type SqliteSecurityStore } from "./security";

type Audit = Omit<AuditEntry, "tenantId" | "userId">;

/** SQL of the second factor: the TOTP row and the backup codes. Every statement is prepared once. */
export function createSqliteTwoFactorStore(db: Db, others: { security: SqliteSecurityStore; appendEventsInTx?: AppendEventsInTx }) {
  const get = db.prepare<TotpRow, [string, string]>("SELECT * FROM user_totp WHERE tenant_id = ?1 AND user_id = ?2");
  // A pending setup is replaced; an enabled one is left alone (changes = 0 tells the caller).
  const upsertPending = db.prepare<never, [string, string, string, number]>(
    `INSERT INTO user_totp (user_id, tenant_id, secret_enc, enabled_at, last_step, failures, locked_until, created_at, updated_at)
     VALUES (?2, ?1, ?3, NULL, NULL, 0, NULL, ?4, ?4)
     ON CONFLICT (user_id) DO UPDATE SET
       secret_enc = excluded.secret_enc, last_step = NULL, failures = 0, locked_until = NULL,
       created_at = excluded.created_at, updated_at = excluded.updated_at
     WHERE user_totp.enabled_at IS NULL AND user_totp.tenant_id = excluded.tenant_id`,
  );
  // Check-and-advance in one statement: of two requests carrying the same code, one moves it.
  const enable = db.prepare<never, [string, string, number, number]>(
    `UPDATE user_totp SET enabled_at = ?4, last_step = ?3, failures = 0, locked_until = NULL, updated_at = ?4
      WHERE tenant_id = ?1 AND user_id = ?2 AND enabled_at IS NULL AND (last_step IS NULL OR last_step < ?3)`,
  );
  const acceptStep = db.prepare<never, [string, string, number, number]>(
    `UPDATE user_totp SET last_step = ?3, failures = 0, locked_until = NULL, updated_at = ?4
      WHERE tenant_id = ?1 AND user_id = ?2 AND enabled_at IS NOT NULL AND (last_step IS NULL OR last_step < ?3)`,
  );
  const useCode = db.prepare<never, [string, string, string, number]>(
    "UPDATE backup_codes SET used_at = ?4 WHERE code_hash = ?3 AND tenant_id = ?1 AND user_id = ?2 AND used_at IS NULL",
  );
  const clearFailures = db.prepare<never, [string, string, number]>(
    "UPDATE user_totp SET failures = 0, locked_until = NULL, updated_at = ?3 WHERE tenant_id = ?1 AND user_id = ?2",
  );
  // Counted in one statement, so concurrent failures are all counted; the one that reaches the
  // limit sets the lock and starts the count again (failures = 0 is how the caller knows).
  const fail = db.prepare<{ failures: number; locked_until: number | null }, [string, string, number, number, number]>(
    `UPDATE user_totp SET
       failures     = CASE WHEN failures + 1 >= ?4 THEN 0 ELSE failures + 1 END,
       locked_until = CASE WHEN failures + 1 >= ?4 THEN ?3 + ?5 ELSE locked_until END,
       updated_at   = ?3
      WHERE tenant_id = ?1 AND user_id = ?2 AND enabled_at IS NOT NULL
      RETURNING failures, locked_until`,
  );
  const deleteTotp = db.prepare<never, [string, string]>("DELETE FROM user_totp WHERE tenant_id = ?1 AND user_id = ?2 AND enabled_at IS NOT NULL");
  const deleteCodes = db.prepare<never, [string, string]>("DELETE FROM backup_codes WHERE tenant_id = ?1 AND user_id = ?2");
  const insertCode = db.prepare<never, [string, string, string, number]>(
    "INSERT INTO backup_codes (code_hash, tenant_id, user_id, used_at, created_at) VALUES (?3, ?1, ?2, NULL, ?4)",
  );
  const remaining = db.prepare<{ n: number }, [string, string]>(
    "SELECT count(*) AS n FROM backup_codes WHERE tenant_id = ?1 AND user_id = ?2 AND used_at IS NULL",
  );

  const auditInTx = (o: Owner, a: Audit, now: number) => others.security.auditInTx({ ...a, tenantId: o.tenantId, userId: o.userId }, now);
  const putCodesInTx = (o: Owner, hashes: string[], now: number) => {
    deleteCodes.run(o.tenantId, o.userId);
    for (const h of hashes) insertCode.run(o.tenantId, o.userId, h, now);
  };

  // The owner's own doing (turned on or off from their security page).
  const factorEventInTx = (o: Owner, type: string, now: number) =>
    others.appendEventsInTx?.(o.tenantId, [{ type, actor: { type: "user", id: o.userId }, data: { user_id: o.userId } }], now);

  const store = {
    get: async (o: Owner) => get.get(o.tenantId, o.userId) ?? null,

    /** A new pending secret and its backup codes, replacing a pending one. False when 2FA is on. */
    async startSetup(o: Owner, secretEnc: string, codeHashes: string[], audit: Audit, now: number): Promise<boolean> {
      return writeTxAsync(db, () => {
        if (upsertPending.run(o.tenantId, o.userId, secretEnc, now).changes === 0) return false;
        putCodesInTx(o, codeHashes, now);
        auditInTx(o, audit, now);
        return true;
      });
    },

    /** Turns a pending setup on at the code's step. False when it is no longer pending or the step is used. */
    async enable(o: Owner, step: number, audit: Audit, now: number): Promise<boolean> {
      return writeTxAsync(db, () => {
        if (enable.run(o.tenantId, o.userId, step, now).changes === 0) return false;
        auditInTx(o, audit, now);
        factorEventInTx(o, "user.two_factor_enabled", now);
        return true;
      });
    },

    /** Accepts a code's step once: false when that step (or a later one) was already accepted. */
    acceptStep: async (o: Owner, step: number, now: number) => acceptStep.run(o.tenantId, o.userId, step, now).changes === 1,

    /** Spends a backup code of an enabled factor, once. */
    async useBackupCode(o: Owner, codeHash: string, now: number): Promise<boolean> {
      return writeTxAsync(db, () => {
        const row = get.get(o.tenantId, o.userId);
        if (!row || row.enabled_at === null) return false;
        if (useCode.run(o.tenantId, o.userId, codeHash, now).changes === 0) return false;
        clearFailures.run(o.tenantId, o.userId, now);
        return true;
      });
    },

    /** Counts a failed code; answers the lock's end when this failure set it. */
    async recordFailure(o: Owner, now: number, maxFailures: number, lockMs: number): Promise<{ lockedUntil: number | null }> {
      const r = fail.get(o.tenantId, o.userId, now, maxFailures, lockMs);
      return { lockedUntil: r && r.failures === 0 ? r.locked_until : null };
    },

    /** Removes an enabled factor and its backup codes. False when it was not enabled. */
    async disable(o: Owner, audit: Audit, now: number): Promise<boolean> {
      return writeTxAsync(db, () => {
        if (deleteTotp.run(o.tenantId, o.userId).changes === 0) return false;
        deleteCodes.run(o.tenantId, o.userId);
        auditInTx(o, audit, now);
        factorEventInTx(o, "user.two_factor_disabled", now);
        return true;
      });
    },

    /** New backup codes for an enabled factor; the old ones are deleted. False when it is not enabled. */
    async replaceBackupCodes(o: Owner, codeHashes: string[], audit: Audit, now: number): Promise<boolean> {
      return writeTxAsync(db, () => {
        const row = get.get(o.tenantId, o.userId);
        if (!row || row.enabled_at === null) return false;
        putCodesInTx(o, codeHashes, now);
        auditInTx(o, audit, now);
        return true;
      });
    },

    remainingBackupCodes: async (o: Owner) => remaining.get(o.tenantId, o.userId)!.n,
  };
  return store satisfies TwoFactorStore;
}

export type SqliteTwoFactorStore = ReturnType<typeof createSqliteTwoFactorStore>;
