import { errors } from "../http/errors";
import { normalizeEmail } from "../users/model";
import type { UserRow } from "../users/repo";
import { auditEntry } from "./audit-entry";
import type { AuthDeps, Principal, RequestInfo } from "./service";

/**
 * Sign-in without a tenant verifies exactly this many password hashes: the address's oldest
 * accounts, up to this many, padded with stand-in verifies. An address with no account, one, or
 * three thus costs the same time, and signing up throwaway workspaces with an address cannot
 * make the cost (or the answer) depend on the accounts that address already had.
 */
export const ANY_TENANT_ACCOUNTS = 3;

/** Passwords checked under the sign-in limits: login (with or without a tenant) and reauthenticate. */
export function createPasswordChecks(d: AuthDeps) {
  const audit = (...a: Parameters<typeof auditEntry>) => d.audit(auditEntry(...a));
  const accountKey = (tenantId: string, email: string) => `${tenantId}:${email}`;

  /**
   * Checks email and password. Answers the user whose first factor is proven; the caller decides
   * whether a second factor is due. Unknown emails cost the same hash time as wrong passwords.
   */
  async function checkPassword(input: { email: string; password: string }, tenantId: string | null, req: RequestInfo): Promise<UserRow> {
    const email = normalizeEmail(input.email);
    const perIp = await d.limiter.hit(d.limits.loginPerIp, req.ip ?? "unknown");
    if (!perIp.allowed) throw errors.rateLimited(perIp.retryAfterSeconds);
    if (tenantId === null) return checkPasswordAnyTenant(email, input.password, req);

    const user = (await d.users.byEmail(tenantId, email)) ?? undefined;
    const key = accountKey(tenantId, email);
    // The attempt is counted before the (slow, queued) hash, in one atomic statement: counting
    // only after a failed verify would let a concurrent burst all pass a check made at count 0.
    // A success clears the counter below, so only failures (and attempts in flight) add up.
    const attempt = await d.limiter.hit(d.limits.loginPerAccount, key);
    if (!attempt.allowed) {
      await audit("login.locked", { tenantId, userId: user?.id ?? null }, req, { email });
      throw errors.rateLimited(attempt.retryAfterSeconds);
    }
    const ok = user ? await d.hasher.verify(input.password, user.password_hash) : await d.hasher.verifyNobody(input.password);
    if (!user || !ok) {
      await audit("login.failure", { tenantId, userId: user?.id ?? null }, req, { email, reason: user ? "wrong_password" : "unknown_email" });
      throw errors.invalidCredentials();
    }
    await d.limiter.reset(d.limits.loginPerAccount, key);
    return user;
  }

  /**
   * Sign-in that names no tenant. The password picks the account: none matched is
   * `invalid_credentials`, one is that account, several are `tenant_required`. Every attempt costs
   * the same number of hashes (ANY_TENANT_ACCOUNTS) whatever the address has, so neither the
   * answer nor its time tells a caller without the password where, or whether, it has accounts.
   */
  async function checkPasswordAnyTenant(email: string, password: string, req: RequestInfo): Promise<UserRow> {
    const found = await d.users.byEmailAnyTenant(email, ANY_TENANT_ACCOUNTS);
    // The address's own counter, counted whatever accounts it has: its 429 says nothing about
    // them. Each account's counter too: guessing without a tenant counts toward every account's lock.
    const [any, ...perAccount] = await Promise.all([
      d.limiter.hit(d.limits.loginPerAccount, accountKey("*", email)),
      ...found.map((u) => d.limiter.hit(d.limits.loginPerAccount, accountKey(u.tenant_id, email))),
    ]);
    if (!any!.allowed) {
      // Audited on each account the address has (each organization sees it), or once without one.
      if (found.length === 0) await audit("login.locked", { tenantId: null, userId: null }, req, { email, tenant_named: false });
      for (const u of found) await audit("login.locked", { tenantId: u.tenant_id, userId: u.id }, req, { email, tenant_named: false });
      throw errors.rateLimited(any!.retryAfterSeconds);
    }
    // A locked account is not tried (its verify is a stand-in): answering 429 for it would tell
    // that the address has an account in that organization.
    const checks = found.map((u, i) => (perAccount[i]!.allowed ? d.hasher.verify(password, u.password_hash) : d.hasher.verifyNobody(password)));
    while (checks.length < ANY_TENANT_ACCOUNTS) checks.push(d.hasher.verifyNobody(password));
    const results = await Promise.all(checks);
    const matched = found.filter((_, i) => results[i]);
    if (matched.length === 0) {
      if (found.length === 0) await audit("login.failure", { tenantId: null, userId: null }, req, { email, reason: "unknown_email" });
      for (const [i, u] of found.entries()) {
        const who = { tenantId: u.tenant_id, userId: u.id };
        if (perAccount[i]!.allowed) await audit("login.failure", who, req, { email, reason: "wrong_password", tenant_named: false });
        else await audit("login.locked", who, req, { email, tenant_named: false });
      }
      throw errors.invalidCredentials();
    }
    await d.limiter.reset(d.limits.loginPerAccount, accountKey("*", email));
    for (const u of matched) await d.limiter.reset(d.limits.loginPerAccount, accountKey(u.tenant_id, email));
    // One match is the account meant, whatever else the address has: a throwaway workspace's
    // owner, who holds that one password, learns nothing of the address's other accounts.
    if (matched.length > 1) throw errors.tenantRequired();
    return matched[0]!;
  }

  /**
   * The signed-in user's password, checked again under the login limits (per IP, per account):
   * a wrong one counts toward the account's sign-in lock, as a failed login does.
   */
  async function confirmPassword(p: Principal, password: string, req: RequestInfo): Promise<void> {
    const who = { tenantId: p.tenantId, userId: p.userId };
    const perIp = await d.limiter.hit(d.limits.loginPerIp, req.ip ?? "unknown");
    if (!perIp.allowed) throw errors.rateLimited(perIp.retryAfterSeconds);
    const key = accountKey(p.tenantId, p.email);
    const attempt = await d.limiter.hit(d.limits.loginPerAccount, key);
    if (!attempt.allowed) {
      await audit("reauth.failure", who, req, { session_id: p.sessionId, reason: "rate_limited" });
      throw errors.rateLimited(attempt.retryAfterSeconds);
    }
    const user = await d.users.byId(p.tenantId, p.userId);
    const ok = user ? await d.hasher.verify(password, user.password_hash) : await d.hasher.verifyNobody(password);
    if (!ok) {
      await audit("reauth.failure", who, req, { session_id: p.sessionId, reason: "wrong_password" });
      throw errors.invalidCredentials();
    }
    await d.limiter.reset(d.limits.loginPerAccount, key);
  }

  return { checkPassword, confirmPassword };
}
