import { errors } from "../kernel/errors";
import { hashToken, newId, newSecretToken } from "../kernel/ids";
import type { RequestInfo } from "../kernel/principal";
import { createLoginLimits } from "../auth/login-limits";
import { TOTP_ISSUER, matchStep, newTotpSecret, otpauthUrl } from "../auth/two-factor/totp";
import { backupCodeHash, newBackupCodes, normalizeBackupCode } from "../auth/two-factor/backup-codes";
import { commonPasswordProblem } from "../security/common-passwords";
import type { PasswordHasher } from "../security/passwords";
import { PASSWORD_MAX, PASSWORD_MIN } from "../security/passwords";
import type { Limits, RateLimiter } from "../security/rate-limit";
import type { SecretBox } from "../security/secret-box";
import { normalizeEmail } from "../team/model";
import { operatorErrors } from "./model";
import type { OperatorAuditEntry, OperatorRow, OperatorStore } from "./repo";

/** Operators' sessions end 8 hours after sign-in whatever happens, and after 30 minutes unused. */
export const OPERATOR_SESSION_MS = 8 * 3600_000;
export const OPERATOR_IDLE_MS = 30 * 60_000;
/** Destructive actions need the password again within this long (step-up). */
export const OPERATOR_STEP_UP_MS = 10 * 60_000;
/** Between the password and the code. */
const CHALLENGE_MS = 5 * 60_000;
/** The token's prefix says what it is in a log or a bug report (never what it opens). */
const TOKEN_PREFIX = "op_";

/** The signed-in operator a console request acts as. */
export interface OperatorPrincipal {
  operatorId: string;
  email: string;
  sessionId: string;
  provenAt: number;
  sessionExpiresAt: number;
}

export interface OperatorDeps {
  now: () => number;
  store: OperatorStore;
  hasher: PasswordHasher;
  limiter: RateLimiter;
  limits: Limits;
  box: SecretBox;
}

/** Every operator sign-in is counted on the sign-in lock under its own account names, apart from any organization's. */
const accountKey = (email: string) => `operator:${email}`;
const secretContext = (operatorId: string) => `operator-totp:${operatorId}`;
/** An operator's backup code is bound to them as a user's is to the user, under a name no user id can take. */
const codeOwner = (operatorId: string) => `operator:${operatorId}`;

