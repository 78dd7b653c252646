import type { Mailer } from "../mail/sender";
import type { AuthService, IssuedTokens, Principal, RequestInfo } from "../auth/service";
import type { Config } from "../config";
import { hashToken, newId, newTenantToken, toIso, tokenTenant } from "../kernel/ids";
import { RequestValidationError, errors } from "../kernel/errors";
import { refuseCommonPassword } from "../security/common-passwords";
import type { PasswordHasher } from "../security/passwords";
import type { Limits, RateLimiter } from "../security/rate-limit";
import type { TenantRead } from "../organization/model";
import type { TenantsStore } from "../organization/repo";
import { invitationMail } from "./invitation-mail";
import { mailLink } from "../mail/links";
import { type AcceptInvitationBody, type InvitationLink, type InvitationRead, type InvitationStatus, type InviteUserBody, statusOf, toInvitationRead } from "./invitations-model";
import type { InvitationsStore } from "./invitations-repo";
import { type UserRead, normalizeEmail, toUserRead } from "./model";
import { type Page, offsetOf, pageOf } from "../kernel/paging";
import type { UsersStore } from "./repo";

export const DEFAULT_PROFILE = "Standard user";

export interface InvitationsDeps {
  config: Config;
  now: () => number;
  invitations: InvitationsStore;
  users: UsersStore;
  tenants: TenantsStore;
  readTenant: (tenantId: string) => Promise<TenantRead>;
  hasher: PasswordHasher;
  limiter: RateLimiter;
  limits: Limits;
  auth: AuthService;
  /** Told after a mail is committed, so it leaves now rather than at the sender's next poll. */
  mailer: Pick<Mailer, "kick">;
}


const notPending = () =>
  errors.conflict("invitation_not_pending", "This invitation was already accepted, revoked or has expired. Send a new invitation instead.");
const memberConflict = () => errors.conflict("already_member", "This address already belongs to a member of this organization.");

