import { type OperatorCommand, operatorEntry } from "../security-log/operator";
import type { PasswordStore } from "../auth/password/repo";
import type { SessionsStore } from "../auth/repo";
import { createLoginLimits } from "../auth/login-limits";
import { AppError, errors } from "../kernel/errors";
import { commonPasswordProblem } from "../security/common-passwords";
import { PASSWORD_MAX, PASSWORD_MIN, type PasswordHasher } from "../security/passwords";
import type { Limits, RateLimiter } from "../security/rate-limit";
import type { MembersStore, Refusal } from "./members-repo";
import { normalizeEmail } from "./model";
import type { UserRow, UsersStore } from "./repo";
import type { SupportStore } from "./support-repo";

export interface SupportDeps {
  now: () => number;
  users: UsersStore;
  members: MembersStore;
  passwords: PasswordStore;
  sessions: SessionsStore;
  support: SupportStore;
  hasher: PasswordHasher;
  limiter: RateLimiter;
  limits: Limits;
}

/** A member as the operator sees them (`suite user list`). */
export interface SupportUser {
  email: string;
  full_name: string | null;
  role: "admin" | "member";
  two_factor: boolean;
  /** Locked out of sign-in: too many wrong passwords in this organization, or too many wrong codes. */
  locked: boolean;
  last_sign_in: number | null;
}

/** Why a new password is refused, by the same rule as the API's (8 to 128 characters); null: it is fine. */
export function passwordProblem(password: string): string | null {
  if (password.length < PASSWORD_MIN) return `the password needs at least ${PASSWORD_MIN} characters`;
  if (password.length > PASSWORD_MAX) return `the password may have at most ${PASSWORD_MAX} characters`;
  return null;
}

export const unknownEmail = (email: string) => new AppError(404, "user_not_found", `no user with the email ${email} in this organization`);

/**
 * Helping a user, for the server's operator on the command line: the same rules and the same
 * writes as the admins' API (members-repo.ts, auth/password/repo.ts), each with an audit row
 * naming the command line as actor (security-log/operator.ts).
 */
export function createSupportService(d: SupportDeps) {
  const accountKey = (tenantId: string, email: string) => `${tenantId}:${email}`;
  const lock = createLoginLimits(d.limiter, d.limits);

  async function member(tenantId: string, email: string): Promise<UserRow> {
    const u = await d.users.byEmail(tenantId, normalizeEmail(email));
    if (!u) throw unknownEmail(normalizeEmail(email));
    return u;
  }

  const refused = (r: Refusal, email: string): AppError => {
    switch (r) {
      case "last_admin":
        return errors.conflict("last_admin", "this is the organization's last admin: make another member an admin first");
      case "reassign_not_found":
        return errors.notFound("the member to reassign the deals to is not in this organization");
      default:
        return unknownEmail(email);
    }
  };

  async function list(tenantId: string): Promise<SupportUser[]> {
    const rows = await d.support.list(tenantId);
    const now = d.now();
    return Promise.all(
      rows.map(async (r) => {
        const signInLocked = await lock.lockedAnywhere(accountKey(tenantId, r.email));
        const codesLocked = r.totp_locked_until !== null && r.totp_locked_until > now;
        return { email: r.email, full_name: r.full_name, role: r.role, two_factor: r.two_factor === 1, locked: signInLocked || codesLocked, last_sign_in: r.last_sign_in };
      }),
    );
  }

  /**
   * Sets a new password (checked by the API's rules: its length, then the common list and the
   * account's names); every session and 2FA challenge of the user ends. Answers how many sessions.
   */
  async function resetPassword(
    organization: { id: string; name: string; subdomain: string },
    email: string,
    password: string,
    by: OperatorCommand,
  ): Promise<number> {
    const tenantId = organization.id;
    const problem = passwordProblem(password);
    if (problem) throw new AppError(422, "password_invalid", problem);
    const u = await member(tenantId, email);
    const common = await commonPasswordProblem(password, { email: u.email, organizationName: organization.name, subdomain: organization.subdomain });
    if (common) throw new AppError(422, "password_too_common", common);
    // The slow hash before the transaction opens.
    const hash = await d.hasher.hash(password);
    const now = d.now();
    return d.passwords.change(tenantId, u.id, "", hash, now, (revoked) =>
      operatorEntry(tenantId, "user.password_set", by, { user_id: u.id, email: u.email, sessions_ended: revoked }),
    );
  }

  /**
   * Turns the second factor off (secret, backup codes, challenges) and ends every session. The
   * sessions end first: should the process stop between the two commits, the user is signed out
   * with their factor still on, and running the command again finishes it.
   */
  async function resetSecondFactor(tenantId: string, email: string, by: OperatorCommand): Promise<{ wasEnabled: boolean; sessionsEnded: number }> {
    const u = await member(tenantId, email);
    const now = d.now();
    const sessionsEnded = await d.sessions.revokeAll(tenantId, u.id, "2fa_reset", now);
    let wasEnabled = false;
    const r = await d.members.resetSecondFactor(tenantId, u.id, now, (row, was) => {
      wasEnabled = was;
      return operatorEntry(tenantId, "user.2fa_reset", by, { user_id: row.id, email: row.email, was_enabled: was, sessions_ended: sessionsEnded });
    });
    if (typeof r === "string") throw refused(r, u.email);
    return { wasEnabled, sessionsEnded };
  }

  /** Lifts the sign-in lockout as POST /users/{id}/unlock does: the second factor's lock and the organization's failure counter. */
  async function unlock(tenantId: string, email: string, by: OperatorCommand): Promise<void> {
    const u = await member(tenantId, email);
    const r = await d.members.unlock(tenantId, u.id, d.now(), (row) => operatorEntry(tenantId, "user.unlocked", by, { user_id: row.id, email: row.email }));
    if (typeof r === "string") throw refused(r, u.email);
    await lock.lift(accountKey(tenantId, u.email));
  }

  /**
   * Removes a member as DELETE /users/{id} does, in one transaction: their deals go to
   * `reassignTo` (an email) or become unassigned, their sessions end, the last admin is refused.
   */
  async function remove(tenantId: string, email: string, reassignTo: string | null, by: OperatorCommand): Promise<{ dealsMoved: number }> {
    const u = await member(tenantId, email);
    let to: UserRow | null = null;
    if (reassignTo !== null) {
      to = await d.users.byEmail(tenantId, normalizeEmail(reassignTo)) ?? null;
      if (!to) throw new AppError(404, "reassign_not_found", `no user with the email ${normalizeEmail(reassignTo)} in this organization to reassign the deals to`);
      if (to.id === u.id) throw new AppError(422, "reassign_to_self", "the deals cannot go to the member being removed");
    }
    const r = await d.members.remove(tenantId, u.id, to?.id ?? null, d.now(), (row, dealsMoved) =>
      operatorEntry(tenantId, "user.removed", by, { user_id: row.id, email: row.email, role: row.role, deals_reassigned_to: to?.id ?? null, deals_moved: dealsMoved }),
    );
    if (typeof r === "string") throw refused(r, u.email);
    return { dealsMoved: r.dealsMoved };
  }

  /** The member's address as stored; 404 user_not_found when the organization has no such member. */
  const find = async (tenantId: string, email: string): Promise<string> => (await member(tenantId, email)).email;

  return { find, list, resetPassword, resetSecondFactor, unlock, remove };
}

export type SupportService = ReturnType<typeof createSupportService>;
