import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from "@simplewebauthn/server";
import type { Config } from "../../config";
import { hashToken, newId, toIso } from "../../kernel/ids";
import { errors } from "../../kernel/errors";
import type { Limits, RateLimiter } from "../../security/rate-limit";
import type { AuditEntry } from "../../security/repo";
import type { TenantsStore } from "../../organization/repo";
import type { UserRow, UsersStore } from "../../team/repo";
import { auditEntry, unnamedRequest } from "../audit-entry";
import { hasPassword } from "../sign-in-providers/no-password";
import type { AuthService, IssuedTokens, Principal, RequestInfo } from "../service";
import {
  type AuthenticationResponse,
  type CreationOptions,
  type PasskeyRead,
  type RegisterVerifyBody,
  type RequestOptions,
  passkeyErrors as fail,
} from "./model";
import { originsFor, rpIdFor } from "./relying-party";
import type { PasskeyChallengeRow, PasskeyRow, PasskeysStore } from "./repo";

/** A challenge is good for this long, and once (issue 33). */
export const CHALLENGE_MS = 5 * 60_000;
/** ES256, EdDSA, RS256: what authenticators in use sign with. */
const ALGORITHMS = [-7, -8, -257];

export interface PasskeysDeps {
  config: Config;
  now: () => number;
  repo: PasskeysStore;
  users: UsersStore;
  tenants: TenantsStore;
  auth: AuthService;
  limiter: RateLimiter;
  limits: Limits;
  audit: (e: AuditEntry) => Promise<void>;
  /** 403 tenant_disabled for an organization the operator disabled. */
  tenantInService: (tenantId: string) => Promise<void>;
  /** How many identity providers the user can sign in with (another way in than a passkey). */
  identities: (tenantId: string, userId: string) => Promise<number>;
  /** Whether the user's 2FA is on (the sign-in policy accepts it instead of a passkey). */
  twoFactorOn: (tenantId: string, userId: string) => Promise<boolean>;
}

const fromB64 = (s: string) => Buffer.from(s, "base64url");
/** The user handle names the account: `<tenant id>.<user id>` (ids hold no dot), no address or name. */
const userHandle = (tenantId: string, userId: string) => new TextEncoder().encode(`${tenantId}.${userId}`);
function accountOf(handle: string | undefined): { tenantId: string; userId: string } | null {
  if (!handle) return null;
  const m = /^([A-Za-z0-9_-]{1,64})\.([A-Za-z0-9_-]{1,64})$/.exec(fromB64(handle).toString("utf8"));
  return m ? { tenantId: m[1]!, userId: m[2]! } : null;
}

/** The challenge a response signed, from its clientDataJSON; null when that is not JSON with one. */
function challengeOf(clientDataJSON: string): string | null {
  try {
    const c = JSON.parse(fromB64(clientDataJSON).toString("utf8")) as { challenge?: unknown };
    return typeof c.challenge === "string" && c.challenge.length > 0 && c.challenge.length <= 200 ? c.challenge : null;
  } catch {
    return null;
  }
}

export const toPasskeyRead = (r: PasskeyRow): PasskeyRead => ({
  id: r.id,
  name: r.name,
  created_at: toIso(r.created_at),
  last_used_at: r.last_used_at === null ? null : toIso(r.last_used_at),
  backed_up: r.backed_up,
  transports: JSON.parse(r.transports) as string[],
});

/** Why a verify failed: written to the audit row, never told to the caller. */
class Refused extends Error {
  constructor(readonly reason: string, readonly who: { tenantId: string | null; userId: string | null } = { tenantId: null, userId: null }) {
    super(reason);
  }
}

