import { hashToken, newId, newSecretToken, toIso } from "../kernel/ids";
import { errors } from "../kernel/errors";
import type { UserRow } from "../team/repo";
import { auditEntry } from "./audit-entry";
import type { AuthDeps } from "./deps";
import { type SessionList, authErrors } from "./model";
import { createPasswordChecks } from "./password-check";
import type { ChallengeRow, NewSessionRow, SessionRow } from "./repo";
import type { TokenClaims } from "./tokens";
import type { DeviceCookie, IssuedTokens, Principal, RequestInfo } from "../kernel/principal";

export type { IssuedTokens, Principal, RequestInfo } from "../kernel/principal";

/** A new session's row plus the secret sid its tokens carry: the row keeps only the sid's hash. */
export type NewSession = Omit<NewSessionRow, "tenant_id" | "user_id"> & { sid: string };

/** last_used_at is written at most this often per session, so reads do not all become writes. */
const TOUCH_EVERY_MS = 60_000;
const seconds = (ms: number) => Math.floor(ms / 1000);

export function createAuthService(d: AuthDeps) {
  const audit = (...a: Parameters<typeof auditEntry>) => d.audit(auditEntry(...a));
  const { checkPassword, confirmPassword } = createPasswordChecks(d);

  /**
   * A new session's row: signup and invitation-accept insert it inside their own transactions.
   * `provenAt`: when the first factor was proven, by default now (a 2FA sign-in passes its challenge's time).
   */
  function newSessionRow(method: string, req: RequestInfo, provenAt?: number): NewSession {
    const now = d.now();
    const sid = newSecretToken();
    return {
      id: newId(),
      sid,
      sid_hash: hashToken(sid),
      method,
      created_at: now,
      expires_at: now + d.config.refreshTtl * 1000,
      proven_at: provenAt ?? now,
      ip: req.ip,
      user_agent: req.userAgent,
    };
  }

  /**
   * Signs the session's current pair. A refresh token is a pure function of (secret sid,
   * generation): a copy of the database, which holds only the sid's hash, derives no jti.
   */
  async function issue(s: Pick<SessionRow, "tenant_id" | "user_id" | "created_at" | "expires_at" | "refresh_gen" | "rotated_at"> & { sid: string }): Promise<IssuedTokens> {
    const now = d.now();
    const accessExp = Math.min(seconds(now) + d.config.accessTtl, seconds(s.expires_at));
    const base = { sub: s.user_id, tid: s.tenant_id, sid: s.sid };
    const [access_token, refresh_token] = await Promise.all([
      d.tokens.sign({ ...base, typ: "access", jti: newId(), iat: seconds(now), exp: accessExp }),
      d.tokens.sign({
        ...base,
        typ: "refresh",
        jti: d.tokens.refreshJti(s.sid, s.refresh_gen),
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
    const device = await d.afterSignIn?.(user, method, row, req);
    return { ...(await issue({ ...row, refresh_gen: 0, rotated_at: null })), ...(device ? { device } : {}) };
  }

  /** A 2FA challenge for a user whose first factor (`method`) is proven: its temp_token. */
  async function openChallenge(user: UserRow, method: string, req: RequestInfo): Promise<string> {
    const now = d.now();
    const iat = seconds(now);
    const id = newId();
    // sid names this challenge, not a session: none exists until the second factor is proven.
    const token = await d.tokens.sign({ sub: user.id, tid: user.tenant_id, sid: id, typ: "2fa", jti: newId(), iat, exp: iat + d.config.tempTokenTtl });
    const row: ChallengeRow = { id, tenant_id: user.tenant_id, user_id: user.id, method, created_at: now, expires_at: now + d.config.tempTokenTtl * 1000 };
    await d.sessions.openChallenge(row, auditEntry("2fa.challenge", { tenantId: user.tenant_id, userId: user.id }, req, { method }));
    return token;
  }

  /** The outstanding challenge a temp_token names, or null when it was spent, ended or expired. */
  const challenge = async (id: string, tenantId: string, userId: string): Promise<ChallengeRow | null> =>
    (await d.sessions.challenge(id, tenantId, userId, d.now())) ?? null;

  /**
   * Spends the challenge and opens its session in one commit; null when another verify spent it
   * first or it was ended meanwhile. The session's proof is the challenge's first factor.
   */
  async function completeChallenge(c: ChallengeRow, user: UserRow, req: RequestInfo): Promise<IssuedTokens | null> {
    // The session names its first factor too ("password+2fa", "oidc:Google+2fa"): the session list says which way in it was.
    const row = { ...newSessionRow(`${c.method}+2fa`, req, c.created_at), tenant_id: user.tenant_id, user_id: user.id };
    const entry = auditEntry("login.success", { tenantId: user.tenant_id, userId: user.id }, req, { method: "2fa", first_factor: c.method, session_id: row.id });
    if (!(await d.sessions.spendChallengeForSession(c, row, entry, row.created_at))) return null;
    const device = await d.afterSignIn?.(user, row.method, row, req);
    return { ...(await issue({ ...row, refresh_gen: 0, rotated_at: null })), ...(device ? { device } : {}) };
  }

  /**
   * Ends every outstanding 2FA challenge of a user: their temp_tokens stop working. 2FA disable
   * calls it, logout-all does the same in its own commit, and so must a password change.
   */
  const endChallenges = async (tenantId: string, userId: string) => d.sessions.endChallenges(tenantId, userId);

  /** The sid hash of claims the token cache keeps (the same object on every request of a token). */
  const sidHashes = new WeakMap<TokenClaims, string>();

  /**
   * The check behind every protected request: a valid access token of a live session. Given a
   * module, the answer also says whether the organization has it (`moduleOn`), read in the same
   * statement as the session: the auth guard's module check then costs no read of its own.
   */
  async function authenticate(token: string, module = ""): Promise<Principal & { moduleOn?: boolean }> {
    const claims = d.tokens.known(token, "access") ?? (await d.tokens.verify(token, "access"));
    let sidHash = sidHashes.get(claims);
    if (sidHash === undefined) sidHashes.set(claims, (sidHash = hashToken(claims.sid)));
    const s = await d.sessions.access(claims.tid, sidHash, module);
    if (!s || s.user_id !== claims.sub || s.tenant_id !== claims.tid) throw errors.tokenInvalid();
    if (s.revoked_at !== null) throw errors.sessionRevoked();
    // Read with the session in the same statement: no extra query, and never a stale cache.
    if (s.tenant_disabled_at !== null) throw errors.tenantDisabled();
    const now = d.now();
    if (s.expires_at <= now) throw errors.tokenExpired();
    if (now - s.last_used_at >= TOUCH_EVERY_MS) await d.sessions.touch(s.tenant_id, s.id, now);
    const p: Principal & { moduleOn?: boolean } = {
      userId: s.user_id,
      tenantId: s.tenant_id,
      sessionId: s.id,
      role: s.role,
      email: s.email,
      subdomain: s.subdomain,
      provenAt: s.proven_at,
    };
    if (module !== "") p.moduleOn = s.has_module;
    if (s.policy_setup !== null) p.policySetup = s.policy_setup;
    return p;
  }

  /**
   * Rotates both tokens. A refresh token of the current generation moves the session on; the
   * previous generation within the grace window (two tabs) gets the same new pair; anything
   * older is a stolen token replayed: the session ends (RFC 9700 reuse detection). Refresh is no
   * proof of the first factor: the session keeps its proven_at.
   */
  async function refresh(token: string, req: RequestInfo, expectTenantSubdomain: string | null): Promise<IssuedTokens> {
    const claims = await d.tokens.verify(token, "refresh");
    const sid = claims.sid;
    const sidHash = hashToken(sid);
    for (let attempt = 0; attempt < 3; attempt++) {
      const s = await d.sessions.principal(claims.tid, sidHash);
      if (!s || s.user_id !== claims.sub || s.tenant_id !== claims.tid) throw errors.tokenInvalid();
      if (expectTenantSubdomain !== null && expectTenantSubdomain !== s.subdomain) throw errors.tenantMismatch();
      if (s.revoked_at !== null) throw errors.sessionRevoked();
      if (s.tenant_disabled_at !== null) throw errors.tenantDisabled();
      const now = d.now();
      if (s.expires_at <= now) throw errors.tokenExpired();

      if (claims.jti === d.tokens.refreshJti(sid, s.refresh_gen)) {
        if (!(await d.sessions.rotate(s.tenant_id, s.id, s.refresh_gen, now))) continue; // another tab won: look again
        return issue({ ...s, sid, refresh_gen: s.refresh_gen + 1, rotated_at: now });
      }
      const withinGrace = s.rotated_at !== null && now - s.rotated_at <= d.config.refreshGrace * 1000;
      if (s.refresh_gen > 0 && withinGrace && claims.jti === d.tokens.refreshJti(sid, s.refresh_gen - 1)) {
        return issue({ ...s, sid });
      }
      await d.sessions.revoke(s.tenant_id, s.user_id, s.id, "refresh_reuse", now);
      await audit("session.refresh_reuse", { tenantId: s.tenant_id, userId: s.user_id }, req, { session_id: s.id });
      throw errors.sessionRevoked();
    }
    throw errors.sessionRevoked();
  }

  /** 403 reauthentication_required unless the session proved the first factor within SUITE_REAUTH_WINDOW. */
  function requireRecentProof(p: Principal): void {
    if (d.now() - p.provenAt > d.config.reauthWindow * 1000) throw authErrors.reauthenticationRequired();
  }

  /** Records a fresh proof of the first factor on the caller's session (audited); answers its time. */
  async function recordProof(p: Principal, req: RequestInfo, detail: Record<string, unknown>): Promise<number> {
    const now = d.now();
    const entry = auditEntry("reauth.success", { tenantId: p.tenantId, userId: p.userId }, req, { session_id: p.sessionId, ...detail });
    if (!(await d.sessions.prove(p.tenantId, p.sessionId, entry, now))) throw errors.sessionRevoked();
    return now;
  }

  const auditReauthFailure = (p: Principal, req: RequestInfo, reason: string) =>
    audit("reauth.failure", { tenantId: p.tenantId, userId: p.userId }, req, { session_id: p.sessionId, reason });

  async function listSessions(p: Principal): Promise<SessionList> {
    const rows = await d.sessions.live(p.tenantId, p.userId, d.now());
    return rows.map((s) => ({
      id: s.id,
      created_at: toIso(s.created_at),
      last_used_at: toIso(s.last_used_at),
      expires_at: toIso(s.expires_at),
      ip: s.ip,
      user_agent: s.user_agent,
      current: s.id === p.sessionId,
      method: s.method,
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

  /** Every session and every outstanding 2FA challenge of the caller end. */
  async function logoutAll(p: Principal, req: RequestInfo): Promise<number> {
    const n = await d.sessions.revokeAll(p.tenantId, p.userId, "logout_all", d.now());
    await audit("session.logout_all", { tenantId: p.tenantId, userId: p.userId }, req, { count: n });
    return n;
  }

  return {
    newSessionRow,
    issue,
    startSession,
    openChallenge,
    challenge,
    completeChallenge,
    endChallenges,
    checkPassword,
    authenticate,
    refresh,
    requireRecentProof,
    confirmPassword,
    recordProof,
    auditReauthFailure,
    listSessions,
    revokeSession,
    revokeOthers,
    logoutAll,
  };
}

export type AuthService = ReturnType<typeof createAuthService>;