export function createInvitationsService(d: InvitationsDeps) {
  /** The profile an invite names (profile_id, or its legacy name role_id), or the default one. */
  async function profileFor(tenantId: string, body: InviteUserBody): Promise<{ id: string | null; named: boolean; isAdmin: boolean }> {
    const { profile_id: profileId, role_id: roleId } = body;
    if (profileId != null && roleId != null && profileId !== roleId) {
      throw new RequestValidationError([
        { loc: ["body"], msg: "Value error, profile_id and role_id name different profiles; give one of them", type: "value_error" },
      ]);
    }
    const named = profileId ?? roleId ?? null;
    if (named === null) {
      const standard = await d.users.profileByName(tenantId, DEFAULT_PROFILE);
      return { id: standard?.id ?? null, named: false, isAdmin: standard?.is_admin === 1 };
    }
    const profile = await d.users.profile(tenantId, named);
    if (!profile) throw errors.notFound("No profile with this id in this organization.");
    return { id: named, named: true, isAdmin: profile.is_admin === 1 };
  }

  /** A first invite (201), or a resend of the pending one (200): new token, new expiry, the mail again. */
  async function invite(p: Principal, body: InviteUserBody, req: RequestInfo): Promise<{ created: boolean; invitation: InvitationRead }> {
    const profile = await profileFor(p.tenantId, body);
    // Inviting with an admin profile grants admin (issue 29.3): it needs a recent first-factor
    // proof, checked after the body and the profile are known to be valid.
    if (profile.isAdmin) d.auth.requireRecentProof(p);
    const limit = await d.limiter.hit(d.limits.invitesPerAdmin, `${p.tenantId}:${p.userId}`);
    if (!limit.allowed) throw errors.rateLimited(limit.retryAfterSeconds);

    const email = normalizeEmail(body.email);
    // Answered before a token is made; checked again inside the transaction.
    if (await d.users.byEmail(p.tenantId, email)) throw memberConflict();
    const [tenant, inviter] = await Promise.all([d.tenants.byId(p.tenantId), d.users.byId(p.tenantId, p.userId)]);
    if (!tenant || !inviter) throw errors.sessionRevoked();

    const now = d.now();
    const token = newTenantToken(tenant.id);
    const expiresAt = now + d.config.inviteTtl * 1000;
    const mail = invitationMail(d.config, {
      tenantId: tenant.id,
      tenantName: tenant.name,
      subdomain: tenant.subdomain,
      recipient: email,
      inviter: inviter.full_name ? `${inviter.full_name} (${inviter.email})` : inviter.email,
      token,
      expiresAt,
    });
    const outcome = await d.invitations.invite(
      {
        id: newId(),
        tenantId: p.tenantId,
        email,
        profileId: profile.id,
        profileNamed: profile.named,
        invitedBy: p.userId,
        tokenHash: hashToken(token),
        expiresAt,
        mail,
        who: req,
      },
      now,
    );
    if (outcome.kind === "member") throw memberConflict();
    d.mailer.kick();
    return { created: outcome.kind === "created", invitation: toInvitationRead(outcome.row) };
  }

  /**
   * The invited person joins: a user in the inviting organization with the invitation's profile,
   * signed in. `namedSubdomain` is the tenant the request's Host or X-Tenant names, if any.
   */
  async function accept(
    body: AcceptInvitationBody,
    req: RequestInfo,
    namedSubdomain: string | null,
  ): Promise<{ user: UserRead; tenant: TenantRead; tokens: IssuedTokens }> {
    const limit = await d.limiter.hit(d.limits.acceptPerIp, req.ip ?? "unknown");
    if (!limit.allowed) throw errors.rateLimited(limit.retryAfterSeconds);

    // Cheap refusals first, so an unknown token never costs a password hash.
    // `<tenant>.<secret>`, or a bare secret mailed before tokens named their tenant; anything else
    // is refused as an unknown token, without a query.
    const where = tokenTenant(body.token);
    if (!where) throw errors.invitationInvalid();
    const tokenHash = hashToken(body.token);
    const invitation = await d.invitations.byTokenHash(where.tenantId, tokenHash);
    if (!invitation || statusOf(invitation, d.now()) !== "pending") throw errors.invitationInvalid();
    const tenant = await d.readTenant(invitation.tenant_id);
    if (namedSubdomain !== null && namedSubdomain !== tenant.subdomain) throw errors.tenantMismatch();
    if (await d.users.byEmail(invitation.tenant_id, invitation.email)) throw memberConflict();
    await refuseCommonPassword(body.password, { email: invitation.email, organizationName: tenant.name, subdomain: tenant.subdomain });

    const passwordHash = await d.hasher.hash(body.password);
    const session = d.auth.newSessionRow("invitation", req);
    const outcome = await d.invitations.accept(
      { tenantId: invitation.tenant_id, tokenHash, user: { id: newId(), full_name: body.full_name?.trim() || null, password_hash: passwordHash }, session, who: req },
      d.now(),
    );
    if (outcome.kind === "invalid") throw errors.invitationInvalid();
    if (outcome.kind === "member") throw memberConflict();
    const { user } = outcome;
    const tokens = await d.auth.issue({ ...session, tenant_id: user.tenant_id, user_id: user.id, refresh_gen: 0, rotated_at: null });
    return { user: toUserRead(user), tenant, tokens };
  }

  async function list(p: Principal, q: { page: number; size: number; status: InvitationStatus | null }): Promise<Page<InvitationRead>> {
    const now = d.now();
    const [rows, total] = await Promise.all([
      d.invitations.page(p.tenantId, q.status, now, q.size, offsetOf(q.page, q.size)),
      d.invitations.count(p.tenantId, q.status, now),
    ]);
    return pageOf(rows.map(toInvitationRead), total, q.page, q.size);
  }

  async function revoke(p: Principal, id: string, req: RequestInfo): Promise<InvitationRead> {
    const outcome = await d.invitations.revoke(p.tenantId, id, p.userId, req, d.now());
    if (outcome.kind === "missing") throw errors.notFound("No such invitation.");
    if (outcome.kind === "accepted") throw errors.conflict("invitation_accepted", "This invitation was already accepted; it cannot be revoked.");
    return toInvitationRead(outcome.row);
  }

  /**
   * Copy link: a pending invitation's link re-issued (fresh token and expiry, the earlier link stops
   * working) and answered once to this admin; nothing keeps it in clear, no mail is queued.
   */
  async function link(p: Principal, id: string, req: RequestInfo): Promise<InvitationLink> {
    const tenant = await d.tenants.byId(p.tenantId);
    if (!tenant) throw errors.sessionRevoked();
    // A resend between the step-up check and the write may change the profile: check again then.
    for (let attempt = 0; attempt < 3; attempt++) {
      const row = await d.invitations.byId(p.tenantId, id);
      if (!row) throw errors.notFound("No such invitation.");
      if (statusOf(row, d.now()) !== "pending") throw notPending();
      // A link to an administrator profile is a way in as an admin, as inviting with it is.
      const profile = row.profile_id ? await d.users.profile(p.tenantId, row.profile_id) : null;
      if (profile?.is_admin === 1) d.auth.requireRecentProof(p);

      const now = d.now();
      const token = newTenantToken(tenant.id);
      const expiresAt = now + d.config.inviteTtl * 1000;
      const outcome = await d.invitations.reissue(
        { tenantId: p.tenantId, id, seenProfileId: row.profile_id, by: p.userId, tokenHash: hashToken(token), expiresAt, who: req },
        now,
      );
      if (outcome.kind === "missing") throw errors.notFound("No such invitation.");
      if (outcome.kind === "not_pending") throw notPending();
      if (outcome.kind === "reissued") return { url: mailLink(d.config, tenant.subdomain, "/accept-invitation", token), expires_at: toIso(outcome.row.expires_at) };
    }
    throw errors.conflict("invitation_changed", "This invitation changed while its link was made. Try again.");
  }

  /** One invitation by id (a keyed invite's answer rebuilt: src/idempotency/create-once.ts). */
  async function read(p: Principal, id: string): Promise<InvitationRead> {
    const row = await d.invitations.byId(p.tenantId, id);
    if (!row) throw errors.notFound("No such invitation.");
    return toInvitationRead(row);
  }

  return { invite, accept, list, revoke, link, read };
}

export type InvitationsService = ReturnType<typeof createInvitationsService>;
