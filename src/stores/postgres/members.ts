import { appendEventsInTx } from "./events";
import { SYSTEM_ACTOR, actorOfAudit } from "../../events/repo";
import { memberChangedEvents } from "../../events/changes";
import type { MembersStore } from "../../team/members-repo";
import type { AuditEntry } from "../../security/repo";
import type { MemberChange, MemberChangePlan, Refusal } from "../../team/members-repo";
import type { UserRow } from "../../team/repo";
import type { Pg, PgTx } from "./database";
import type { PostgresSecurityStore } from "./security";
import { directoryDeleteInTx } from "./user-directory";

/** The CRM's writes inside a member's change or removal (its copies of the member's name). */
export interface MemberHooks {
  /** Moves a removed member's deals to another member (or to nobody); answers how many moved. */
  dealsReassignedInTx(tx: PgTx, tenantId: string, fromUserId: string, to: UserRow | null, now: number): Promise<number>;
  /** A member's new name and address copied onto what the CRM keeps of them. */
  assigneeRenamedInTx(tx: PgTx, tenantId: string, userId: string, fullName: string | null, email: string): Promise<unknown>;
}

/**
 * Admins managing members on PostgreSQL: role and profile changes, removal, second-factor reset
 * and unlock. Transactions run side by side here, so "is this the last admin?" cannot be a plain
 * count: every change and removal first locks the organization's admin rows (in id order, so two
 * writers never wait on each other in a cycle), then the target. Two admins demoting each other
 * at once: the second waits for the first, then counts the admins as they are after it (READ
 * COMMITTED rechecks a locked row), finds one, and is refused.
 */
