import type { OutgoingMail } from "../../mail/repo";
import type { AuditEntry } from "../../security/repo";
import type { UserRow } from "../../team/repo";

export interface MagicLinkRow {
  token_hash: string;
  tenant_id: string;
  user_id: string;
  expires_at: number;
  used_at: number | null;
  created_at: number;
}

/** A user an address may sign in as, with the workspace the link must open. */
export type MagicLinkTarget = UserRow & {
  subdomain: string;
  tenant_name: string;
};

/** How many workspaces one tenant-less request mails a link for. */
export const MAX_WORKSPACES_PER_REQUEST = 5;

/** The store of magic links. */
export interface MagicLinksStore {
  /**
   * A new link, its mail and its audit row in one transaction: either all exist or none does. The
   * audit row's detail gets the outbox row's id as `mail_id`.
   */
  issue: (r: Omit<MagicLinkRow, "used_at">, mail: OutgoingMail, audit: AuditEntry, now: number) => Promise<void>;
  target: (tenantId: string, email: string) => Promise<MagicLinkTarget | null>;
  targetsAnyTenant: (email: string) => Promise<MagicLinkTarget[]>;
  /**
   * A live link by (tenant, hash). `tenantId` null: a link mailed before links named their tenant,
   * looked up in every organization (one probe of its key each).
   */
  live: (tenantId: string | null, tokenHash: string, now: number) => Promise<MagicLinkRow | null>;
  /** Marks the link used; answers its user, or null when it was used, expired or unknown. */
  consume: (tokenHash: string, tenantId: string, now: number) => Promise<{
    tenant_id: string;
    user_id: string;
  } | null>;
  /** Deletes links that expired before `before`; answers how many. */
  purgeExpired: (before: number) => Promise<number>;
}
