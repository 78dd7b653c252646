import { userActor } from "../events/repo";
import type { Principal, RequestInfo } from "../auth/service";
import { AppError, RequestValidationError, errors } from "../kernel/errors";
import { createLoginLimits } from "../auth/login-limits";
import type { Limits, RateLimiter } from "../security/rate-limit";
import type { AuditEntry, SecurityStore } from "../security/repo";
import type { MembersStore, Refusal } from "./members-repo";
import { type UpdateUserBody, type UserRead, toUserRead } from "./model";
import type { UserRow } from "./repo";

export interface MembersDeps {
  now: () => number;
  members: MembersStore;
  security: SecurityStore;
  limiter: RateLimiter;
  limits: Limits;
  /** 403 reauthentication_required unless the session proved its first factor within SUITE_REAUTH_WINDOW. */
  requireRecentProof: (p: Principal) => void;
}

const lastAdmin = () =>
  errors.conflict("last_admin", "This is the organization's last admin: make another member an admin first.");

/** A refused write as the error the caller gets. */
function refused(r: Refusal): AppError {
  switch (r) {
    case "not_found":
      return errors.notFound("No such user.");
    case "last_admin":
      return lastAdmin();
    case "profile_not_found":
      return errors.notFound("No such profile in this organization.");
    case "reassign_not_found":
      return errors.notFound("The member to reassign the deals to is not in this organization.");
  }
}

const isRefusal = (r: unknown): r is Refusal => typeof r === "string";

/**
 * The team, managed: a member renames themself; admins also change roles and profiles, remove
 * members, reset a second factor and lift sign-in lockouts. Every change writes its audit row
 * in its own transaction.
 */
export function createMembersService(d: MembersDeps) {
  const entry = (p: Principal, req: RequestInfo, action: string, detail: Record<string, unknown>): Omit<AuditEntry, "tenantId"> => ({
    userId: p.userId,
    action,
    ip: req.ip,
    userAgent: req.userAgent,
    detail,
  });

  /** PATCH /users/{id}: the name (the user or an admin), the role and the profile (admins). */
  async function update(p: Principal, id: string, body: UpdateUserBody, req: RequestInfo): Promise<UserRead> {
    const admin = p.role === "admin";
    // A member learns nothing about other ids, nor may they change their own role or profile.
    if (id !== p.userId && !admin) throw errors.forbidden();
    if ((body.role !== undefined || body.profile_id !== undefined) && !admin) throw errors.forbidden("Only admins change roles and profiles.");
    if (body.full_name === undefined && body.role === undefined && body.profile_id === undefined) {
      throw new RequestValidationError([{ loc: ["body"], msg: "Value error, give at least one of full_name, role, profile_id", type: "value_error" }]);
    }
    // A role or profile change can grant admin rights (issue 29.3): a recent proof first. A rename needs none.
    if (body.role !== undefined || body.profile_id !== undefined) d.requireRecentProof(p);
    const fullName = body.full_name === undefined ? undefined : body.full_name?.trim() || null;
    const now = d.now();
    const r = await d.members.change(p.tenantId, id, { fullName, role: body.role, profileId: body.profile_id }, now, (before, after) => {
      const audits: AuditEntry[] = [];
      const audit = (action: string, detail: Record<string, unknown>) =>
        audits.push({ ...entry(p, req, action, { user_id: after.id, ...detail }), tenantId: p.tenantId });
      if (fullName !== undefined) audit("user.renamed", {});
      if (before.role !== after.role) audit("user.role_changed", { from: before.role, to: after.role });
      if (before.profile_id !== after.profile_id) audit("user.profile_changed", { from: before.profile_id, to: after.profile_id });
      // A renamed user shows at once in every deal assigned to them (docs/interface.md#crm-records).
      return { audits, propagateRename: fullName !== undefined, actor: userActor(p) };
    });
    if (isRefusal(r)) throw refused(r);
    return toUserRead(r);
  }

  /** DELETE /users/{id}: the member goes; their deals go to `reassignTo` or become unassigned. */
  async function remove(p: Principal, id: string, reassignTo: string | null, req: RequestInfo): Promise<void> {
    if (reassignTo === id) {
      throw new RequestValidationError([
        { loc: ["query", "reassign_to"], msg: "Value error, the deals cannot go to the member being removed", type: "value_error", input: reassignTo },
      ]);
    }
    d.requireRecentProof(p);
    const r = await d.members.remove(p.tenantId, id, reassignTo, d.now(), (u: UserRow, dealsMoved: number) =>
      entry(p, req, "user.removed", { user_id: u.id, email: u.email, role: u.role, deals_reassigned_to: reassignTo, deals_moved: dealsMoved }),
    );
    if (isRefusal(r)) throw refused(r);
  }

  /** POST /users/{id}/2fa/reset: for a member who lost their authenticator. Not for oneself. */
  async function resetSecondFactor(p: Principal, id: string, req: RequestInfo): Promise<UserRead> {
    // One's own factor is turned off with a code (POST /auth/2fa/disable): an admin's stolen session must not skip it.
    if (id === p.userId) throw errors.forbidden("Turn your own second factor off from your security page.");
    d.requireRecentProof(p);
    const r = await d.members.resetSecondFactor(p.tenantId, id, d.now(), (u, wasEnabled) =>
      entry(p, req, "user.2fa_reset", { user_id: u.id, was_enabled: wasEnabled }),
    );
    if (isRefusal(r)) throw refused(r);
    return toUserRead(r);
  }

  /** POST /users/{id}/unlock: clears the member's sign-in failure counter in this organization and the second factor's lock. */
  async function unlock(p: Principal, id: string, req: RequestInfo): Promise<UserRead> {
    const r = await d.members.unlock(p.tenantId, id, d.now(), (u) => entry(p, req, "user.unlocked", { user_id: u.id }));
    if (isRefusal(r)) throw refused(r);
    // The counters of auth/login-limits.ts for `<tenant>:<email>` (every source); the cross-tenant
    // `*:<email>` ones are not this organization's to clear (they guard the address's other workspaces too).
    await createLoginLimits(d.limiter, d.limits).lift(`${p.tenantId}:${r.email}`);
    return toUserRead(r);
  }

  return { update, remove, resetSecondFactor, unlock };
}

export type MembersService = ReturnType<typeof createMembersService>;
