import type { InvitationsStore, InviteWrite, InviteOutcome, AcceptWrite, AcceptOutcome, ReissueOutcome, ReissueWrite, RevokeOutcome } from "../../team/invitations-repo";
import type { NewSessionRow } from "../../auth/repo";
import { type SqliteSessionsStore } from "./sessions";
import { type Db, writeTxAsync } from "../../db/database";
import { keyCreatedInTx } from "./idempotency";
import type { OutgoingMail } from "../../mail/repo";
import { type SqliteMailStore } from "./mail";
import type { AuditEntry } from "../../security/repo";
import { type SqliteSecurityStore } from "./security";
import { type InvitationRow, type InvitationStatus, statusOf } from "../../team/invitations-model";
import type { UserRow } from "../../team/repo";
import { type SqliteUsersStore } from "./users";
import type { AppendEventsInTx } from "./deals";
import { userActor } from "../../events/repo";
import { invitationData, memberData } from "../../events/changes";

type Who = Pick<AuditEntry, "ip" | "userAgent">;

/** The status a row has at `?2`, in SQL: the same order as statusOf. */
const STATUS_SQL = `CASE WHEN accepted_at IS NOT NULL THEN 'accepted' WHEN revoked_at IS NOT NULL THEN 'revoked'
  WHEN expires_at <= ?2 THEN 'expired' ELSE 'pending' END`;

/**
 * SQL of invitations and the three transactions around them (invite or resend, accept, revoke).
 * Each check-and-write runs inside one BEGIN IMMEDIATE transaction: writers are serialized, so
 * two invites for one address cannot both see "no pending invitation", and two accepts of one
 * token cannot both see it unused.
 */