export function createPasskeysService(d: PasskeysDeps) {
  const audit = (...a: Parameters<typeof auditEntry>) => d.audit(auditEntry(...a));
  const whoOf = (p: Principal) => ({ tenantId: p.tenantId, userId: p.userId });

  async function challengeRow(challenge: string, purpose: PasskeyChallengeRow["purpose"], tenantId: string | null, userId: string | null, rpId: string) {
    const now = d.now();
    await d.repo.openChallenge({ challenge_hash: hashToken(challenge), purpose, tenant_id: tenantId, user_id: userId, rp_id: rpId, created_at: now, expires_at: now + CHALLENGE_MS });
  }

  /**
   * Spends the challenge a response carries: each is answered once, within its 5 minutes, and only
   * where it was asked (the organization's host, or the base domain): another organization's
   * challenge is neither accepted nor spent.
   */
  async function spend(clientDataJSON: string, purpose: PasskeyChallengeRow["purpose"], tenantId: string | null): Promise<PasskeyChallengeRow & { challenge: string }> {
    const challenge = challengeOf(clientDataJSON);
    const row = challenge === null ? null : await d.repo.spendChallenge(hashToken(challenge), tenantId, d.now());
    if (row === null || challenge === null) throw new Refused("unknown_or_spent_challenge", { tenantId, userId: null });
    if (row.purpose !== purpose) throw new Refused("wrong_challenge_purpose");
    return { ...row, challenge };
  }

  async function subdomainOf(tenantId: string): Promise<string> {
    const tenant = await d.tenants.byId(tenantId);
    if (!tenant) throw errors.sessionRevoked();
    return tenant.subdomain;
  }

  /** Creation options for a new passkey of the signed-in user (step-up required). */
  async function registerOptions(p: Principal): Promise<CreationOptions> {
    d.auth.requireRecentProof(p);
    const rpId = rpIdFor(d.config, p.subdomain);
    if (rpId === null) throw fail.unavailable();
    const user = await d.users.byId(p.tenantId, p.userId);
    if (!user) throw errors.sessionRevoked();
    const existing = await d.repo.list(p.tenantId, p.userId);
    const options = await generateRegistrationOptions({
      rpName: "Workspace Suite",
      rpID: rpId,
      userName: user.email,
      userID: userHandle(p.tenantId, p.userId),
      userDisplayName: user.full_name ?? user.email,
      attestationType: "none",
      excludeCredentials: existing.map((r) => ({ id: r.credential_id, transports: JSON.parse(r.transports) as string[] })),
      authenticatorSelection: { residentKey: "required", requireResidentKey: true, userVerification: "required" },
      supportedAlgorithmIDs: ALGORITHMS,
      timeout: CHALLENGE_MS,
    });
    await challengeRow(options.challenge, "register", p.tenantId, p.userId, rpId);
    return options as CreationOptions;
  }

  /** Checks the browser's new credential against its challenge and stores it. */
  async function registerVerify(p: Principal, body: RegisterVerifyBody, req: RequestInfo): Promise<PasskeyRead> {
    d.auth.requireRecentProof(p);
    let row: PasskeyRow;
    try {
      const c = await spend(body.response.response.clientDataJSON, "register", p.tenantId);
      if (c.tenant_id !== p.tenantId || c.user_id !== p.userId) throw new Refused("another_users_challenge");
      const v = await verifyRegistrationResponse({
        response: body.response,
        expectedChallenge: c.challenge,
        expectedOrigin: originsFor(d.config, p.subdomain),
        expectedRPID: c.rp_id,
        requireUserVerification: true,
        supportedAlgorithmIDs: ALGORITHMS,
      }).catch((e: unknown) => {
        throw new Refused(`verification_failed: ${String((e as Error).message ?? e).slice(0, 200)}`);
      });
      if (!v.verified) throw new Refused("not_verified");
      const info = v.registrationInfo;
      const now = d.now();
      row = {
        tenant_id: p.tenantId,
        id: newId(),
        user_id: p.userId,
        credential_id: info.credential.id,
        public_key: Buffer.from(info.credential.publicKey).toString("base64url"),
        counter: info.credential.counter,
        transports: JSON.stringify(body.response.response.transports ?? []),
        backed_up: info.credentialBackedUp,
        rp_id: c.rp_id,
        name: body.name ?? defaultName(body.response.authenticatorAttachment, now),
        created_at: now,
        last_used_at: null,
      };
    } catch (e) {
      if (!(e instanceof Refused)) throw e;
      await audit("passkey.register_failure", whoOf(p), req, { reason: e.reason });
      throw fail.registrationFailed();
    }
    const entry = auditEntry("passkey.registered", whoOf(p), req, { passkey_id: row.id, name: row.name, backed_up: row.backed_up });
    if (!(await d.repo.insert(row, entry, row.created_at))) throw fail.alreadyRegistered();
    return toPasskeyRead(row);
  }

  const list = async (p: Principal) => (await d.repo.list(p.tenantId, p.userId)).map(toPasskeyRead);

  async function rename(p: Principal, id: string, name: string, req: RequestInfo): Promise<PasskeyRead> {
    const entry = auditEntry("passkey.renamed", whoOf(p), req, { passkey_id: id, name });
    const row = await d.repo.rename(p.tenantId, p.userId, id, name, entry, d.now());
    if (!row) throw fail.notFound();
    return toPasskeyRead(row);
  }

  /** Removes a passkey (step-up required); never the user's last way to sign in. */
  async function remove(p: Principal, id: string, req: RequestInfo): Promise<void> {
    d.auth.requireRecentProof(p);
    const user = await d.users.byId(p.tenantId, p.userId);
    if (!user) throw errors.sessionRevoked();
    const otherWayIn = hasPassword(user) || (await d.identities(p.tenantId, p.userId)) > 0;
    const entry = auditEntry("passkey.removed", whoOf(p), req, { passkey_id: id });
    // The organization's sign-in policy may need this user to keep a passkey: the store's
    // keep-one check (one commit) then guards it as it guards the last way in.
    const tenant = await d.tenants.byId(p.tenantId);
    const policyNeedsOne =
      (Boolean(tenant?.require_passkey_for_admins) && user.role === "admin") ||
      (Boolean(tenant?.require_passkey_or_2fa) && !(await d.twoFactorOn(p.tenantId, p.userId)));
    const done = await d.repo.remove(p.tenantId, p.userId, id, !otherWayIn || policyNeedsOne, entry, d.now());
    if (done === "not_found") throw fail.notFound();
    if (done === "last") throw otherWayIn ? fail.requiredByPolicy() : fail.lastWayIn();
  }

  /**
   * Request options for a sign-in (or a step-up): a challenge of 5 minutes, spent once. No
   * credential is listed: the browser offers the user's discoverable passkeys for this RP.
   */
  async function loginOptions(tenantId: string | null, subdomain: string | null, req: RequestInfo): Promise<RequestOptions> {
    const limit = await d.limiter.hit(d.limits.passkeyOptionsPerIp, req.ip ?? "unknown");
    if (!limit.allowed) throw errors.rateLimited(limit.retryAfterSeconds);
    const rpId = rpIdFor(d.config, subdomain);
    if (rpId === null) throw fail.unavailable();
    const options = await generateAuthenticationOptions({ rpID: rpId, userVerification: "required", timeout: CHALLENGE_MS });
    await challengeRow(options.challenge, "login", tenantId, null, rpId);
    return options as RequestOptions;
  }

  /**
   * Checks an assertion: its challenge (spent here, whatever the outcome), the credential of the
   * organization the challenge or the user handle names, origin, RP, signature, user
   * verification, and that the signature counter moved forward. Answers the passkey and its user.
   */
  async function assert(response: AuthenticationResponse, expectTenantId: string | null, req: RequestInfo): Promise<{ user: UserRow; key: PasskeyRow }> {
    const c = await spend(response.response.clientDataJSON, "login", expectTenantId);
    const account = accountOf(response.response.userHandle);
    const tenantId = c.tenant_id ?? account?.tenantId ?? null;
    if (tenantId === null) throw new Refused("no_user_handle");
    const who = { tenantId, userId: account?.userId ?? null };
    if (account !== null && account.tenantId !== tenantId) throw new Refused("another_organization", { tenantId, userId: null });
    const key = await d.repo.byCredential(tenantId, response.id);
    if (!key) throw new Refused("unknown_credential", who);
    const owner = { tenantId, userId: key.user_id };
    if (account !== null && account.userId !== key.user_id) throw new Refused("user_handle_mismatch", owner);
    const v = await verifyAuthenticationResponse({
      response,
      expectedChallenge: c.challenge,
      expectedOrigin: originsFor(d.config, await subdomainOf(tenantId)),
      expectedRPID: c.rp_id,
      // The counter is compared by recordUse, in the statement that moves it (two at once cannot both pass).
      credential: { id: key.credential_id, publicKey: fromB64(key.public_key), counter: 0 },
      requireUserVerification: true,
    }).catch((e: unknown) => {
      throw new Refused(`verification_failed: ${String((e as Error).message ?? e).slice(0, 200)}`, owner);
    });
    if (!v.verified) throw new Refused("not_verified", owner);
    const counter = v.authenticationInfo.newCounter;
    if (!(await d.repo.recordUse(tenantId, key.id, counter, v.authenticationInfo.credentialBackedUp, d.now()))) {
      await audit("passkey.clone_suspected", owner, req, { passkey_id: key.id, counter, stored_counter: key.counter });
      throw new Refused("counter_did_not_advance", owner);
    }
    const user = await d.users.byId(tenantId, key.user_id);
    if (!user) throw new Refused("user_removed", owner);
    return { user, key };
  }

  /** A sign-in with a passkey: user verification makes it two factors, so a session at once (method `passkey`). */
  async function loginVerify(response: AuthenticationResponse, requestedTenantId: string | null, req: RequestInfo): Promise<IssuedTokens> {
    const perIp = await d.limiter.hit(d.limits.loginPerIp, req.ip ?? "unknown");
    if (!perIp.allowed) throw errors.rateLimited(perIp.retryAfterSeconds);
    let found: { user: UserRow; key: PasskeyRow };
    try {
      found = await assert(response, requestedTenantId, req);
    } catch (e) {
      if (!(e instanceof Refused)) throw e;
      // On the base domain the user handle, which anyone can put in a request, names the
      // organization: its log gets the failure without the caller's IP and user agent (issue 29.1).
      await audit("login.failure", e.who, unnamedRequest(req, requestedTenantId !== null), { method: "passkey", reason: e.reason, ...(requestedTenantId === null ? { tenant_named: false } : {}) });
      throw fail.invalid();
    }
    await d.tenantInService(found.user.tenant_id);
    return d.auth.startSession(found.user, "passkey", req);
  }

  /** POST /auth/reauthenticate with a passkey: one of the caller's own renews the session's proof. */
  async function reauthenticate(p: Principal, response: AuthenticationResponse, req: RequestInfo) {
    const perIp = await d.limiter.hit(d.limits.loginPerIp, req.ip ?? "unknown");
    if (!perIp.allowed) throw errors.rateLimited(perIp.retryAfterSeconds);
    let key: PasskeyRow;
    try {
      const found = await assert(response, p.tenantId, req);
      if (found.user.id !== p.userId) throw new Refused("another_users_passkey");
      key = found.key;
    } catch (e) {
      if (!(e instanceof Refused)) throw e;
      await d.auth.auditReauthFailure(p, req, `passkey: ${e.reason}`);
      throw fail.invalid();
    }
    const at = await d.auth.recordProof(p, req, { method: "passkey", passkey_id: key.id, second_factor: true });
    return { detail: "Reauthenticated.", reauthenticated_at: toIso(at) };
  }

  const hasPasskey = async (tenantId: string, userId: string) => (await d.repo.list(tenantId, userId)).length > 0;

  return { registerOptions, registerVerify, list, rename, remove, loginOptions, loginVerify, reauthenticate, hasPasskey };
}

/** A name until the user gives one: what kind of authenticator, and when. */
function defaultName(attachment: string | undefined, now: number): string {
  const kind = attachment === "cross-platform" ? "Security key" : "Passkey";
  return `${kind} added ${new Date(now).toISOString().slice(0, 10)}`;
}

export type PasskeysService = ReturnType<typeof createPasskeysService>;
