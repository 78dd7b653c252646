import type { Config } from "../../config";
import type { Logger } from "../../kernel/logger";
import { hashToken, toIso, tokenTenant } from "../../kernel/ids";
import { errors } from "../../kernel/errors";
import { verifyEmailMail } from "../../mail/account-mails";
import type { Mailer } from "../../mail/sender";
import type { Limits, RateLimiter } from "../../security/rate-limit";
import type { SecurityStore } from "../../security/repo";
import { auditEntry } from "../audit-entry";
import type { Principal, RequestInfo } from "../service";
import { type EmailVerified, VERIFY_TTL_MS, emailErrors } from "./model";
import { issueMailedToken } from "./mailed-token";
import type { AccountTarget, AccountTokensStore } from "./repo";

export interface EmailVerificationDeps {
  config: Config;
  now: () => number;
  log: Logger;
  limiter: RateLimiter;
  limits: Limits;
  tokens: AccountTokensStore;
  security: SecurityStore;
  mailer: Mailer;
}

/** Proof that a user receives mail at their address: the link mailed at signup or on request. */
export function createEmailVerificationService(d: EmailVerificationDeps) {
  /** A new token, its mail and its audit row, in one commit; then the sender is woken. */
  const send = (target: AccountTarget, req: RequestInfo, reason: "signup" | "resend"): Promise<void> =>
    issueMailedToken(d, target, req, { purpose: "email_verify", ttlMs: VERIFY_TTL_MS, mail: verifyEmailMail, action: "email.verification_sent", detail: { reason } });

  /**
   * Signup's mail. The organization exists already: a failure here is logged, not answered (the
   * new admin can ask again from the banner).
   */
  async function afterSignup(tenantId: string, userId: string, req: RequestInfo): Promise<void> {
    try {
      const target = await d.tokens.targetById(tenantId, userId);
      if (target) await send(target, req, "signup");
    } catch (e) {
      d.log({ level: "error", msg: "verification mail not issued", error: e instanceof Error ? e.message : String(e) });
    }
  }

  /** POST /auth/email/resend: the signed-in user's own address, limited per user and per IP. */
  async function resend(p: Principal, req: RequestInfo): Promise<void> {
    const target = await d.tokens.targetById(p.tenantId, p.userId);
    if (!target) throw errors.sessionRevoked();
    if (target.email_verified_at != null) throw emailErrors.alreadyVerified();
    const perIp = await d.limiter.hit(d.limits.emailResendPerIp, req.ip ?? "unknown");
    if (!perIp.allowed) throw errors.rateLimited(perIp.retryAfterSeconds);
    const perUser = await d.limiter.hit(d.limits.emailResendPerUser, `${p.tenantId}:${p.userId}`);
    if (!perUser.allowed) throw errors.rateLimited(perUser.retryAfterSeconds);
    await send(target, req, "resend");
  }

  /** POST /auth/email/verify: the token is the proof; no session needed (the link may open on another device). */
  async function verify(token: string, req: RequestInfo): Promise<Omit<EmailVerified, "detail">> {
    const perIp = await d.limiter.hit(d.limits.emailVerifyPerIp, req.ip ?? "unknown");
    if (!perIp.allowed) throw errors.rateLimited(perIp.retryAfterSeconds);
    const now = d.now();
    const hash = hashToken(token);
    // `<tenant>.<secret>`; a bare secret mailed before tokens named their tenant is first found in
    // whichever organization holds it; anything else is refused as an unknown token, without a query.
    const where = tokenTenant(token);
    const tenantId = where && (where.tenantId ?? (await d.tokens.live(null, hash, "email_verify", now))?.tenant_id);
    const row = tenantId
      ? await d.tokens.verify(tenantId, hash, now, (r, proven) =>
          auditEntry("email.verified", { tenantId: r.tenant_id, userId: r.user_id }, req, { email: r.email, already: !proven }),
        )
      : null;
    if (!row) {
      await d.security.audit(auditEntry("email.verification_invalid", { tenantId: null, userId: null }, req, { reason: "unknown_used_or_expired" }), now);
      throw emailErrors.verificationTokenInvalid();
    }
    const user = await d.tokens.targetById(row.tenant_id, row.user_id);
    return { email: row.email, email_verified_at: toIso(user?.email_verified_at ?? now) };
  }

  return { afterSignup, resend, verify };
}

export type EmailVerificationService = ReturnType<typeof createEmailVerificationService>;
