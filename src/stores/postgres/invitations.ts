import { appendEventsInTx } from "./events";
import { userActor } from "../../events/repo";
import { invitationData, memberData } from "../../events/changes";
import type { InvitationsStore } from "../../team/invitations-repo";
import type { NewSessionRow } from "../../auth/repo";
import type { AuditEntry } from "../../security/repo";
import type { InvitationRow, InvitationStatus } from "../../team/invitations-model";
import { statusOf } from "../../team/invitations-model";
import type { AcceptOutcome, AcceptWrite, InviteOutcome, InviteWrite, ReissueOutcome, ReissueWrite, RevokeOutcome } from "../../team/invitations-repo";
import type { UserRow } from "../../team/repo";
import { type Pg, type PgQueries, type PgTx, inEveryTenant } from "./database";
import { keyCreatedInTx } from "./idempotency";
import type { PostgresMailStore } from "./mail";
import type { PostgresSecurityStore } from "./security";
import { unnamedLinksWindow } from "./unnamed-links";
import type { PostgresUsersStore } from "./users";

type Who = Pick<AuditEntry, "ip" | "userAgent">;

/**
 * Invitations on PostgreSQL and the three transactions around them. SQLite serializes writers;
 * here transactions run side by side, so:
 * - invite and accept take a transaction-scoped advisory lock on (organization, address) first:
 *   two invites for one address cannot both see "no pending invitation", and an invite cannot
 *   slip in beside the accept that makes the address a member;
 * - accept and revoke lock the invitation row (FOR UPDATE) before reading its state: a token is
 *   spent once, and the second of two accepts at once sees it accepted and is answered "invalid".
 * Lock order is always address lock, then invitation row, so no two of them wait in a cycle.
 */
