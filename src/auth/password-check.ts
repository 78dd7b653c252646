import { errors } from "../kernel/errors";
import { normalizeEmail } from "../team/model";
import type { UserRow } from "../team/repo";
import { auditEntry, unnamedRequest } from "./audit-entry";
import { createLoginLimits } from "./login-limits";
import type { Principal, RequestInfo } from "../kernel/principal";
import type { AuthDeps } from "./deps";

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
  const lock = createLoginLimits(d.limiter, d.limits);
  /**
   * An audit row in another organization's log about a request that did not name it (issue 29.1):
   * without the caller's IP and user agent, which are not that organization's to see (the caller
   * may be a stranger who typed its member's address, or a throwaway workspace's owner).
   */
  const auditElsewhere = (action: string, u: UserRow, req: RequestInfo, detail: Record<string, unknown>) =>
    audit(action, { tenantId: u.tenant_id, userId: u.id }, unnamedRequest(req, false), detail);

  /**
   * Checks email and password. Answers the user whose first factor is proven; the caller decides
   * whether a second factor is due. Unknown emails cost the same hash time as wrong passwords.
   */
  async function checkPassword(input: { email: string; password: string }, tenantId: string | null, req: RequestInfo): Promise<UserRow> {
    const email = normalizeEmail(input.email);
    const perIp = await d.limiter.hit(d.limits.loginPerIp, req.ip ?? "unknown");
    if (!perIp.allowed) throw errors.rateLimited(perIp.retryAfterSeconds);
    if (tenantId === null) return lock.oneAtATime(email, () => checkPasswordAnyTenant(email, input.password, req));
    return lock.oneAtATime(email, async () => {
      const user = (await d.users.byEmail(tenantId, email)) ?? undefined;
      const key = accountKey(tenantId, email);
      // Check, hash, then count a failure: a right password is never counted (oneAtATime keeps
      // a burst from passing the check together).
      const locked = await lock.lockOf(key, req.ip);
      if (locked) {
        await audit("login.locked", { tenantId, userId: user?.id ?? null }, req, { email });
        throw errors.rateLimited(locked.retryAfterSeconds);
      }
      const ok = user ? await d.hasher.verify(input.password, user.password_hash) : await d.hasher.verifyNobody(input.password);
      if (!user || !ok) {
        await lock.failed(key, req.ip);
        await audit("login.failure", { tenantId, userId: user?.id ?? null }, req, { email, reason: user ? "wrong_password" : "unknown_email" });
        throw errors.invalidCredentials();
      }
      await lock.succeeded(key, req.ip);
      return user;
    });
  }

  /**
   * Sign-in that names no tenant. The password picks the account: none matched is
   * `invalid_credentials`, one is that account, several are `tenant_required`. Every attempt costs
   * the same number of hashes (ANY_TENANT_ACCOUNTS) whatever the address has, so neither the
   * answer nor its time tells a caller without the password where, or whether, it has accounts.
   */
  async function checkPasswordAnyTenant(email: string, password: string, req: RequestInfo): Promise<UserRow> {
    const found = await d.users.byEmailAnyTenant(email, ANY_TENANT_ACCOUNTS);
    // The address's own lock, whatever accounts it has: its 429 says nothing about them.
    const [any, ...perAccount] = await Promise.all([
      lock.lockOf(accountKey("*", email), req.ip),
      ...found.map((u) => lock.lockOf(accountKey(u.tenant_id, email), req.ip)),
    ]);
    if (any) {
      // Audited on each account the address has (each organization sees it), or once without one.
      if (found.length === 0) await audit("login.locked", { tenantId: null, userId: null }, req, { email, tenant_named: false });
      for (const u of found) await auditElsewhere("login.locked", u, req, { email, tenant_named: false });
      throw errors.rateLimited(any.retryAfterSeconds);
    }
    // A locked account is not tried (its verify is a stand-in): answering 429 for it would tell
    // that the address has an account in that organization.
    const checks = found.map((u, i) => (perAccount[i] ? d.hasher.verifyNobody(password) : d.hasher.verify(password, u.password_hash)));
    while (checks.length < ANY_TENANT_ACCOUNTS) checks.push(d.hasher.verifyNobody(password));
    const results = await Promise.all(checks);
    const matched = found.filter((_, i) => results[i]);
    if (matched.length === 0) {
      // A failure counts on the address's lock and on each account that was tried, so guessing
      // without naming the organization counts toward every account's lock.
      await lock.failed(accountKey("*", email), req.ip);
      if (found.length === 0) await audit("login.failure", { tenantId: null, userId: null }, req, { email, reason: "unknown_email" });
      for (const [i, u] of found.entries()) {
        if (!perAccount[i]) await lock.failed(accountKey(u.tenant_id, email), req.ip);
        await auditElsewhere(perAccount[i] ? "login.locked" : "login.failure", u, req, perAccount[i] ? { email, tenant_named: false } : { email, reason: "wrong_password", tenant_named: false });
      }
      throw errors.invalidCredentials();
    }
    await lock.succeeded(accountKey("*", email), req.ip);
    for (const u of matched) await lock.succeeded(accountKey(u.tenant_id, email), req.ip);
    // One match is the account meant, whatever else the address has: a throwaway workspace's
    // owner, who holds that one password, learns nothing of the address's other accounts.
    if (matched.length > 1) throw errors.tenantRequired();
    return matched[0]!;
  }

  /**
   * The signed-in user's password, checked again under the login limits (per IP, per account and
   * source): a wrong one counts toward the account's sign-in lock, as a failed login does.
   */
  async function confirmPassword(p: Principal, password: string, req: RequestInfo): Promise<void> {
    const who = { tenantId: p.tenantId, userId: p.userId };
    const perIp = await d.limiter.hit(d.limits.loginPerIp, req.ip ?? "unknown");
    if (!perIp.allowed) throw errors.rateLimited(perIp.retryAfterSeconds);
    const key = accountKey(p.tenantId, p.email);
    await lock.oneAtATime(p.email, async () => {
      const locked = await lock.lockOf(key, req.ip);
      if (locked) {
        await audit("reauth.failure", who, req, { session_id: p.sessionId, reason: "rate_limited" });
        throw errors.rateLimited(locked.retryAfterSeconds);
      }
      const user = await d.users.byId(p.tenantId, p.userId);
      const ok = user ? await d.hasher.verify(password, user.password_hash) : await d.hasher.verifyNobody(password);
      if (!ok) {
        await lock.failed(key, req.ip);
        await audit("reauth.failure", who, req, { session_id: p.sessionId, reason: "wrong_password" });
        throw errors.invalidCredentials();
      }
      await lock.succeeded(key, req.ip);
    });
  }

  return { checkPassword, confirmPassword, lock };
}
