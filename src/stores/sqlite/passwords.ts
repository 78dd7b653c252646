import type { PasswordNotice, PasswordStore } from "../../auth/password/repo";
import type { SqliteMailStore } from "./mail";
import { type Db, writeTxAsync } from "../../db/database";
import type { AuditEntry } from "../../security/repo";
import { type SqliteSecurityStore } from "./security";
import type { AccountTokenRow } from "../../auth/email/repo";
import { type SqliteAccountTokensStore } from "./account-tokens";

/**
 * SQL of a password being set: the new hash, the user's sessions and 2FA challenges ended, in the
 * same commit. (The session statements mirror auth/repo.ts's; they live here so the whole change
 * is one transaction.)
 */
export function createSqlitePasswordStore(db: Db, others: { security: SqliteSecurityStore; tokens: SqliteAccountTokensStore; mail: Pick<SqliteMailStore, "enqueueInTx"> }) {
  const setHash = db.prepare<never, [string, string, string, number]>(
    "UPDATE users SET password_hash = ?3, updated_at = ?4 WHERE tenant_id = ?1 AND id = ?2",
  );
  // ?3: the session to keep (the caller's, on a change), or '' for none (a reset).
  const endSessions = db.prepare<never, [string, string, string, number, string]>(
    "UPDATE sessions SET revoked_at = ?4, revoke_reason = ?5 WHERE tenant_id = ?1 AND user_id = ?2 AND id <> ?3 AND revoked_at IS NULL",
  );
  const endChallenges = db.prepare<never, [string, string]>("DELETE FROM sign_in_challenges WHERE tenant_id = ?1 AND user_id = ?2");
  const retireResets = db.prepare<never, [string, string, number]>(
    "UPDATE account_tokens SET used_at = ?3 WHERE tenant_id = ?1 AND user_id = ?2 AND purpose = 'password_reset' AND used_at IS NULL",
  );

  function setPasswordInTx(tenantId: string, userId: string, hash: string, keepSessionId: string, reason: string, now: number): number {
    setHash.run(tenantId, userId, hash, now);
    endChallenges.run(tenantId, userId);
    retireResets.run(tenantId, userId, now);
    return endSessions.run(tenantId, userId, keepSessionId, now, reason).changes;
  }

  const store = {
    /**
     * Spends a reset token and sets the password it was for: every session and challenge ends,
     * and the address counts as proven (the link reached it). Null when the token was used,
     * expired or unknown by the time the transaction ran.
     */
    reset: async (tenantId: string, tokenHash: string, hash: string, now: number, entry: (row: AccountTokenRow, revoked: number) => AuditEntry, notice?: PasswordNotice) =>
      writeTxAsync(db, () => {
        const row = others.tokens.consumeInTx(tenantId, tokenHash, "password_reset", now);
        if (!row) return null;
        const revoked = setPasswordInTx(row.tenant_id, row.user_id, hash, "", "password_reset", now);
        others.tokens.proveInTx(row.tenant_id, row.user_id, row.email, now);
        others.security.auditInTx(entry(row, revoked), now);
        if (notice) others.mail.enqueueInTx(notice(revoked), now);
        return { row, revoked };
      }),
    /** The signed-in user's new password; their other sessions end. Answers how many. */
    change: async (tenantId: string, userId: string, keepSessionId: string, hash: string, now: number, entry: (revoked: number) => AuditEntry, notice?: PasswordNotice) =>
      writeTxAsync(db, () => {
        const revoked = setPasswordInTx(tenantId, userId, hash, keepSessionId, "password_changed", now);
        others.security.auditInTx(entry(revoked), now);
        if (notice) others.mail.enqueueInTx(notice(revoked), now);
        return revoked;
      }),
  };
  return store satisfies PasswordStore;
}

export type SqlitePasswordStore = ReturnType<typeof createSqlitePasswordStore>;
