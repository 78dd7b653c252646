import type { OutgoingMail } from "../../mail/repo";
import type { AuditEntry } from "../../security/repo";
import type { UserRow } from "../../team/repo";

export type AccountTokenPurpose = "password_reset" | "email_verify";

export interface AccountTokenRow {
  token_hash: string;
  purpose: AccountTokenPurpose;
  tenant_id: string;
  user_id: string;
  /** The address the token was mailed to. */
  email: string;
  expires_at: number;
  used_at: number | null;
  created_at: number;
}

/** An account a mailed token may be for, with the workspace its link must open. */
export type AccountTarget = UserRow & {
  subdomain: string;
  tenant_name: string;
};

/** How many workspaces one tenant-less request mails a link for (as magic links). */
export const MAX_WORKSPACES_PER_REQUEST = 5;

/**
 * The store of the account tokens (password resets and address verifications; they share one table)
 * and of the proof of an address.
 */
export interface AccountTokensStore {
  /**
   * The token row, its mail and its audit row in one transaction: all or nothing. The audit row's
   * detail gets the outbox row's id as `mail_id`.
   */
  issue: (r: Omit<AccountTokenRow, "used_at">, mail: OutgoingMail, audit: AuditEntry, now: number) => Promise<void>;
  target: (tenantId: string, email: string) => Promise<AccountTarget | null>;
  targetById: (tenantId: string, userId: string) => Promise<AccountTarget | null>;
  targetsAnyTenant: (email: string) => Promise<AccountTarget[]>;
  /**
   * A live token by (tenant, hash). `tenantId` null: a token mailed before tokens named their
   * tenant, looked up in every organization (one probe of its key each).
   */
  live: (tenantId: string | null, tokenHash: string, purpose: AccountTokenPurpose, now: number) => Promise<AccountTokenRow | null>;
  /** A verification link redeemed: the token spent, the address proven and the audit row, in one commit. */
  verify: (tenantId: string, tokenHash: string, now: number, entry: (row: AccountTokenRow, proven: boolean) => AuditEntry) => Promise<AccountTokenRow | null>;
  purgeExpired: (before: number) => Promise<number>;
}
