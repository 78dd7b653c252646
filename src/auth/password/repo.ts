import type { OutgoingMail } from "../../mail/repo";
import type { AuditEntry } from "../../security/repo";
import type { AccountTokenRow } from "../email/repo";

/**
 * The store of a password being set: the new hash, the user's sessions and 2FA challenges ended, in the
 * same commit. (The session statements mirror auth/repo.ts's; they live here so the whole change
 * is one transaction.)
 */
/** The mail telling the owner their password changed (sign-in-notice.ts), written in the same commit; it learns how many sessions ended. */
export type PasswordNotice = (revoked: number) => OutgoingMail;

export interface PasswordStore {
  /**
   * Spends a reset token and sets the password it was for: every session and challenge ends,
   * and the address counts as proven (the link reached it). Null when the token was used,
   * expired or unknown by the time the transaction ran.
   */
  reset: (tenantId: string, tokenHash: string, hash: string, now: number, entry: (row: AccountTokenRow, revoked: number) => AuditEntry, notice?: PasswordNotice) => Promise<{
    row: AccountTokenRow;
    revoked: number;
  } | null>;
  /** The signed-in user's new password; their other sessions end. Answers how many. */
  change: (tenantId: string, userId: string, keepSessionId: string, hash: string, now: number, entry: (revoked: number) => AuditEntry, notice?: PasswordNotice) => Promise<number>;
}
