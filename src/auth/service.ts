import type { Config } from "../config";
import { newId, newSecretToken, toIso } from "../db/ids";
import { errors } from "../http/errors";
import type { PasswordHasher } from "../security/passwords";
import type { Limits, RateLimiter } from "../security/rate-limit";
import type { AuditEntry } from "../security/repo";
import { normalizeEmail } from "../users/model";
import type { UserRow, UsersRepo } from "../users/repo";
import type { SessionRow, SessionsRepo } from "./repo";
import type { Tokens } from "./tokens";

/** Where a request came from, for sessions, limits and the audit log. */
export interface RequestInfo {
  ip: string | null;
  userAgent: string | null;
}

/** Who is calling: what the auth guard hands to every protected route. */
export interface Principal {
  userId: string;
  tenantId: string;
  sessionId: string;
  role: "admin" | "member";
  email: string;
  subdomain: string;
}

export interface IssuedTokens {
  access_token: string;
  refresh_token: string;
  token_type: "bearer";
  /** Seconds, for the cookies' Max-Age. */
  accessMaxAge: number;
  refreshMaxAge: number;
}

export interface AuthDeps {
  config: Config;
  now: () => number;
  sessions: SessionsRepo;
  users: UsersRepo;
  tokens: Tokens;
  hasher: PasswordHasher;
  limiter: RateLimiter;
  limits: Limits;
  audit: (e: AuditEntry) => Promise<void>;
}

/** last_used_at is written at most this often per session, so reads do not all become writes. */
const TOUCH_EVERY_MS = 60_000;
const seconds = (ms: number) => Math.floor(ms / 1000);