export function createSqliteInvitationsStore(db: Db, others: { users: SqliteUsersStore; sessions: SqliteSessionsStore; security: SqliteSecurityStore; mail: SqliteMailStore; appendEventsInTx: AppendEventsInTx }) {
  const byId = db.prepare<InvitationRow, [string, string]>("SELECT * FROM invitations WHERE tenant_id = ?1 AND id = ?2");
  // The token is the credential and names its tenant: the one read that is not by tenant.
  // By its hash and, unless it predates tokens that name their tenant, its tenant.
  const byTokenHash = db.prepare<InvitationRow, [string, string | null]>("SELECT * FROM invitations WHERE token_hash = ?1 AND (?2 IS NULL OR tenant_id = ?2)");
  const pendingFor = db.prepare<InvitationRow, [string, string, number]>(
    `SELECT * FROM invitations WHERE tenant_id = ?1 AND email = ?2 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > ?3
      ORDER BY created_at DESC LIMIT 1`,
  );
  const insert = db.prepare<never, [string, string, string, string | null, string, string, number, number]>(
    `INSERT INTO invitations (id, tenant_id, email, profile_id, invited_by, token_hash, expires_at, created_at, updated_at)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8)`,
  );
  const resend = db.prepare<never, [string, string, string, number, string | null, string, number]>(
    "UPDATE invitations SET token_hash = ?3, expires_at = ?4, profile_id = ?5, invited_by = ?6, updated_at = ?7 WHERE tenant_id = ?1 AND id = ?2",
  );
  const reissue = db.prepare<never, [string, string, string, number, number]>(
    "UPDATE invitations SET token_hash = ?3, expires_at = ?4, updated_at = ?5 WHERE tenant_id = ?1 AND id = ?2",
  );
  // Guarded again in SQL: only a pending invitation is accepted.
  const markAccepted = db.prepare<never, [string, string, string, number]>(
    `UPDATE invitations SET accepted_at = ?4, accepted_user_id = ?3, updated_at = ?4
      WHERE tenant_id = ?1 AND id = ?2 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > ?4`,
  );
  const markRevoked = db.prepare<never, [string, string, number]>(
    "UPDATE invitations SET revoked_at = ?3, updated_at = ?3 WHERE tenant_id = ?1 AND id = ?2 AND accepted_at IS NULL AND revoked_at IS NULL",
  );
  const page = db.prepare<InvitationRow, [string, number, string | null, number, number]>(
    `SELECT * FROM invitations WHERE tenant_id = ?1 AND (?3 IS NULL OR ${STATUS_SQL} = ?3)
      ORDER BY created_at DESC, id DESC LIMIT ?4 OFFSET ?5`,
  );
  const count = db.prepare<{ n: number }, [string, number, string | null]>(
    `SELECT count(*) AS n FROM invitations WHERE tenant_id = ?1 AND (?3 IS NULL OR ${STATUS_SQL} = ?3)`,
  );

  const audit = (tenantId: string, userId: string | null, action: string, row: InvitationRow, who: Who, now: number) =>
    others.security.auditInTx(
      { tenantId, userId, action, ip: who.ip, userAgent: who.userAgent, detail: { invitation_id: row.id, email: row.email, profile_id: row.profile_id } },
      now,
    );

  const store = {
    byId: async (tenantId: string, id: string) => byId.get(tenantId, id),
    byTokenHash: async (tenantId: string | null, tokenHash: string) => byTokenHash.get(tokenHash, tenantId),
    page: async (tenantId: string, status: InvitationStatus | null, now: number, limit: number, offset: number) =>
      page.all(tenantId, now, status, limit, offset),
    count: async (tenantId: string, status: InvitationStatus | null, now: number) => count.get(tenantId, now, status)!.n,

    /** A first invitation, or a resend of the pending one (new token, new expiry, same id); its mail in the outbox. */
    async invite(w: InviteWrite, now: number): Promise<InviteOutcome> {
      return writeTxAsync(db, (): InviteOutcome => {
        if (others.users.byEmailInTx(w.tenantId, w.email)) return { kind: "member" };
        const pending = pendingFor.get(w.tenantId, w.email, now);
        let kind: "created" | "resent";
        let id: string;
        if (pending) {
          kind = "resent";
          id = pending.id;
          resend.run(w.tenantId, id, w.tokenHash, w.expiresAt, w.profileNamed ? w.profileId : pending.profile_id, w.invitedBy, now);
        } else {
          kind = "created";
          id = w.id;
          insert.run(id, w.tenantId, w.email, w.profileId, w.invitedBy, w.tokenHash, w.expiresAt, now);
        }
        others.mail.enqueueInTx(w.mail, now);
        keyCreatedInTx(db, id);
        const row = byId.get(w.tenantId, id)!;
        audit(w.tenantId, w.invitedBy, kind === "created" ? "invitation.created" : "invitation.resent", row, w.who, now);
        others.appendEventsInTx(w.tenantId, [{ type: "invitation.created", actor: userActor({ userId: w.invitedBy }), data: { ...invitationData(row), resent: kind === "resent" } }], now);
        return { kind, row };
      });
    },

    /** The new member, their session and the accepted invitation: all or nothing. */
    async accept(w: AcceptWrite, now: number): Promise<AcceptOutcome> {
      return writeTxAsync(db, (): AcceptOutcome => {
        const inv = byTokenHash.get(w.tokenHash, w.tenantId);
        if (!inv || statusOf(inv, now) !== "pending") return { kind: "invalid" };
        if (others.users.byEmailInTx(inv.tenant_id, inv.email)) return { kind: "member" };
        const profile = inv.profile_id ? others.users.profileInTx(inv.tenant_id, inv.profile_id) : undefined;
        const user: UserRow = {
          ...w.user,
          tenant_id: inv.tenant_id,
          email: inv.email,
          role: profile?.is_admin ? "admin" : "member",
          profile_id: profile?.id ?? null,
          created_at: now,
          updated_at: now,
          // Opening the invitation's mail proved the address.
          email_verified_at: now,
        };
        others.users.insertInTx(user);
        if (markAccepted.run(inv.tenant_id, inv.id, user.id, now).changes !== 1) throw new Error("invitation changed under a write lock");
        others.sessions.insertInTx({ ...w.session, tenant_id: inv.tenant_id, user_id: user.id });
        const accepted = byId.get(inv.tenant_id, inv.id)!;
        audit(inv.tenant_id, user.id, "invitation.accepted", accepted, w.who, now);
        const actor = userActor({ userId: user.id });
        others.appendEventsInTx(inv.tenant_id, [
          { type: "invitation.accepted", actor, data: { ...invitationData(accepted), user_id: user.id } },
          { type: "member.joined", actor, data: memberData(user) },
        ], now);
        return { kind: "accepted", user, invitation: accepted };
      });
    },

    /** A pending invitation's token hash and expiry replaced (the earlier link stops working), audited; no outbox row. */
    async reissue(w: ReissueWrite, now: number): Promise<ReissueOutcome> {
      return writeTxAsync(db, (): ReissueOutcome => {
        const row = byId.get(w.tenantId, w.id);
        if (!row) return { kind: "missing" };
        if (statusOf(row, now) !== "pending") return { kind: "not_pending", row };
        if (row.profile_id !== w.seenProfileId) return { kind: "changed", row };
        reissue.run(w.tenantId, w.id, w.tokenHash, w.expiresAt, now);
        const reissued = byId.get(w.tenantId, w.id)!;
        audit(w.tenantId, w.by, "invitation.link_copied", reissued, w.who, now);
        // A resend without its mail: live screens learn the new expiry as they do a resend's.
        others.appendEventsInTx(w.tenantId, [{ type: "invitation.created", actor: userActor({ userId: w.by }), data: { ...invitationData(reissued), resent: true } }], now);
        return { kind: "reissued", row: reissued };
      });
    },

    /** Revoking twice answers the same revoked invitation; an accepted one cannot be revoked. */
    async revoke(tenantId: string, id: string, by: string, who: Who, now: number): Promise<RevokeOutcome> {
      return writeTxAsync(db, (): RevokeOutcome => {
        const row = byId.get(tenantId, id);
        if (!row) return { kind: "missing" };
        if (row.accepted_at !== null) return { kind: "accepted" };
        if (row.revoked_at !== null) return { kind: "revoked", row };
        markRevoked.run(tenantId, id, now);
        const revoked = byId.get(tenantId, id)!;
        audit(tenantId, by, "invitation.revoked", revoked, who, now);
        others.appendEventsInTx(tenantId, [{ type: "invitation.revoked", actor: userActor({ userId: by }), data: invitationData(revoked) }], now);
        return { kind: "revoked", row: revoked };
      });
    },
  };
  return store satisfies InvitationsStore;
}

export type SqliteInvitationsStore = ReturnType<typeof createSqliteInvitationsStore>;
