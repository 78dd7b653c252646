import type { TwoFactorStore } from "../../auth/two-factor/repo";
import { appendEventsInTx } from "./events";
import type { Owner, TotpRow } from "../../auth/two-factor/repo";
import type { AuditEntry } from "../../security/repo";
import type { Pg, PgTx } from "./database";
import type { PgAuditInTx } from "./sessions";

type Audit = Omit<AuditEntry, "tenantId" | "userId">;

/** The owner's own doing (turned on or off from their security page). */
const factorEventInTx = (tx: PgTx, o: { tenantId: string; userId: string }, type: string, now: number) =>
  appendEventsInTx(tx, o.tenantId, [{ type, actor: { type: "user", id: o.userId }, data: { user_id: o.userId } }], now);

/**
 * The second factor on PostgreSQL: the TOTP row and the backup codes, the same functions as the
 * SQLite store. Every instance shares the row, so each check-and-change is one statement that
 * re-reads the row it locks: a step is accepted once, a backup code spent once, and concurrent
 * failures are each counted (the lock engages at exactly the limit). Transactions that touch both
 * tables lock the TOTP row first, then the codes, so two of them wait instead of deadlocking.
 */
export function createPostgresTwoFactorStore(pg: Pg, others: { security: PgAuditInTx }) {
  const auditInTx = (tx: PgTx, o: Owner, a: Audit, now: number) => others.security.auditInTx(tx, { ...a, tenantId: o.tenantId, userId: o.userId }, now);

  /** Locks an enabled factor's row for this transaction; false when there is none. */
  const lockEnabledInTx = async (tx: PgTx, o: Owner) =>
    (await tx.one`SELECT 1 AS ok FROM user_totp WHERE tenant_id = ${o.tenantId} AND user_id = ${o.userId} AND enabled_at IS NOT NULL FOR UPDATE`) !== null;

  async function putCodesInTx(tx: PgTx, o: Owner, hashes: string[], now: number) {
    await tx.run`DELETE FROM backup_codes WHERE tenant_id = ${o.tenantId} AND user_id = ${o.userId}`;
    if (hashes.length === 0) return;
    await tx.run`INSERT INTO backup_codes (tenant_id, code_hash, user_id, used_at, created_at)
      SELECT ${o.tenantId}, h, ${o.userId}, NULL, ${now} FROM unnest(${hashes}::text[]) AS h`;
  }

  const store = {
    get: async (o: Owner): Promise<TotpRow | null> =>
      pg.one<TotpRow>`SELECT user_id, tenant_id, secret_enc, enabled_at, last_step, failures, locked_until, created_at, updated_at
        FROM user_totp WHERE tenant_id = ${o.tenantId} AND user_id = ${o.userId}`,

    /**
     * A new pending secret and its backup codes, replacing a pending one. False when 2FA is on.
     * The upsert locks the row (even when its WHERE leaves an enabled one alone), so a racing
     * enable or second setup waits and then sees this one's outcome.
     */
    startSetup: async (o: Owner, secretEnc: string, codeHashes: string[], audit: Audit, now: number): Promise<boolean> =>
      pg.begin(async (tx) => {
        const n = await tx.run`INSERT INTO user_totp (tenant_id, user_id, secret_enc, enabled_at, last_step, failures, locked_until, created_at, updated_at)
          VALUES (${o.tenantId}, ${o.userId}, ${secretEnc}, NULL, NULL, 0, NULL, ${now}, ${now})
          ON CONFLICT (tenant_id, user_id) DO UPDATE SET
            secret_enc = excluded.secret_enc, last_step = NULL, failures = 0, locked_until = NULL,
            created_at = excluded.created_at, updated_at = excluded.updated_at
          WHERE user_totp.enabled_at IS NULL`;
        if (n === 0) return false;
        await putCodesInTx(tx, o, codeHashes, now);
        await auditInTx(tx, o, audit, now);
        return true;
      }),

    /** Turns a pending setup on at the code's step. False when it is no longer pending or the step is used. */
    enable: async (o: Owner, step: number, audit: Audit, now: number): Promise<boolean> =>
      pg.begin(async (tx) => {
        const n = await tx.run`UPDATE user_totp SET enabled_at = ${now}, last_step = ${step}, failures = 0, locked_until = NULL, updated_at = ${now}
          WHERE tenant_id = ${o.tenantId} AND user_id = ${o.userId} AND enabled_at IS NULL AND (last_step IS NULL OR last_step < ${step})`;
        if (n === 0) return false;
        await auditInTx(tx, o, audit, now);
        await factorEventInTx(tx, o, "user.two_factor_enabled", now);
        return true;
      }),

    /** Accepts a code's step once: false when that step (or a later one) was already accepted, on any instance. */
    acceptStep: async (o: Owner, step: number, now: number): Promise<boolean> =>
      (await pg.run`UPDATE user_totp SET last_step = ${step}, failures = 0, locked_until = NULL, updated_at = ${now}
        WHERE tenant_id = ${o.tenantId} AND user_id = ${o.userId} AND enabled_at IS NOT NULL AND (last_step IS NULL OR last_step < ${step})`) === 1,

    /** Spends a backup code of an enabled factor, once: of two uses at once, the second finds it used. */
    useBackupCode: async (o: Owner, codeHash: string, now: number): Promise<boolean> =>
      pg.begin(async (tx) => {
        if (!(await lockEnabledInTx(tx, o))) return false;
        const n = await tx.run`UPDATE backup_codes SET used_at = ${now}
          WHERE tenant_id = ${o.tenantId} AND code_hash = ${codeHash} AND user_id = ${o.userId} AND used_at IS NULL`;
        if (n === 0) return false;
        await tx.run`UPDATE user_totp SET failures = 0, locked_until = NULL, updated_at = ${now} WHERE tenant_id = ${o.tenantId} AND user_id = ${o.userId}`;
        return true;
      }),

    /**
     * Counts a failed code; answers the lock's end when this failure set it. One statement: under
     * concurrent failures each UPDATE waits for the previous one and adds to its count, so exactly
     * the failure that reaches `maxFailures` sets the lock (and restarts the count, failures = 0
     * being how it knows).
     */
    recordFailure: async (o: Owner, now: number, maxFailures: number, lockMs: number): Promise<{ lockedUntil: number | null }> => {
      const r = await pg.one<{ failures: number; locked_until: number | null }>`UPDATE user_totp SET
          failures     = CASE WHEN failures + 1 >= ${maxFailures} THEN 0 ELSE failures + 1 END,
          locked_until = CASE WHEN failures + 1 >= ${maxFailures} THEN ${now + lockMs}::bigint ELSE locked_until END,
          updated_at   = ${now}
        WHERE tenant_id = ${o.tenantId} AND user_id = ${o.userId} AND enabled_at IS NOT NULL
        RETURNING failures, locked_until`;
      return { lockedUntil: r && r.failures === 0 ? r.locked_until : null };
    },

    /** Removes an enabled factor and its backup codes. False when it was not enabled. */
    disable: async (o: Owner, audit: Audit, now: number): Promise<boolean> =>
      pg.begin(async (tx) => {
        const n = await tx.run`DELETE FROM user_totp WHERE tenant_id = ${o.tenantId} AND user_id = ${o.userId} AND enabled_at IS NOT NULL`;
        if (n === 0) return false;
        await tx.run`DELETE FROM backup_codes WHERE tenant_id = ${o.tenantId} AND user_id = ${o.userId}`;
        await auditInTx(tx, o, audit, now);
        await factorEventInTx(tx, o, "user.two_factor_disabled", now);
        return true;
      }),

    /** New backup codes for an enabled factor; the old ones are deleted. False when it is not enabled. */
    replaceBackupCodes: async (o: Owner, codeHashes: string[], audit: Audit, now: number): Promise<boolean> =>
      pg.begin(async (tx) => {
        if (!(await lockEnabledInTx(tx, o))) return false;
        await putCodesInTx(tx, o, codeHashes, now);
        await auditInTx(tx, o, audit, now);
        return true;
      }),

    remainingBackupCodes: async (o: Owner): Promise<number> =>
      (await pg.one<{ n: number }>`SELECT count(*) AS n FROM backup_codes WHERE tenant_id = ${o.tenantId} AND user_id = ${o.userId} AND used_at IS NULL`)!.n,
  };
  return store satisfies TwoFactorStore;
}

export type PostgresTwoFactorStore = ReturnType<typeof createPostgresTwoFactorStore>;
