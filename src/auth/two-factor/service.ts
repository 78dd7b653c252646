import type { Config } from "../../config";
import { toIso } from "../../kernel/ids";
import { errors } from "../../kernel/errors";
import type { PasswordHasher } from "../../security/passwords";
import type { Limit, Limits, RateLimiter } from "../../security/rate-limit";
import type { AuditEntry } from "../../security/repo";
import type { TenantsStore } from "../../organization/repo";
import type { UserRow, UsersStore } from "../../team/repo";
import type { AuthService, IssuedTokens, Principal, RequestInfo } from "../service";
import type { Tokens } from "../tokens";
import { backupCodeHash, newBackupCodes, normalizeBackupCode } from "./backup-codes";
import type { ReauthenticateBody, Reauthenticated } from "../model";
import { type BackupCodes, type DisableBody, type TwoFactorEnabled, type TwoFactorStatus, type TwoFactorSetup, type VerifyBody, twoFactorErrors as fail } from "./model";
import type { Owner, TotpRow, TwoFactorStore } from "./repo";
import type { SecretBox } from "../../security/secret-box";
import { TOTP_ISSUER, matchStep, newTotpSecret, otpauthUrl } from "./totp";

/** Consecutive wrong codes, across all of a user's temp tokens, that lock the factor (docs/interface.md#limits). */
export const MAX_FAILURES = 20;
export const LOCK_MS = 15 * 60_000;

export interface TwoFactorDeps {
  config: Config;
  now: () => number;
  repo: TwoFactorStore;
  box: SecretBox;
  users: UsersStore;
  tenants: TenantsStore;
  tokens: Tokens;
  hasher: PasswordHasher;
  limiter: RateLimiter;
  limits: Limits;
  auth: AuthService;
  audit: (e: AuditEntry) => Promise<void>;
  /** How many passkeys the user holds (the sign-in policy accepts one instead of 2FA). */
  passkeyCount: (tenantId: string, userId: string) => Promise<number>;
}

const ownerOf = (p: Principal): Owner => ({ tenantId: p.tenantId, userId: p.userId });
const isEnabled = (row: TotpRow | null): row is TotpRow => row !== null && row.enabled_at !== null;