export function createPostgresMembersStore(pg: Pg, others: MemberHooks & { security: PostgresSecurityStore }) {
  /** Locks the admin rows; answers how many admins there are now. */
  const lockAdmins = async (tx: PgTx, tenantId: string) =>
    (await tx.all`SELECT id FROM users WHERE tenant_id = ${tenantId} AND role = 'admin' ORDER BY id FOR NO KEY UPDATE`).length;
  const lockUser = (tx: PgTx, tenantId: string, id: string) => tx.one<UserRow>`SELECT * FROM users WHERE tenant_id = ${tenantId} AND id = ${id} FOR NO KEY UPDATE`;
  const byId = (tx: PgTx, tenantId: string, id: string) => tx.one<UserRow>`SELECT * FROM users WHERE tenant_id = ${tenantId} AND id = ${id}`;

  const store = {
    /**
     * Applies a change and what `plan` asks for (audit rows, the name copied into deals), in one
     * transaction. Answers the new row, or why it was refused.
     */
    async change(
      tenantId: string,
      id: string,
      c: MemberChange,
      now: number,
      plan: (before: UserRow, after: UserRow) => MemberChangePlan,
    ): Promise<UserRow | Refusal> {
      return pg.begin(async (tx): Promise<UserRow | Refusal> => {
        const admins = await lockAdmins(tx, tenantId);
        const before = await lockUser(tx, tenantId, id);
        if (!before) return "not_found";
        if (c.role === "member" && before.role === "admin" && admins <= 1) return "last_admin";
        if (c.profileId != null && !(await tx.one`SELECT 1 AS one FROM profiles WHERE tenant_id = ${tenantId} AND id = ${c.profileId}`)) {
          return "profile_not_found";
        }
        const after = (await tx.one<UserRow>`
          UPDATE users SET full_name = ${c.fullName === undefined ? before.full_name : c.fullName}::text,
                           role = ${c.role ?? before.role},
                           profile_id = ${c.profileId === undefined ? before.profile_id : c.profileId}::text,
                           updated_at = ${now}::bigint
           WHERE tenant_id = ${tenantId} AND id = ${id}
          RETURNING *`)!;
        const also = plan(before, after);
        if (also.propagateRename) await others.assigneeRenamedInTx(tx, tenantId, after.id, after.full_name, after.email);
        for (const a of also.audits) await others.security.auditInTx(tx, a, now);
        await appendEventsInTx(tx, tenantId, memberChangedEvents(before, after, also.actor ?? SYSTEM_ACTOR), now);
        return after;
      });
    },

    /**
     * Removes a member: their deals go to `reassignTo` (or nobody), pending invitations they sent or
     * that name their address are revoked, and the row goes, taking (ON DELETE CASCADE) their
     * sessions, sign-in challenges, magic links, second factor and backup codes with it.
     */
    async remove(
      tenantId: string,
      id: string,
      reassignTo: string | null,
      now: number,
      audit: (u: UserRow, dealsMoved: number) => Omit<AuditEntry, "tenantId">,
    ): Promise<{ user: UserRow; dealsMoved: number } | Refusal> {
      return pg.begin(async (tx): Promise<{ user: UserRow; dealsMoved: number } | Refusal> => {
        const admins = await lockAdmins(tx, tenantId);
        const user = await lockUser(tx, tenantId, id);
        if (!user) return "not_found";
        let to: UserRow | null = null;
        if (reassignTo !== null) {
          // Locked too (FOR KEY SHARE): the member taking the deals cannot be removed meanwhile.
          to = await tx.one<UserRow>`SELECT * FROM users WHERE tenant_id = ${tenantId} AND id = ${reassignTo} FOR KEY SHARE`;
          if (!to) return "reassign_not_found";
        }
        if (user.role === "admin" && admins <= 1) return "last_admin";
        const dealsMoved = await others.dealsReassignedInTx(tx, tenantId, id, to, now);
        await tx.run`UPDATE invitations SET revoked_at = ${now}::bigint, updated_at = ${now}::bigint
                      WHERE tenant_id = ${tenantId} AND (invited_by = ${id} OR email = ${user.email})
                        AND accepted_at IS NULL AND revoked_at IS NULL`;
        await tx.run`DELETE FROM users WHERE tenant_id = ${tenantId} AND id = ${id}`;
        await directoryDeleteInTx(tx, tenantId, id, user.email);
        const entry = audit(user, dealsMoved);
        await others.security.auditInTx(tx, { ...entry, tenantId }, now);
        await appendEventsInTx(tx, tenantId, [{ type: "member.removed", actor: actorOfAudit(entry), data: { id, email: user.email, deals_moved: dealsMoved, reassigned_to: to?.id ?? null } }], now);
        return { user, dealsMoved };
      });
    },

    /** Turns a member's second factor off (enabled or pending): secret, backup codes and outstanding challenges. */
    async resetSecondFactor(tenantId: string, id: string, now: number, audit: (u: UserRow, wasEnabled: boolean) => Omit<AuditEntry, "tenantId">) {
      return pg.begin(async (tx): Promise<UserRow | Refusal> => {
        const user = await byId(tx, tenantId, id);
        if (!user) return "not_found";
        // DELETE … RETURNING reads what it removed: two resets at once cannot both report "was enabled".
        const gone = await tx.all<{ enabled: number }>`
          DELETE FROM user_totp WHERE tenant_id = ${tenantId} AND user_id = ${id}
          RETURNING CASE WHEN enabled_at IS NOT NULL THEN 1 ELSE 0 END AS enabled`;
        await tx.run`DELETE FROM backup_codes WHERE tenant_id = ${tenantId} AND user_id = ${id}`;
        await tx.run`DELETE FROM sign_in_challenges WHERE tenant_id = ${tenantId} AND user_id = ${id}`;
        const wasEnabled = gone[0]?.enabled === 1;
        const entry = audit(user, wasEnabled);
        await others.security.auditInTx(tx, { ...entry, tenantId }, now);
        if (wasEnabled) await appendEventsInTx(tx, tenantId, [{ type: "user.two_factor_disabled", actor: actorOfAudit(entry), data: { user_id: id } }], now);
        return user;
      });
    },

    /** Lifts the second factor's lock; the caller clears the sign-in counter. */
    async unlock(tenantId: string, id: string, now: number, audit: (u: UserRow) => Omit<AuditEntry, "tenantId">) {
      return pg.begin(async (tx): Promise<UserRow | Refusal> => {
        const user = await byId(tx, tenantId, id);
        if (!user) return "not_found";
        await tx.run`UPDATE user_totp SET failures = 0, locked_until = NULL, updated_at = ${now}::bigint WHERE tenant_id = ${tenantId} AND user_id = ${id}`;
        await others.security.auditInTx(tx, { ...audit(user), tenantId }, now);
        return user;
      });
    },
  };
  return store satisfies MembersStore;
}

export type PostgresMembersStore = ReturnType<typeof createPostgresMembersStore>;
