import type { NewSessionRow } from "../auth/repo";
import type { OutgoingMail } from "../mail/repo";
import type { AuditEntry } from "../security/repo";
import type { InvitationRow, InvitationStatus } from "./invitations-model";
import type { UserRow } from "./repo";

type Who = Pick<AuditEntry, "ip" | "userAgent">;

export interface InviteWrite {
  id: string;
  tenantId: string;
  email: string;
  /** The profile a new invitation gets (the one named, or the default). */
  profileId: string | null;
  /** A resend keeps the invitation's profile unless the request named one. */
  profileNamed: boolean;
  invitedBy: string;
  tokenHash: string;
  expiresAt: number;
  mail: OutgoingMail;
  who: Who;
}

export type InviteOutcome = {
  kind: "member";
} | {
  kind: "created" | "resent";
  row: InvitationRow;
};

export interface AcceptWrite {
  /** The invitation's organization (its token names it, or the legacy lookup found it). */
  tenantId: string;
  tokenHash: string;
  user: Pick<UserRow, "id" | "full_name" | "password_hash">;
  session: Omit<NewSessionRow, "tenant_id" | "user_id">;
  who: Who;
}

export type AcceptOutcome = {
  kind: "invalid";
} | {
  kind: "member";
} | {
  kind: "accepted";
  user: UserRow;
  invitation: InvitationRow;
};

export type RevokeOutcome = {
  kind: "missing";
} | {
  kind: "accepted";
} | {
  kind: "revoked";
  row: InvitationRow;
};

/** A re-issued link (Copy link): a fresh token and expiry on the pending invitation, no mail. */
export interface ReissueWrite {
  tenantId: string;
  id: string;
  /** The profile the caller's step-up check saw: the write is refused if a resend changed it since. */
  seenProfileId: string | null;
  by: string;
  tokenHash: string;
  expiresAt: number;
  who: Who;
}

export type ReissueOutcome = {
  kind: "missing";
} | {
  kind: "not_pending" | "changed";
  row: InvitationRow;
} | {
  kind: "reissued";
  row: InvitationRow;
};

/**
 * The store of invitations and the three transactions around them (invite or resend, accept, revoke).
 * Each check-and-write runs inside one BEGIN IMMEDIATE transaction: writers are serialized, so
 * two invites for one address cannot both see "no pending invitation", and two accepts of one
 * token cannot both see it unused.
 */
export interface InvitationsStore {
  byId: (tenantId: string, id: string) => Promise<InvitationRow | null>;
  /**
   * By (tenant, token hash). `tenantId` null: a token mailed before tokens named their tenant,
   * looked up in every organization (one probe of its key each).
   */
  byTokenHash: (tenantId: string | null, tokenHash: string) => Promise<InvitationRow | null>;
  page: (tenantId: string, status: InvitationStatus | null, now: number, limit: number, offset: number) => Promise<InvitationRow[]>;
  count: (tenantId: string, status: InvitationStatus | null, now: number) => Promise<number>;
  /** A first invitation, or a resend of the pending one (new token, new expiry, same id); its mail in the outbox. */
  invite(w: InviteWrite, now: number): Promise<InviteOutcome>;
  /** The new member, their session and the accepted invitation: all or nothing. */
  accept(w: AcceptWrite, now: number): Promise<AcceptOutcome>;
  /** A pending invitation's token hash and expiry replaced (the earlier link stops working), audited; no outbox row. */
  reissue(w: ReissueWrite, now: number): Promise<ReissueOutcome>;
  /** Revoking twice answers the same revoked invitation; an accepted one cannot be revoked. */
  revoke(tenantId: string, id: string, by: string, who: Who, now: number): Promise<RevokeOutcome>;
}
