import type { Config } from "../../config";
import type { Logger } from "../../kernel/logger";
import { hashToken, tokenTenant } from "../../kernel/ids";
import { errors } from "../../kernel/errors";
import { passwordResetMail } from "../../mail/account-mails";
import type { Mailer } from "../../mail/sender";
import { refuseCommonPassword } from "../../security/common-passwords";
import type { PasswordHasher } from "../../security/passwords";
import type { Limits, RateLimiter } from "../../security/rate-limit";
import type { SecurityStore } from "../../security/repo";
import { normalizeEmail } from "../../team/model";
import type { UsersStore } from "../../team/repo";
import { auditEntry, unnamedRequest } from "../audit-entry";
import { addressFromSource, createLoginLimits } from "../login-limits";
import { issueMailedToken } from "../email/mailed-token";
import type { AccountTarget, AccountTokensStore } from "../email/repo";
import type { Principal, RequestInfo } from "../service";
import { RESET_TTL_MS, passwordErrors } from "./model";
import type { PasswordNotice, PasswordStore } from "./repo";
import { type LinkedIdentity, linkedIdentitiesParagraphs, passwordChangedMail } from "./sign-in-notice";

export interface PasswordDeps {
  config: Config;
  now: () => number;
  log: Logger;
  limiter: RateLimiter;
  limits: Limits;
  hasher: PasswordHasher;
  users: UsersStore;
  tokens: AccountTokensStore;
  repo: PasswordStore;
  security: SecurityStore;
  mailer: Mailer;
  /** The user's linked identities, for the mails that name them (sign-in-notice.ts). */
  identities: (tenantId: string, userId: string) => Promise<LinkedIdentity[]>;
  /** 403 tenant_disabled when the operator disabled the organization: a link mailed before cannot be used meanwhile. */
  tenantInService?: (tenantId: string) => Promise<void>;
}