export function createPostgresInvitationsStore(
  pg: Pg,
  others: {
    users: PostgresUsersStore;
    sessions: { insertInTx(tx: PgTx, row: NewSessionRow): Promise<unknown> };
    security: PostgresSecurityStore;
    mail: PostgresMailStore;
  },
) {
  const byId = (q: PgQueries, tenantId: string, id: string) => q.one<InvitationRow>`SELECT * FROM invitations WHERE tenant_id = ${tenantId} AND id = ${id}`;
  const byTokenHash = (q: PgQueries, tenantId: string, tokenHash: string) =>
    q.one<InvitationRow>`SELECT * FROM invitations WHERE tenant_id = ${tenantId} AND token_hash = ${tokenHash}`;
  // A token mailed before tokens named their tenant: one probe of (tenant_id, token_hash) per
  // organization, only while such a token can still be live (unnamed-links.ts; the store has no
  // clock of its own: the window's end is a real expiry time, so real time it is).
  const unnamedLive = unnamedLinksWindow(pg);
  const byTokenHashAnyTenant = async (tokenHash: string) =>
    !(await unnamedLive(Date.now()))
      ? null
      : ((await pg.unsafe<InvitationRow>(`${inEveryTenant("invitations", "token_hash = $1")} LIMIT 1`, [tokenHash]))[0] ?? null);
  const lockAddress = (tx: PgTx, tenantId: string, email: string) =>
    tx.run`SELECT pg_advisory_xact_lock(hashtextextended(${JSON.stringify(["invitation", tenantId, email])}, 0))`;
  // The status a row has at `now`, in SQL: the same order as statusOf.
  const filter = (tenantId: string, status: InvitationStatus | null, now: number) =>
    pg.sql`tenant_id = ${tenantId} AND (${status}::text IS NULL OR
           CASE WHEN accepted_at IS NOT NULL THEN 'accepted' WHEN revoked_at IS NOT NULL THEN 'revoked'
                WHEN expires_at <= ${now}::bigint THEN 'expired' ELSE 'pending' END = ${status}::text)`;
  const audit = (tx: PgTx, tenantId: string, userId: string | null, action: string, row: InvitationRow, who: Who, now: number) =>
    others.security.auditInTx(
      tx,
      { tenantId, userId, action, ip: who.ip, userAgent: who.userAgent, detail: { invitation_id: row.id, email: row.email, profile_id: row.profile_id } },
      now,
    );

  const store = {
    byId: async (tenantId: string, id: string) => byId(pg, tenantId, id),
    byTokenHash: async (tenantId: string | null, tokenHash: string) =>
      tenantId !== null ? byTokenHash(pg, tenantId, tokenHash) : byTokenHashAnyTenant(tokenHash),
    page: async (tenantId: string, status: InvitationStatus | null, now: number, limit: number, offset: number) =>
      pg.all<InvitationRow>`SELECT * FROM invitations WHERE ${filter(tenantId, status, now)}
                             ORDER BY created_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`,
    count: async (tenantId: string, status: InvitationStatus | null, now: number) =>
      (await pg.one<{ n: number }>`SELECT count(*) AS n FROM invitations WHERE ${filter(tenantId, status, now)}`)!.n,

    /** A first invitation, or a resend of the pending one (new token, new expiry, same id); its mail in the outbox. */
    async invite(w: InviteWrite, now: number): Promise<InviteOutcome> {
      return pg.begin(async (tx): Promise<InviteOutcome> => {
        await lockAddress(tx, w.tenantId, w.email);
        if (await others.users.byEmailInTx(tx, w.tenantId, w.email)) return { kind: "member" };
        const pending = await tx.one<InvitationRow>`
          SELECT * FROM invitations
           WHERE tenant_id = ${w.tenantId} AND email = ${w.email} AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > ${now}::bigint
           ORDER BY created_at DESC LIMIT 1 FOR UPDATE`;
        let kind: "created" | "resent";
        let id: string;
        if (pending) {
          kind = "resent";
          id = pending.id;
          await tx.run`UPDATE invitations SET token_hash = ${w.tokenHash}, expires_at = ${w.expiresAt}::bigint,
                         profile_id = ${w.profileNamed ? w.profileId : pending.profile_id}::text, invited_by = ${w.invitedBy}, updated_at = ${now}::bigint
                        WHERE tenant_id = ${w.tenantId} AND id = ${id}`;
        } else {
          kind = "created";
          id = w.id;
          await tx.run`INSERT INTO invitations (id, tenant_id, email, profile_id, invited_by, token_hash, expires_at, created_at, updated_at)
                       VALUES (${id}, ${w.tenantId}, ${w.email}, ${w.profileId}::text, ${w.invitedBy}, ${w.tokenHash},
                               ${w.expiresAt}::bigint, ${now}::bigint, ${now}::bigint)`;
        }
        await others.mail.enqueueInTx(tx, w.mail, now);
        await keyCreatedInTx(tx, id);
        const row = (await byId(tx, w.tenantId, id))!;
        await audit(tx, w.tenantId, w.invitedBy, kind === "created" ? "invitation.created" : "invitation.resent", row, w.who, now);
        await appendEventsInTx(tx, w.tenantId, [{ type: "invitation.created", actor: userActor({ userId: w.invitedBy }), data: { ...invitationData(row), resent: kind === "resent" } }], now);
        return { kind, row };
      });
    },

    /** The new member, their session and the accepted invitation: all or nothing, and once. */
    async accept(w: AcceptWrite, now: number): Promise<AcceptOutcome> {
      // Which organization and address the token names; nothing is trusted until the row is locked.
      const seen = await byTokenHash(pg, w.tenantId, w.tokenHash);
      if (!seen || statusOf(seen, now) !== "pending") return { kind: "invalid" };
      return pg.begin(async (tx): Promise<AcceptOutcome> => {
        await lockAddress(tx, seen.tenant_id, seen.email);
        const inv = await tx.one<InvitationRow>`SELECT * FROM invitations WHERE tenant_id = ${w.tenantId} AND token_hash = ${w.tokenHash} FOR UPDATE`;
        if (!inv || statusOf(inv, now) !== "pending") return { kind: "invalid" };
        if (await others.users.byEmailInTx(tx, inv.tenant_id, inv.email)) return { kind: "member" };
        const profile = inv.profile_id ? await others.users.profileInTx(tx, inv.tenant_id, inv.profile_id) : null;
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
        await others.users.insertInTx(tx, user);
        const marked = await tx.run`
          UPDATE invitations SET accepted_at = ${now}::bigint, accepted_user_id = ${user.id}, updated_at = ${now}::bigint
           WHERE tenant_id = ${inv.tenant_id} AND id = ${inv.id} AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > ${now}::bigint`;
        if (marked !== 1) throw new Error("invitation changed under its row lock");
        await others.sessions.insertInTx(tx, { ...w.session, tenant_id: inv.tenant_id, user_id: user.id });
        const accepted = (await byId(tx, inv.tenant_id, inv.id))!;
        await audit(tx, inv.tenant_id, user.id, "invitation.accepted", accepted, w.who, now);
        const actor = userActor({ userId: user.id });
        await appendEventsInTx(tx, inv.tenant_id, [
          { type: "invitation.accepted", actor, data: { ...invitationData(accepted), user_id: user.id } },
          { type: "member.joined", actor, data: memberData(user) },
        ], now);
        return { kind: "accepted", user, invitation: accepted };
      });
    },

    /** A pending invitation's token hash and expiry replaced (the earlier link stops working), audited; no outbox row. */
    async reissue(w: ReissueWrite, now: number): Promise<ReissueOutcome> {
      return pg.begin(async (tx): Promise<ReissueOutcome> => {
        // The row lock orders this beside an accept or a revoke of the same invitation.
        const row = await tx.one<InvitationRow>`SELECT * FROM invitations WHERE tenant_id = ${w.tenantId} AND id = ${w.id} FOR UPDATE`;
        if (!row) return { kind: "missing" };
        if (statusOf(row, now) !== "pending") return { kind: "not_pending", row };
        if (row.profile_id !== w.seenProfileId) return { kind: "changed", row };
        const reissued = (await tx.one<InvitationRow>`
          UPDATE invitations SET token_hash = ${w.tokenHash}, expires_at = ${w.expiresAt}::bigint, updated_at = ${now}::bigint
           WHERE tenant_id = ${w.tenantId} AND id = ${w.id} RETURNING *`)!;
        await audit(tx, w.tenantId, w.by, "invitation.link_copied", reissued, w.who, now);
        // A resend without its mail: live screens learn the new expiry as they do a resend's.
        await appendEventsInTx(tx, w.tenantId, [{ type: "invitation.created", actor: userActor({ userId: w.by }), data: { ...invitationData(reissued), resent: true } }], now);
        return { kind: "reissued", row: reissued };
      });
    },

    /** Revoking twice answers the same revoked invitation; an accepted one cannot be revoked. */
    async revoke(tenantId: string, id: string, by: string, who: Who, now: number): Promise<RevokeOutcome> {
      return pg.begin(async (tx): Promise<RevokeOutcome> => {
        const row = await tx.one<InvitationRow>`SELECT * FROM invitations WHERE tenant_id = ${tenantId} AND id = ${id} FOR UPDATE`;
        if (!row) return { kind: "missing" };
        if (row.accepted_at !== null) return { kind: "accepted" };
        if (row.revoked_at !== null) return { kind: "revoked", row };
        const revoked = (await tx.one<InvitationRow>`
          UPDATE invitations SET revoked_at = ${now}::bigint, updated_at = ${now}::bigint
           WHERE tenant_id = ${tenantId} AND id = ${id} RETURNING *`)!;
        await audit(tx, tenantId, by, "invitation.revoked", revoked, who, now);
        await appendEventsInTx(tx, tenantId, [{ type: "invitation.revoked", actor: userActor({ userId: by }), data: invitationData(revoked) }], now);
        return { kind: "revoked", row: revoked };
      });
    },
  };
  return store satisfies InvitationsStore;
}

export type PostgresInvitationsStore = ReturnType<typeof createPostgresInvitationsStore>;