export function createTwoFactorService(d: TwoFactorDeps) {
  const entry = (action: string, req: RequestInfo, detail?: Record<string, unknown>) => ({ action, ip: req.ip, userAgent: req.userAgent, detail });
  const audit = (o: Owner, action: string, req: RequestInfo, detail?: Record<string, unknown>) =>
    d.audit({ tenantId: o.tenantId, userId: o.userId, ...entry(action, req, detail) });

  const secretOf = (row: TotpRow) => d.box.open(row.secret_enc, row.user_id);

  function freshBackupCodes(userId: string) {
    const codes = newBackupCodes();
    return { codes, hashes: codes.map((c) => backupCodeHash(d.box.mac, userId, normalizeBackupCode(c)!)) };
  }

  async function revokeOthersIf(wanted: boolean | undefined, p: Principal, req: RequestInfo) {
    if (wanted === true) await d.auth.revokeOthers(p, req);
  }

  /**
   * Counts the attempt, atomically, before any code is looked at: of 50 sent at once, at most the
   * limit are checked. A locked factor is refused before it is even counted.
   */
  async function admit(o: Owner, row: TotpRow, counter: Limit) {
    const now = d.now();
    if (row.locked_until !== null && row.locked_until > now) throw fail.locked((row.locked_until - now) / 1000);
    const limit = await d.limiter.hit(counter, `${o.tenantId}:${o.userId}`);
    if (!limit.allowed) throw errors.rateLimited(limit.retryAfterSeconds);
  }

  /**
   * Spends `code` (a TOTP step, or a backup code) of an enabled factor; a wrong one is counted
   * toward the lock and audited (with why, never with the code).
   */
  async function prove(o: Owner, row: TotpRow, code: string, req: RequestInfo, during: string): Promise<void> {
    const now = d.now();
    let reason: string;
    if (/^\d{6}$/.test(code)) {
      const secret = secretOf(row);
      const step = matchStep(secret, code, now, row.last_step);
      if (step !== null && (await d.repo.acceptStep(o, step, now))) return;
      reason = step !== null || matchStep(secret, code, now, null) !== null ? "replayed_code" : "wrong_code";
    } else {
      const normalized = normalizeBackupCode(code);
      if (normalized !== null && (await d.repo.useBackupCode(o, backupCodeHash(d.box.mac, o.userId, normalized), now))) {
        await audit(o, "2fa.backup_code_used", req, { during, remaining: await d.repo.remainingBackupCodes(o) });
        return;
      }
      reason = "wrong_backup_code";
    }
    const { lockedUntil } = await d.repo.recordFailure(o, now, MAX_FAILURES, LOCK_MS);
    await audit(o, "2fa.failure", req, { during, reason });
    if (lockedUntil !== null) await audit(o, "2fa.locked", req, { until: toIso(lockedUntil), failures: MAX_FAILURES });
    throw fail.invalidCode();
  }

  /**
   * The second-factor gate of every sign-in (password, magic link): a temp_token when the user's
   * factor is on, null when it is not.
   */
  async function challenge(user: UserRow, method: string, req: RequestInfo): Promise<string | null> {
    const o = { tenantId: user.tenant_id, userId: user.id };
    if (!isEnabled(await d.repo.get(o))) return null;
    return d.auth.openChallenge(user, method, req);
  }

  /** Setup, confirm and backup-code regeneration need a recent first factor (docs/interface.md#sessions): a stolen access token is not enough. */
  async function setup(p: Principal, req: RequestInfo, revokeOthers?: boolean): Promise<TwoFactorSetup> {
    d.auth.requireRecentProof(p);
    const o = ownerOf(p);
    const existing = await d.repo.get(o);
    if (isEnabled(existing)) throw fail.alreadyEnabled();
    const secret = newTotpSecret();
    const { codes, hashes } = freshBackupCodes(p.userId);
    const started = await d.repo.startSetup(o, d.box.seal(secret, p.userId), hashes, entry("2fa.setup", req, { replaced_pending: existing !== null }), d.now());
    if (!started) throw fail.alreadyEnabled();
    await revokeOthersIf(revokeOthers, p, req);
    return { secret, otpauth_url: otpauthUrl(secret, p.email, `${TOTP_ISSUER} (${p.subdomain})`), backup_codes: codes };
  }

  /** Only a code from the app turns the factor on: it proves the app holds the secret. */
  async function confirm(p: Principal, code: string, req: RequestInfo): Promise<TwoFactorEnabled> {
    d.auth.requireRecentProof(p);
    const o = ownerOf(p);
    const row = await d.repo.get(o);
    if (row === null) throw fail.notPending();
    if (row.enabled_at !== null) throw fail.alreadyEnabled();
    await admit(o, row, d.limits.twoFactorConfirm);
    const now = d.now();
    const step = matchStep(secretOf(row), code, now, row.last_step);
    if (step === null || !(await d.repo.enable(o, step, entry("2fa.enabled", req), now))) {
      await audit(o, "2fa.failure", req, { during: "confirm", reason: "wrong_code" });
      throw fail.invalidCode();
    }
    return { enabled: true };
  }

  /**
   * temp_token + code → a session (method "2fa"). The temp_token is spent by the verify that
   * succeeds, in the commit that opens the session: of two at once, one gets a session.
   */
  async function verify(input: VerifyBody, requestedSubdomain: string | null, req: RequestInfo): Promise<IssuedTokens> {
    let o: Owner;
    let challengeId: string;
    try {
      const claims = await d.tokens.verify(input.temp_token, "2fa");
      o = { tenantId: claims.tid, userId: claims.sub };
      challengeId = claims.sid;
    } catch {
      throw fail.invalidTempToken();
    }
    const tenant = await d.tenants.byId(o.tenantId);
    if (requestedSubdomain !== null && tenant?.subdomain !== requestedSubdomain) throw errors.tenantMismatch();
    // A challenge issued before the operator disabled the organization opens no session.
    if (tenant?.disabled_at != null) throw errors.tenantDisabled();
    const user = await d.users.byId(o.tenantId, o.userId);
    const row = user ? await d.repo.get(o) : null;
    const pending = user ? await d.auth.challenge(challengeId, o.tenantId, o.userId) : null;
    // Spent, ended (logout-all, 2FA disable, a password change), expired, or older than the
    // factor (turned off and on again since), or the user removed: sign in again.
    if (!user || !isEnabled(row) || pending === null || pending.created_at < row.enabled_at!) throw fail.invalidTempToken();
    await admit(o, row, d.limits.twoFactorVerify);
    await prove(o, row, input.code, req, "verify");
    const tokens = await d.auth.completeChallenge(pending, user, req);
    if (tokens === null) throw fail.invalidTempToken();
    return tokens;
  }

  async function disable(p: Principal, input: DisableBody, req: RequestInfo): Promise<TwoFactorEnabled> {
    const o = ownerOf(p);
    const row = await d.repo.get(o);
    if (!isEnabled(row)) throw fail.notEnabled();
    // The organization's sign-in policy may need it: without a passkey, 2FA stays on.
    if ((await d.tenants.byId(o.tenantId))?.require_passkey_or_2fa && (await d.passkeyCount(o.tenantId, o.userId)) === 0) {
      throw errors.requiredByPolicy("Your organization requires a passkey or two-factor authentication: add a passkey before turning 2FA off.");
    }
    await admit(o, row, d.limits.twoFactorDisable);
    const user = await d.users.byId(o.tenantId, o.userId);
    if (!user || !(await d.hasher.verify(input.password, user.password_hash))) {
      await audit(o, "2fa.failure", req, { during: "disable", reason: "wrong_password" });
      throw errors.invalidCredentials();
    }
    await prove(o, row, input.code, req, "disable");
    // Outstanding temp_tokens end first: none outlives the factor it was issued for.
    await d.auth.endChallenges(o.tenantId, o.userId);
    if (!(await d.repo.disable(o, entry("2fa.disabled", req), d.now()))) throw fail.notEnabled();
    await revokeOthersIf(input.revoke_other_sessions, p, req);
    return { enabled: false as const };
  }

  async function status(p: Principal): Promise<TwoFactorStatus> {
    const o = ownerOf(p);
    const row = await d.repo.get(o);
    const enabled = isEnabled(row);
    // A pending setup's codes do not work yet: none remain until it is confirmed.
    return { enabled, pending: row !== null && !enabled, backup_codes_remaining: enabled ? await d.repo.remainingBackupCodes(o) : 0 };
  }

  async function regenerateBackupCodes(p: Principal, req: RequestInfo, revokeOthers?: boolean): Promise<BackupCodes> {
    d.auth.requireRecentProof(p);
    const o = ownerOf(p);
    const { codes, hashes } = freshBackupCodes(p.userId);
    if (!(await d.repo.replaceBackupCodes(o, hashes, entry("2fa.backup_codes_regenerated", req), d.now()))) throw fail.notEnabled();
    await revokeOthersIf(revokeOthers, p, req);
    return { backup_codes: codes };
  }

  /**
   * POST /auth/reauthenticate: the password (under the login limits) and, when 2FA is on, a code,
   * renew the caller's session proof for SUITE_REAUTH_WINDOW.
   */
  async function reauthenticate(p: Principal, input: Required<Pick<ReauthenticateBody, "password">> & Pick<ReauthenticateBody, "code">, req: RequestInfo): Promise<Reauthenticated> {
    await d.auth.confirmPassword(p, input.password, req);
    const o = ownerOf(p);
    const row = await d.repo.get(o);
    if (isEnabled(row)) {
      if (input.code === undefined) {
        await d.auth.auditReauthFailure(p, req, "code_missing");
        throw fail.codeNeeded();
      }
      await admit(o, row, d.limits.twoFactorReauth);
      try {
        await prove(o, row, input.code, req, "reauthenticate");
      } catch (e) {
        await d.auth.auditReauthFailure(p, req, "wrong_code");
        throw e;
      }
    }
    const at = await d.auth.recordProof(p, req, { second_factor: isEnabled(row) });
    return { detail: "Reauthenticated.", reauthenticated_at: toIso(at) };
  }

  return { challenge, setup, confirm, verify, disable, status, regenerateBackupCodes, reauthenticate };
}

export type TwoFactorService = ReturnType<typeof createTwoFactorService>;