export function createAuthService(d: AuthDeps) {
  const auditEntry = (action: string, who: { tenantId: string | null; userId: string | null }, req: RequestInfo, detail?: Record<string, unknown>) => ({
    ...who,
    action,
    ip: req.ip,
    userAgent: req.userAgent,
    detail,
  });
  const audit = (...a: Parameters<typeof auditEntry>) => d.audit(auditEntry(...a));

  /** A new session's row: signup and invitation-accept insert it inside their own transactions. */
  function newSessionRow(method: string, req: RequestInfo) {
    const now = d.now();
    return { id: newSecretToken(), method, created_at: now, expires_at: now + d.config.refreshTtl * 1000, ip: req.ip, user_agent: req.userAgent };
  }

  /** Signs the session's current pair. A refresh token is a pure function of (session, generation). */
  async function issue(s: Pick<SessionRow, "id" | "tenant_id" | "user_id" | "created_at" | "expires_at" | "refresh_gen" | "rotated_at">): Promise<IssuedTokens> {
    const now = d.now();
    const accessExp = Math.min(seconds(now) + d.config.accessTtl, seconds(s.expires_at));
    const base = { sub: s.user_id, tid: s.tenant_id, sid: s.id };
    const [access_token, refresh_token] = await Promise.all([
      d.tokens.sign({ ...base, typ: "access", jti: newId(), iat: seconds(now), exp: accessExp }),
      d.tokens.sign({
        ...base,
        typ: "refresh",
        jti: d.tokens.refreshJti(s.id, s.refresh_gen),
        iat: seconds(s.refresh_gen === 0 ? s.created_at : (s.rotated_at ?? s.created_at)),
        exp: seconds(s.expires_at),
      }),
    ]);
    return {
      access_token,
      refresh_token,
      token_type: "bearer",
      accessMaxAge: Math.max(0, accessExp - seconds(now)),
      refreshMaxAge: Math.max(0, seconds(s.expires_at - now)),
    };
  }

  /** Opens a session for a user whose sign-in is complete, and answers its tokens. */
  async function startSession(user: UserRow, method: string, req: RequestInfo): Promise<IssuedTokens> {
    const row = { ...newSessionRow(method, req), tenant_id: user.tenant_id, user_id: user.id };
    const entry = auditEntry("login.success", { tenantId: user.tenant_id, userId: user.id }, req, { method, session_id: row.id });
    await d.sessions.insertAudited(row, entry, row.created_at);
    return issue({ ...row, refresh_gen: 0, rotated_at: null });
  }

  /**
   * Checks email and password. Answers the user whose first factor is proven; the caller decides
   * whether a second factor is due. Unknown emails cost the same hash time as wrong passwords.
   */
  async function checkPassword(input: { email: string; password: string }, tenantId: string | null, req: RequestInfo): Promise<UserRow> {
    const email = normalizeEmail(input.email);
    const perIp = await d.limiter.hit(d.limits.loginPerIp, req.ip ?? "unknown");
    if (!perIp.allowed) throw errors.rateLimited(perIp.retryAfterSeconds);

    let user: UserRow | undefined;
    if (tenantId) user = (await d.users.byEmail(tenantId, email)) ?? undefined;
    else {
      const found = await d.users.byEmailAnyTenant(email);
      if (found.length > 1) throw errors.tenantRequired();
      user = found[0];
    }
    const accountKey = `${tenantId ?? user?.tenant_id ?? "*"}:${email}`;
    // The attempt is counted before the (slow, queued) hash, in one atomic statement: counting
    // only after a failed verify would let a concurrent burst all pass a check made at count 0.
    // A success clears the counter below, so only failures (and attempts in flight) add up.
    const attempt = await d.limiter.hit(d.limits.loginPerAccount, accountKey);
    if (!attempt.allowed) {
      await audit("login.locked", { tenantId: user?.tenant_id ?? tenantId, userId: user?.id ?? null }, req, { email });
      throw errors.rateLimited(attempt.retryAfterSeconds);
    }
    const ok = user ? await d.hasher.verify(input.password, user.password_hash) : await d.hasher.verifyNobody(input.password);
    if (!user || !ok) {
      await audit("login.failure", { tenantId: user?.tenant_id ?? tenantId, userId: user?.id ?? null }, req, {
        email,
        reason: user ? "wrong_password" : "unknown_email",
      });
      throw errors.invalidCredentials();
    }
    await d.limiter.reset(d.limits.loginPerAccount, accountKey);
    return user;
  }

  /** The check behind every protected request: a valid access token of a live session. */
  async function authenticate(token: string): Promise<Principal> {
    const claims = await d.tokens.verify(token, "access");
    const s = await d.sessions.principal(claims.sid);
    if (!s || s.user_id !== claims.sub || s.tenant_id !== claims.tid) throw errors.tokenInvalid();
    if (s.revoked_at !== null) throw errors.sessionRevoked();
    const now = d.now();
    if (s.expires_at <= now) throw errors.tokenExpired();
    if (now - s.last_used_at >= TOUCH_EVERY_MS) await d.sessions.touch(s.id, now);
    return { userId: s.user_id, tenantId: s.tenant_id, sessionId: s.id, role: s.role, email: s.email, subdomain: s.subdomain };
  }

  /**
   * Rotates both tokens. A refresh token of the current generation moves the session on; the
   * previous generation within the grace window (two tabs) gets the same new pair; anything
   * older is a stolen token replayed: the session ends (RFC 9700 reuse detection).
   */
  async function refresh(token: string, req: RequestInfo, expectTenantSubdomain: string | null): Promise<IssuedTokens> {
    const claims = await d.tokens.verify(token, "refresh");
    for (let attempt = 0; attempt < 3; attempt++) {
      const s = await d.sessions.principal(claims.sid);
      if (!s || s.user_id !== claims.sub || s.tenant_id !== claims.tid) throw errors.tokenInvalid();
      if (expectTenantSubdomain !== null && expectTenantSubdomain !== s.subdomain) throw errors.tenantMismatch();
      if (s.revoked_at !== null) throw errors.sessionRevoked();
      const now = d.now();
      if (s.expires_at <= now) throw errors.tokenExpired();

      if (claims.jti === d.tokens.refreshJti(s.id, s.refresh_gen)) {
        if (!(await d.sessions.rotate(s.id, s.refresh_gen, now))) continue; // another tab won: look again
        return issue({ ...s, refresh_gen: s.refresh_gen + 1, rotated_at: now });
      }
      const withinGrace = s.rotated_at !== null && now - s.rotated_at <= d.config.refreshGrace * 1000;
      if (s.refresh_gen > 0 && withinGrace && claims.jti === d.tokens.refreshJti(s.id, s.refresh_gen - 1)) {
        return issue(s);
      }
      await d.sessions.revoke(s.tenant_id, s.user_id, s.id, "refresh_reuse", now);
      await audit("session.refresh_reuse", { tenantId: s.tenant_id, userId: s.user_id }, req, { session_id: s.id });
      throw errors.sessionRevoked();
    }
    throw errors.sessionRevoked();
  }

  async function listSessions(p: Principal) {
    const rows = await d.sessions.live(p.tenantId, p.userId, d.now());
    return rows.map((s) => ({
      id: s.id,
      created_at: toIso(s.created_at),
      last_used_at: toIso(s.last_used_at),
      expires_at: toIso(s.expires_at),
      ip: s.ip,
      user_agent: s.user_agent,
      current: s.id === p.sessionId,
    }));
  }

  async function revokeSession(p: Principal, sessionId: string, req: RequestInfo): Promise<number> {
    const n = await d.sessions.revoke(p.tenantId, p.userId, sessionId, "revoked_by_user", d.now());
    if (n === 0) throw errors.notFound("No such session.");
    await audit("session.revoke", { tenantId: p.tenantId, userId: p.userId }, req, { session_id: sessionId });
    return n;
  }

  async function revokeOthers(p: Principal, req: RequestInfo): Promise<number> {
    const n = await d.sessions.revokeOthers(p.tenantId, p.userId, p.sessionId, "revoked_others", d.now());
    await audit("session.revoke_others", { tenantId: p.tenantId, userId: p.userId }, req, { count: n });
    return n;
  }

  async function logoutAll(p: Principal, req: RequestInfo): Promise<number> {
    const n = await d.sessions.revokeAll(p.tenantId, p.userId, "logout_all", d.now());
    await audit("session.logout_all", { tenantId: p.tenantId, userId: p.userId }, req, { count: n });
    return n;
  }

  return { newSessionRow, issue, startSession, checkPassword, authenticate, refresh, listSessions, revokeSession, revokeOthers, logoutAll };
}

export type AuthService = ReturnType<typeof createAuthService>;