/** Operators: made from the command line, signed in with password and TOTP on the base domain, audited. */
export function createOperatorService(d: OperatorDeps) {
  const lock = createLoginLimits(d.limiter, d.limits);
  const audit = (e: OperatorAuditEntry) => d.store.audit(e, d.now());
  const byWho = (o: { id: string; email: string } | null, req: RequestInfo) => ({ operatorId: o?.id ?? null, operatorEmail: o?.email ?? null, ip: req.ip, userAgent: req.userAgent });

  /** Ten new backup codes for the operator (the old ones go); the codes are answered once, only their keyed hashes kept. */
  async function freshBackupCodes(operatorId: string): Promise<string[]> {
    const codes = newBackupCodes();
    await d.store.replaceBackupCodes(operatorId, codes.map((c) => backupCodeHash(d.box.mac, codeOwner(operatorId), normalizeBackupCode(c)!)), d.now());
    return codes;
  }

  /** `suite operator create`: the password is checked as every password is; answers the TOTP secret and the backup codes once. */
  async function create(emailIn: string, password: string): Promise<{ operator: OperatorRow; secret: string; otpauthUrl: string; backupCodes: string[] }> {
    const email = normalizeEmail(emailIn);
    if (!/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email)) throw operatorErrors.badEmail();
    if (password.length < PASSWORD_MIN || password.length > PASSWORD_MAX) throw operatorErrors.passwordLength();
    const common = await commonPasswordProblem(password, { email, organizationName: "", subdomain: "" });
    if (common) throw operatorErrors.passwordCommon(common);
    const id = newId();
    const secret = newTotpSecret();
    const row: OperatorRow = {
      id, email, password_hash: await d.hasher.hash(password), totp_secret: d.box.seal(secret, secretContext(id)), totp_last_step: null, created_at: d.now(), last_sign_in_at: null,
    };
    if (!(await d.store.create(row))) throw operatorErrors.taken(email);
    const backupCodes = await freshBackupCodes(id);
    await audit({ operatorId: id, operatorEmail: email, action: "operator.created", target: `operator:${email}`, ip: null, userAgent: "suite-cli", detail: { actor: "cli" } });
    return { operator: row, secret, otpauthUrl: otpauthUrl(secret, email, `${TOTP_ISSUER} operator`), backupCodes };
  }

  /** `suite operator remove`: the operator and every session of theirs; false when none has the email. */
  async function remove(emailIn: string): Promise<boolean> {
    const email = normalizeEmail(emailIn);
    const removed = await d.store.remove(email);
    if (removed) await audit({ operatorId: null, operatorEmail: email, action: "operator.removed", target: `operator:${email}`, ip: null, userAgent: "suite-cli", detail: { actor: "cli" } });
    return removed;
  }

  /**
   * The password, under the sign-in limits the organizations' sign-in uses (per IP; per account
   * and source, locking at 10, and per account at 50). Unknown emails cost the same hash time.
   */
  async function checkPassword(emailIn: string, password: string, req: RequestInfo, action: "sign_in" | "step_up"): Promise<OperatorRow> {
    const email = normalizeEmail(emailIn);
    const perIp = await d.limiter.hit(d.limits.loginPerIp, req.ip ?? "unknown");
    if (!perIp.allowed) throw errors.rateLimited(perIp.retryAfterSeconds);
    return lock.oneAtATime(accountKey(email), async () => {
      const operator = await d.store.byEmail(email);
      const locked = await lock.lockOf(accountKey(email), req.ip);
      if (locked) {
        await audit({ ...byWho(operator, req), operatorEmail: email, action: `${action}.locked`, target: null });
        throw errors.rateLimited(locked.retryAfterSeconds);
      }
      const ok = operator ? await d.hasher.verify(password, operator.password_hash) : await d.hasher.verifyNobody(password);
      if (!operator || !ok) {
        await lock.failed(accountKey(email), req.ip);
        await audit({ ...byWho(operator, req), operatorEmail: email, action: `${action}.failure`, target: null, detail: { reason: operator ? "wrong_password" : "unknown_email" } });
        throw errors.invalidCredentials();
      }
      await lock.succeeded(accountKey(email), req.ip);
      return operator;
    });
  }

  /** The first step: a right password answers a temp_token for the code (the code is always required). */
  async function login(input: { email: string; password: string }, req: RequestInfo): Promise<{ tempToken: string }> {
    const operator = await checkPassword(input.email, input.password, req, "sign_in");
    const tempToken = `${TOKEN_PREFIX}${newSecretToken()}`;
    await d.store.addChallenge(hashToken(tempToken), operator.id, d.now() + CHALLENGE_MS);
    return { tempToken };
  }

  /**
   * The second step: the code of the operator's authenticator. A wrong code keeps the temp_token
   * (five tries a minute) and counts toward the sign-in lock; a right one spends it and opens a session.
   */
  async function verify(input: { temp_token: string; code: string }, req: RequestInfo): Promise<{ token: string; expiresAt: number }> {
    const tokenHash = hashToken(input.temp_token);
    const operatorId = await d.store.peekChallenge(tokenHash, d.now());
    const operator = operatorId ? await d.store.byId(operatorId) : null;
    if (!operator) throw errors.invalidToken();
    const perOperator = await d.limiter.hit(d.limits.twoFactorVerify, `operator:${operator.id}`);
    if (!perOperator.allowed) throw errors.rateLimited(perOperator.retryAfterSeconds);
    const locked = await lock.lockOf(accountKey(operator.email), req.ip);
    if (locked) throw errors.rateLimited(locked.retryAfterSeconds);
    const now = d.now();
    const typed = input.code.trim();
    let proved = false;
    if (/^\d{6}$/.test(typed)) {
      const step = matchStep(d.box.open(operator.totp_secret, secretContext(operator.id)), typed, now, operator.totp_last_step);
      proved = step !== null && (await d.store.acceptStep(operator.id, step, now));
    } else {
      // A backup code, once: `xxxx-xxxx`, dash optional, any case (as the users' are).
      const normalized = normalizeBackupCode(typed);
      proved = normalized !== null && (await d.store.useBackupCode(operator.id, backupCodeHash(d.box.mac, codeOwner(operator.id), normalized), now));
      if (proved) await audit({ ...byWho(operator, req), action: "sign_in.backup_code_used", target: null, detail: { remaining: await d.store.remainingBackupCodes(operator.id) } });
    }
    if (!proved) {
      await lock.failed(accountKey(operator.email), req.ip);
      await audit({ ...byWho(operator, req), action: "sign_in.code_failure", target: null });
      throw operatorErrors.invalidCode();
    }
    // Spent here: of two verifies racing with the same temp_token, one opens a session.
    if ((await d.store.takeChallenge(tokenHash, now)) !== operator.id) throw errors.invalidToken();
    const token = `${TOKEN_PREFIX}${newSecretToken()}`;
    const expiresAt = now + OPERATOR_SESSION_MS;
    const sessionId = newId();
    await d.store.createSession({ id: sessionId, tokenHash: hashToken(token), operatorId: operator.id, createdAt: now, expiresAt, ip: req.ip, userAgent: req.userAgent });
    await audit({ ...byWho(operator, req), action: "sign_in.success", target: null, detail: { session_id: sessionId } });
    return { token, expiresAt };
  }

  /** The operator of a live session token (401 otherwise); each use keeps it from going idle. */
  async function authenticate(token: string): Promise<OperatorPrincipal> {
    if (!token.startsWith(TOKEN_PREFIX)) throw errors.notAuthenticated();
    const now = d.now();
    const s = await d.store.sessionByHash(hashToken(token), now, now - OPERATOR_IDLE_MS);
    if (!s) throw errors.notAuthenticated();
    // Written at most once a minute: reads do not each cost a write.
    if (now - s.last_used_at > 60_000) await d.store.touchSession(s.id, now);
    return { operatorId: s.operator_id, email: s.email, sessionId: s.id, provenAt: s.proven_at, sessionExpiresAt: s.expires_at };
  }

  async function logout(p: OperatorPrincipal, req: RequestInfo): Promise<void> {
    await d.store.endSession(p.sessionId, d.now());
    await audit({ ...byWho({ id: p.operatorId, email: p.email }, req), action: "sign_out", target: null, detail: { session_id: p.sessionId } });
  }

  /** New backup codes from the console: step-up first (they are a way in); the old ones stop working. Audited. */
  async function regenerateBackupCodes(p: OperatorPrincipal, req: RequestInfo): Promise<string[]> {
    requireRecentProof(p);
    const codes = await freshBackupCodes(p.operatorId);
    await audit({ ...byWho({ id: p.operatorId, email: p.email }, req), action: "backup_codes.regenerated", target: null, detail: { count: codes.length } });
    return codes;
  }

  /** The operator's own live sessions, the one making the request marked. */
  async function sessions(p: OperatorPrincipal) {
    const now = d.now();
    const rows = await d.store.sessionsOf(p.operatorId, now, now - OPERATOR_IDLE_MS);
    return rows.map((r) => ({ ...r, current: r.id === p.sessionId }));
  }

  /**
   * Ends one of the operator's own sessions (404 for any other, theirs ended or someone else's).
   * No step-up: ending a session takes a way in away, it adds none. Audited.
   */
  async function revokeSession(p: OperatorPrincipal, req: RequestInfo, id: string): Promise<void> {
    if (!(await d.store.endSessionOf(p.operatorId, id, d.now()))) throw operatorErrors.sessionNotFound();
    await audit({ ...byWho({ id: p.operatorId, email: p.email }, req), action: "session.revoked", target: `operator_session:${id}`, detail: { current: id === p.sessionId } });
  }

  /** Ends every other session of the operator's ("sign out everywhere else"); how many. */
  async function revokeOtherSessions(p: OperatorPrincipal, req: RequestInfo): Promise<number> {
    const n = await d.store.endOtherSessions(p.operatorId, p.sessionId, d.now());
    await audit({ ...byWho({ id: p.operatorId, email: p.email }, req), action: "session.revoked_others", target: null, detail: { ended: n } });
    return n;
  }

  /** Step-up: the password again renews the session's proof for OPERATOR_STEP_UP_MS. */
  async function reauthenticate(p: OperatorPrincipal, password: string, req: RequestInfo): Promise<void> {
    await checkPassword(p.email, password, req, "step_up");
    await d.store.proveSession(p.sessionId, d.now());
    await audit({ ...byWho({ id: p.operatorId, email: p.email }, req), action: "step_up.success", target: null });
  }

  /** 403 reauthentication_required unless the session proved the password within OPERATOR_STEP_UP_MS. */
  function requireRecentProof(p: OperatorPrincipal): void {
    if (d.now() - p.provenAt > OPERATOR_STEP_UP_MS) throw operatorErrors.stepUpRequired();
  }

  return {
    create,
    remove,
    list: () => d.store.list(),
    login,
    verify,
    authenticate,
    logout,
    reauthenticate,
    requireRecentProof,
    sessions,
    regenerateBackupCodes,
    backupCodesLeft: (p: OperatorPrincipal) => d.store.remainingBackupCodes(p.operatorId),
    revokeSession,
    revokeOtherSessions,
    /** An audit row of the console's own (the console service writes one per action). */
    audit: (p: OperatorPrincipal, req: RequestInfo, action: string, target: string | null, detail?: Record<string, unknown>) =>
      audit({ ...byWho({ id: p.operatorId, email: p.email }, req), action, target, detail }),
    purgeExpired: (now: number) => d.store.purgeExpired(now, now - 86_400_000),
  };
}

export type OperatorService = ReturnType<typeof createOperatorService>;