/** Forgotten password (a mailed link) and change of password (the current one proven). */
export function createPasswordService(d: PasswordDeps) {
  /** Background deliveries not yet committed (tests and shutdown wait for them). */
  const inFlight = new Set<Promise<void>>();
  const accountKey = (tenantId: string, email: string) => `${tenantId}:${email}`;
  const lock = createLoginLimits(d.limiter, d.limits);

  /** The token row, its mail and the audit row, in one transaction; then the sender is woken. */
  // The reset mail names the account's linked identities: a new password does not end them.
  const issueFor = async (target: AccountTarget, req: RequestInfo) => {
    const extra = linkedIdentitiesParagraphs(d.config, target.subdomain, await d.identities(target.tenant_id, target.id));
    return issueMailedToken(d, target, req, {
      purpose: "password_reset",
      ttlMs: RESET_TTL_MS,
      mail: (config, to, ttl) => passwordResetMail(config, { ...to, extra }, ttl),
      action: "password.reset_requested",
    });
  };

  /** The "your password was changed" mail for this user, written in the change's own commit. */
  async function noticeFor(tenantId: string, userId: string, how: "changed" | "reset"): Promise<PasswordNotice | undefined> {
    const target = await d.tokens.targetById(tenantId, userId);
    if (!target) return undefined;
    const identities = await d.identities(tenantId, userId);
    const o = { tenantId, tenantName: target.tenant_name, subdomain: target.subdomain, recipient: target.email, how };
    return (revoked) => passwordChangedMail(d.config, { ...o, sessionsEnded: revoked }, identities);
  }

  /** 422 password_too_common for a new password on the common list or holding the account's names. */
  async function refuseFor(tenantId: string, userId: string, password: string, field: string): Promise<void> {
    const target = await d.tokens.targetById(tenantId, userId);
    if (!target) return;
    await refuseCommonPassword(password, { email: target.email, organizationName: target.tenant_name, subdomain: target.subdomain }, field);
  }

  async function deliver(email: string, tenantId: string | null, req: RequestInfo): Promise<void> {
    const one = tenantId ? await d.tokens.target(tenantId, email) : null;
    const targets = tenantId ? (one ? [one] : []) : await d.tokens.targetsAnyTenant(email);
    for (const target of targets) await issueFor(target, unnamedRequest(req, tenantId !== null));
  }

  /**
   * POST /auth/password/forgot. As a magic-link request: the limits are counted the same way for
   * any address, the answer goes back at once, and the lookup and writes happen after it, so
   * neither status, body nor time says whether the address has an account.
   */
  async function forgot(rawEmail: string, tenantId: string | null, req: RequestInfo): Promise<void> {
    const email = normalizeEmail(rawEmail);
    const perIp = await d.limiter.hit(d.limits.passwordForgotPerIp, req.ip ?? "unknown");
    if (!perIp.allowed) throw errors.rateLimited(perIp.retryAfterSeconds);
    const perAddress = await d.limiter.hit(d.limits.passwordForgotPerAddress, addressFromSource(email, req.ip));
    if (!perAddress.allowed) throw errors.rateLimited(perAddress.retryAfterSeconds);
    const job: Promise<void> = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => deliver(email, tenantId, req))
      .catch((e: unknown) => d.log({ level: "error", msg: "password reset not issued", error: e instanceof Error ? e.message : String(e) }))
      .finally(() => inFlight.delete(job));
    inFlight.add(job);
  }

  /**
   * POST /auth/password/reset. The token names its account; a token that is not live is refused
   * before the (slow) hash, and spent atomically after it. Every session and 2FA challenge of the
   * user ends; nobody is signed in (a 2FA user then signs in with both factors).
   */
  async function reset(token: string, password: string, req: RequestInfo): Promise<void> {
    const perIp = await d.limiter.hit(d.limits.passwordResetPerIp, req.ip ?? "unknown");
    if (!perIp.allowed) throw errors.rateLimited(perIp.retryAfterSeconds);
    const hash = hashToken(token);
    const invalid = async () => {
      await d.security.audit(auditEntry("password.reset_invalid", { tenantId: null, userId: null }, req, { reason: "unknown_used_or_expired" }), d.now());
      return passwordErrors.resetTokenInvalid();
    };
    // `<tenant>.<secret>`, or a bare secret mailed before tokens named their tenant; anything else
    // is refused as an unknown token, without a query.
    const where = tokenTenant(token);
    if (!where) throw await invalid();
    const live = await d.tokens.live(where.tenantId, hash, "password_reset", d.now());
    if (!live) throw await invalid();
    await d.tenantInService?.(live.tenant_id);
    await refuseFor(live.tenant_id, live.user_id, password, "password");
    const passwordHash = await d.hasher.hash(password);
    const notice = await noticeFor(live.tenant_id, live.user_id, "reset");
    const done = await d.repo.reset(
      live.tenant_id,
      hash,
      passwordHash,
      d.now(),
      (row, revoked) => auditEntry("password.reset", { tenantId: row.tenant_id, userId: row.user_id }, req, { sessions_revoked: revoked }),
      notice,
    );
    // Spent by a concurrent reset between the look and the commit: exactly one of them wins.
    if (!done) throw await invalid();
    d.mailer.kick();
    // A successful reset also lifts the account's sign-in lock: its owner proved the mailbox.
    await lock.lift(accountKey(done.row.tenant_id, done.row.email));
  }

  /**
   * POST /auth/password/change. The current password is checked under the login limits (per IP,
   * and the account's `<tenant>:<email>` counter): a wrong one counts toward the sign-in lock.
   */
  async function change(p: Principal, current: string, next: string, req: RequestInfo): Promise<number> {
    const who = { tenantId: p.tenantId, userId: p.userId };
    // Before the current password is checked: a refused new one costs no hash and no lock count.
    await refuseFor(p.tenantId, p.userId, next, "new_password");
    const perIp = await d.limiter.hit(d.limits.loginPerIp, req.ip ?? "unknown");
    if (!perIp.allowed) throw errors.rateLimited(perIp.retryAfterSeconds);
    const key = accountKey(p.tenantId, p.email);
    await lock.oneAtATime(p.email, async () => {
      const locked = await lock.lockOf(key, req.ip);
      if (locked) {
        await d.security.audit(auditEntry("password.change_failure", who, req, { session_id: p.sessionId, reason: "rate_limited" }), d.now());
        throw errors.rateLimited(locked.retryAfterSeconds);
      }
      const user = await d.users.byId(p.tenantId, p.userId);
      if (!user) throw errors.sessionRevoked();
      if (!(await d.hasher.verify(current, user.password_hash))) {
        await lock.failed(key, req.ip);
        await d.security.audit(auditEntry("password.change_failure", who, req, { session_id: p.sessionId, reason: "wrong_password" }), d.now());
        throw errors.invalidCredentials();
      }
      await lock.succeeded(key, req.ip);
    });
    const passwordHash = await d.hasher.hash(next);
    const notice = await noticeFor(p.tenantId, p.userId, "changed");
    const revoked = await d.repo.change(
      p.tenantId,
      p.userId,
      p.sessionId,
      passwordHash,
      d.now(),
      (n) => auditEntry("password.changed", who, req, { session_id: p.sessionId, sessions_revoked: n }),
      notice,
    );
    d.mailer.kick();
    return revoked;
  }

  return {
    forgot,
    reset,
    change,
    /** A reset link for this account, mailed now ("this wasn't me": auth/new-device). */
    mailResetTo: async (target: AccountTarget, req: RequestInfo): Promise<void> => issueFor(target, req),
    /** Resolves once every reset link asked for so far is committed (or has failed and been logged). */
    settled: async (): Promise<void> => {
      while (inFlight.size > 0) await Promise.all([...inFlight]);
    },
  };
}

export type PasswordService = ReturnType<typeof createPasswordService>;
