import type { MembersStore, MemberChange, MemberChangePlan, Refusal } from "../../team/members-repo";
import { type Db, writeTxAsync } from "../../db/database";
import type { AuditEntry } from "../../security/repo";
import { type SqliteSecurityStore } from "./security";
import type { UserRow } from "../../team/repo";
import type { AppendEventsInTx } from "./deals";
import { SYSTEM_ACTOR, actorOfAudit } from "../../events/repo";
import { memberChangedEvents } from "../../events/changes";

/**
 * SQL of admins managing members: role and profile changes, removal, second-factor reset and
 * unlock. Each write checks what it depends on (the admin count, the profile, the target) and
 * writes in one IMMEDIATE transaction, so two admins demoting each other at once cannot both win.
 */
/** Moves a removed member's deals to another member (or to nobody), inside the removal's transaction. */
export type DealsReassignedInTx = (tenantId: string, fromUserId: string, to: UserRow | null, now: number) => number;
/** Copies a member's new name and address into their deals, inside the rename's transaction. */
export type AssigneeRenamedInTx = (tenantId: string, userId: string, fullName: string | null, email: string) => void;

export function createSqliteMembersStore(
  db: Db,
  others: { security: SqliteSecurityStore; dealsReassignedInTx: DealsReassignedInTx; assigneeRenamedInTx: AssigneeRenamedInTx; appendEventsInTx: AppendEventsInTx },
) {
  const byId = db.prepare<UserRow, [string, string]>("SELECT * FROM users WHERE tenant_id = ?1 AND id = ?2");
  const admins = db.prepare<{ n: number }, [string]>("SELECT count(*) AS n FROM users WHERE tenant_id = ?1 AND role = 'admin'");
  const profile = db.prepare<{ one: number }, [string, string]>("SELECT 1 AS one FROM profiles WHERE tenant_id = ?1 AND id = ?2");
  const update = db.prepare<never, [string, string, string | null, "admin" | "member", string | null, number]>(
    "UPDATE users SET full_name = ?3, role = ?4, profile_id = ?5, updated_at = ?6 WHERE tenant_id = ?1 AND id = ?2",
  );
  const remove = db.prepare<never, [string, string]>("DELETE FROM users WHERE tenant_id = ?1 AND id = ?2");
  // Pending invitations the removed member sent, or that were sent to their address, stop working.
  const revokeInvitations = db.prepare<never, [string, string, string, number]>(
    `UPDATE invitations SET revoked_at = ?4, updated_at = ?4
      WHERE tenant_id = ?1 AND (invited_by = ?2 OR email = ?3) AND accepted_at IS NULL AND revoked_at IS NULL`,
  );
  const deleteTotp = db.prepare<never, [string, string]>("DELETE FROM user_totp WHERE tenant_id = ?1 AND user_id = ?2");
  const deleteCodes = db.prepare<never, [string, string]>("DELETE FROM backup_codes WHERE tenant_id = ?1 AND user_id = ?2");
  const deleteChallenges = db.prepare<never, [string, string]>("DELETE FROM sign_in_challenges WHERE tenant_id = ?1 AND user_id = ?2");
  const totpEnabled = db.prepare<{ enabled: number }, [string, string]>(
    "SELECT enabled_at IS NOT NULL AS enabled FROM user_totp WHERE tenant_id = ?1 AND user_id = ?2",
  );
  const unlockTotp = db.prepare<never, [string, string, number]>(
    "UPDATE user_totp SET failures = 0, locked_until = NULL, updated_at = ?3 WHERE tenant_id = ?1 AND user_id = ?2",
  );

  /** Would this change leave the organization without an admin? */
  const removesLastAdmin = (tenantId: string, u: UserRow) => u.role === "admin" && admins.get(tenantId)!.n <= 1;

  const store = {
    /**
     * Applies a change and what `plan` asks for (audit rows, the name copied into deals).
     * Answers the new row, or why it was refused.
     */
    async change(
      tenantId: string,
      id: string,
      c: MemberChange,
      now: number,
      plan: (before: UserRow, after: UserRow) => MemberChangePlan,
    ): Promise<UserRow | Refusal> {
      return writeTxAsync(db, () => {
        const before = byId.get(tenantId, id);
        if (!before) return "not_found";
        if (c.role === "member" && removesLastAdmin(tenantId, before)) return "last_admin";
        if (c.profileId != null && !profile.get(tenantId, c.profileId)) return "profile_not_found";
        update.run(
          tenantId,
          id,
          c.fullName === undefined ? before.full_name : c.fullName,
          c.role ?? before.role,
          c.profileId === undefined ? before.profile_id : c.profileId,
          now,
        );
        const after = byId.get(tenantId, id)!;
        const also = plan(before, after);
        if (also.propagateRename) others.assigneeRenamedInTx(tenantId, after.id, after.full_name, after.email);
        for (const e of also.audits) others.security.auditInTx(e, now);
        others.appendEventsInTx(tenantId, memberChangedEvents(before, after, also.actor ?? SYSTEM_ACTOR), now);
        return after;
      });
    },

    /**
     * Removes a member: their deals go to `reassignTo` (or nobody), pending invitations they sent or
     * that name their address are revoked, and the row goes, taking (by ON DELETE CASCADE) their
     * sessions, sign-in challenges, magic links, second factor and backup codes with it.
     */
    async remove(
      tenantId: string,
      id: string,
      reassignTo: string | null,
      now: number,
      audit: (u: UserRow, dealsMoved: number) => Omit<AuditEntry, "tenantId">,
    ): Promise<{ user: UserRow; dealsMoved: number } | Refusal> {
      return writeTxAsync(db, () => {
        const user = byId.get(tenantId, id);
        if (!user) return "not_found";
        let to: UserRow | null = null;
        if (reassignTo !== null) {
          to = byId.get(tenantId, reassignTo) ?? null;
          if (!to) return "reassign_not_found";
        }
        if (removesLastAdmin(tenantId, user)) return "last_admin";
        const dealsMoved = others.dealsReassignedInTx(tenantId, id, to, now);
        revokeInvitations.run(tenantId, id, user.email, now);
        remove.run(tenantId, id);
        const entry = audit(user, dealsMoved);
        others.security.auditInTx({ ...entry, tenantId }, now);
        others.appendEventsInTx(tenantId, [{ type: "member.removed", actor: actorOfAudit(entry), data: { id, email: user.email, deals_moved: dealsMoved, reassigned_to: to?.id ?? null } }], now);
        return { user, dealsMoved };
      });
    },

    /** Turns a member's second factor off (enabled or pending): secret, backup codes and outstanding challenges. */
    async resetSecondFactor(tenantId: string, id: string, now: number, audit: (u: UserRow, wasEnabled: boolean) => Omit<AuditEntry, "tenantId">) {
      return writeTxAsync(db, (): UserRow | Refusal => {
        const user = byId.get(tenantId, id);
        if (!user) return "not_found";
        const wasEnabled = totpEnabled.get(tenantId, id)?.enabled === 1;
        deleteTotp.run(tenantId, id);
        deleteCodes.run(tenantId, id);
        deleteChallenges.run(tenantId, id);
        const entry = audit(user, wasEnabled);
        others.security.auditInTx({ ...entry, tenantId }, now);
        if (wasEnabled) others.appendEventsInTx(tenantId, [{ type: "user.two_factor_disabled", actor: actorOfAudit(entry), data: { user_id: id } }], now);
        return user;
      });
    },

    /** Lifts the second factor's lock; the caller clears the sign-in counter. */
    async unlock(tenantId: string, id: string, now: number, audit: (u: UserRow) => Omit<AuditEntry, "tenantId">) {
      return writeTxAsync(db, (): UserRow | Refusal => {
        const user = byId.get(tenantId, id);
        if (!user) return "not_found";
        unlockTotp.run(tenantId, id, now);
        others.security.auditInTx({ ...audit(user), tenantId }, now);
        return user;
      });
    },
  };
  return store satisfies MembersStore;
}

export type SqliteMembersStore = ReturnType<typeof createSqliteMembersStore>;
