import type { EventActor } from "../events/repo";
import type { AuditEntry } from "../security/repo";
import type { UserRow } from "./repo";

/** What a member change also writes, decided from the rows before and after. */
export interface MemberChangePlan {
  audits: AuditEntry[];
  /** Copy the new name and address into the deals assigned to the member (docs/interface.md#crm-records). */
  propagateRename: boolean;
  /** Who made the change, for its events (member.role_changed, member.updated); the system when absent. */
  actor?: EventActor;
}

export interface MemberChange {
  role?: "admin" | "member";
  /** undefined: unchanged; null: no profile. */
  profileId?: string | null;
  /** undefined: unchanged. */
  fullName?: string | null;
}

/** Why a guarded write did not happen. */
export type Refusal = "not_found" | "last_admin" | "profile_not_found" | "reassign_not_found";

/**
 * The store of admins managing members: role and profile changes, removal, second-factor reset and
 * unlock. Each write checks what it depends on (the admin count, the profile, the target) and
 * writes in one IMMEDIATE transaction, so two admins demoting each other at once cannot both win.
 */
export interface MembersStore {
  /**
   * Applies a change and, in the same transaction, what `plan` (a pure function of the old and new
   * rows) asks for: its audit rows, and the new name copied into the member's deals.
   * Answers the new row, or why it was refused.
   */
  change(tenantId: string, id: string, c: MemberChange, now: number, plan: (before: UserRow, after: UserRow) => MemberChangePlan): Promise<UserRow | Refusal>;
  /**
   * Removes a member: their deals go to `reassignTo` (or nobody), pending invitations they sent or
   * that name their address are revoked, and the row goes, taking (by ON DELETE CASCADE) their
   * sessions, sign-in challenges, magic links, second factor and backup codes with it.
   */
  remove(tenantId: string, id: string, reassignTo: string | null, now: number, audit: (u: UserRow, dealsMoved: number) => Omit<AuditEntry, "tenantId">): Promise<{
    user: UserRow;
    dealsMoved: number;
  } | Refusal>;
  /** Turns a member's second factor off (enabled or pending): secret, backup codes and outstanding challenges. */
  resetSecondFactor(tenantId: string, id: string, now: number, audit: (u: UserRow, wasEnabled: boolean) => Omit<AuditEntry, "tenantId">): Promise<UserRow | Refusal>;
  /** Lifts the second factor's lock; the caller clears the sign-in counter. */
  unlock(tenantId: string, id: string, now: number, audit: (u: UserRow) => Omit<AuditEntry, "tenantId">): Promise<UserRow | Refusal>;
}
