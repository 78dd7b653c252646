import type { PasswordNotice, PasswordStore } from "../../auth/password/repo";
import type { PgEnqueueInTx } from "./mail";
import type { AccountTokenRow } from "../../auth/email/repo";
import type { AuditEntry } from "../../security/repo";
import type { PostgresAccountTokensStore } from "./account-tokens";
import type { Pg, PgTx } from "./database";
import type { PgAuditInTx } from "./sessions";

type TokensInTx = Pick<PostgresAccountTokensStore, "consumeInTx" | "proveInTx">;

/**
 * A password being set, on PostgreSQL: the new hash, the user's sessions and 2FA challenges
 * ended, in the same commit (the same functions as the SQLite store).
 */
export function createPostgresPasswordStore(pg: Pg, others: { security: PgAuditInTx; tokens: TokensInTx; mail: PgEnqueueInTx }) {
  /**
   * `keepSessionId`: the session to keep (the caller's, on a change), or "" for none (a reset).
   * The user row is locked first: two password writes for one user run one after the other; then
   * challenges are deleted before sessions are revoked, as logout-all does.
   */
  async function setPasswordInTx(tx: PgTx, tenantId: string, userId: string, hash: string, keepSessionId: string, reason: string, now: number): Promise<number> {
    await tx.run`UPDATE users SET password_hash = ${hash}, updated_at = ${now} WHERE tenant_id = ${tenantId} AND id = ${userId}`;
    await tx.run`DELETE FROM sign_in_challenges WHERE tenant_id = ${tenantId} AND user_id = ${userId}`;
    await tx.run`UPDATE account_tokens SET used_at = ${now}
      WHERE tenant_id = ${tenantId} AND user_id = ${userId} AND purpose = 'password_reset' AND used_at IS NULL`;
    return tx.run`UPDATE sessions SET revoked_at = ${now}, revoke_reason = ${reason}
      WHERE tenant_id = ${tenantId} AND user_id = ${userId} AND id <> ${keepSessionId} AND revoked_at IS NULL`;
  }

  const store = {
    /**
     * Spends a reset token and sets the password it was for: every session and challenge ends,
     * and the address counts as proven (the link reached it). Null when the token was used,
     * expired or unknown by the time the transaction ran (of two resets at once, one wins).
     */
    reset: async (tenantId: string, tokenHash: string, hash: string, now: number, entry: (row: AccountTokenRow, revoked: number) => AuditEntry, notice?: PasswordNotice) =>
      pg.begin(async (tx): Promise<{ row: AccountTokenRow; revoked: number } | null> => {
        // consumeInTx locks the user row before the token's, as setPasswordInTx does before it
        // retires the tokens: a reset and a change of one user queue instead of deadlocking.
        const row = await others.tokens.consumeInTx(tx, tenantId, tokenHash, "password_reset", now);
        if (!row) return null;
        const revoked = await setPasswordInTx(tx, row.tenant_id, row.user_id, hash, "", "password_reset", now);
        await others.tokens.proveInTx(tx, row.tenant_id, row.user_id, row.email, now);
        await others.security.auditInTx(tx, entry(row, revoked), now);
        if (notice) await others.mail.enqueueInTx(tx, notice(revoked), now);
        return { row, revoked };
      }),
    /** The signed-in user's new password; their other sessions end. Answers how many. */
    change: async (tenantId: string, userId: string, keepSessionId: string, hash: string, now: number, entry: (revoked: number) => AuditEntry, notice?: PasswordNotice): Promise<number> =>
      pg.begin(async (tx) => {
        const revoked = await setPasswordInTx(tx, tenantId, userId, hash, keepSessionId, "password_changed", now);
        await others.security.auditInTx(tx, entry(revoked), now);
        if (notice) await others.mail.enqueueInTx(tx, notice(revoked), now);
        return revoked;
      }),
  };
  return store satisfies PasswordStore;
}

export type PostgresPasswordStore = ReturnType<typeof createPostgresPasswordStore>;
