import type { Config } from "../../config";
import { hashToken, newId, newSecretToken, toIso, tokenTenant } from "../../kernel/ids";
import { AppError, errors } from "../../kernel/errors";
import { offsetOf, pageOf, type Page } from "../../kernel/paging";
import type { AuditEntry } from "../../security/repo";
import type { Limits, RateLimiter } from "../../security/rate-limit";
import { addressVerified } from "../../team/model";
import type { UserRow, UsersStore } from "../../team/repo";
import { DEFAULT_PROFILE } from "../../team/invitations-service";
import { auditEntry } from "../audit-entry";
import type { Principal, RequestInfo } from "../service";
import type { SignIn } from "../sign-in";
import type { IssuedTokens } from "../service";
import type { Sealer } from "../../security/secret-box";
import { OAUTH_ERRORS, type IdentityRead, type OAuthErrorCode } from "./model";
import { FlowError, type Protocol, type ProvenIdentity } from "./protocol";
import type { ProvidersService } from "./providers-service";
import type { FlowRow, OidcStore, ProviderRow } from "./repo";
import { NO_PASSWORD, hasPassword } from "./no-password";

export { NO_PASSWORD } from "./no-password";

/** How long a browser has between /start and the callback. */
export const FLOW_TTL_SECONDS = 600;

export interface FlowDeps {
  config: Config;
  now: () => number;
  repo: OidcStore;
  users: UsersStore;
  providers: ProvidersService;
  protocol: Protocol;
  /** Seals a flow's PKCE verifier, bound to its state's hash. */
  sealer: Sealer;
  signIn: SignIn;
  limiter: RateLimiter;
  limits: Limits;
  audit: (e: AuditEntry) => Promise<void> | void;
  /** For an unexpected failure's class (never its message, which may quote a provider). */
  log: (line: Record<string, unknown>) => void;
  /** 403 tenant_disabled when the operator disabled the organization. */
  tenantInService: (tenantId: string) => Promise<void>;
  /** 403 reauthentication_required unless the session proved its first factor within SUITE_REAUTH_WINDOW. */
  requireRecentProof: (p: Principal) => void;
}

export type CallbackOutcome =
  | { kind: "session"; tokens: IssuedTokens }
  | { kind: "challenge"; tempToken: string }
  | { kind: "linked"; providerId: string }
  | { kind: "failed"; code: OAuthErrorCode; link: boolean };

class Failure extends Error {
  constructor(readonly code: OAuthErrorCode, readonly reason: string) {
    super(code);
  }
}

const domainOf = (email: string) => email.slice(email.lastIndexOf("@") + 1);

/** A disabled organization's 403 as a flow failure: the browser lands on `?error=tenant_disabled`. */
const asFailure = (e: unknown): unknown => (e instanceof AppError && e.code === "tenant_disabled" ? new Failure("tenant_disabled", "organization disabled") : e);

/** The authorization-code flow: start, callback, and the identities it links. */
export function createFlowService(d: FlowDeps) {
  // Checked before the browser is sent to the provider, and again before anyone joins or signs in.
  const inService = (tenantId: string) => d.tenantInService(tenantId).catch((e: unknown) => Promise.reject(asFailure(e)));

  /**
   * A new authorization request for `provider` (enabled, of this tenant): the provider's URL and
   * the browser cookie that binds it. `userId` makes it a link flow for that signed-in user.
   */
  async function start(tenantId: string, subdomain: string, providerId: string, userId: string | null): Promise<{ url: string; browser: string }> {
    const p = await d.repo.provider(tenantId, providerId);
    if (!p || p.enabled !== 1) throw new Failure("oauth_provider_unavailable", "unknown or disabled provider");
    // Issue 16: an address nobody has proven cannot be tied to an outside identity (after the
    // provider's own check, so that another organization's provider stays unavailable).
    const linking = userId === null ? null : await d.users.byId(tenantId, userId);
    if (linking && !addressVerified(linking)) throw new Failure("oauth_account_unverified", "linking user's own address unverified");
    let as;
    try {
      as = await d.protocol.server(p);
    } catch (e) {
      throw new Failure("oauth_provider_error", e instanceof FlowError ? e.reason : "bad_document");
    }
    const o = d.protocol.generate;
    // `<tenant id>.<random>`: the callback finds the flow by (tenant_id, state_hash).
    const state = `${tenantId}.${o.generateRandomState()}`;
    const nonce = o.generateRandomNonce();
    const verifier = o.generateRandomCodeVerifier();
    const browser = newSecretToken();
    const now = d.now();
    const stateHash = hashToken(state);
    const flow: FlowRow = {
      state_hash: stateHash,
      tenant_id: tenantId,
      provider_id: p.id,
      user_id: userId,
      browser_hash: hashToken(browser),
      verifier_sealed: d.sealer.seal(verifier, stateHash),
      nonce,
      created_at: now,
      expires_at: now + FLOW_TTL_SECONDS * 1000,
    };
    await d.repo.openFlow(flow);
    const url = d.protocol.authorizationUrl(as, p, d.providers.redirectUri(subdomain), { state, nonce, challenge: await o.calculatePKCECodeChallenge(verifier) });
    return { url, browser };
  }

  /** The sign-in buttons' start: a failure is reported like a callback's, by a code. */
  async function startSignIn(tenantId: string | null, subdomain: string | null, providerId: string, req: RequestInfo) {
    try {
      if (!(await d.limiter.hit(d.limits.oauthStartPerIp, req.ip ?? "unknown")).allowed) throw new Failure("oauth_rate_limited", "starts per IP");
      if (tenantId === null || subdomain === null) throw new Failure("oauth_provider_unavailable", "no organization named");
      await inService(tenantId);
      return { ok: true as const, ...(await start(tenantId, subdomain, providerId, null)) };
    } catch (e) {
      if (!(e instanceof Failure)) throw e;
      // The provider's id only when it is one of this organization's: an id the caller made up (or took from another organization) is not recorded.
      const known = tenantId !== null && (await d.repo.provider(tenantId, providerId)) ? providerId : null;
      await d.audit(auditEntry("oauth.failure", { tenantId, userId: null }, req, { provider_id: known, code: e.code, reason: e.reason, stage: "start" }));
      return { ok: false as const, code: e.code };
    }
  }

  /** The link flow's start, for the signed-in user: errors are API errors here (a JSON call). */
  async function startLink(p: Principal, providerId: string): Promise<{ url: string; browser: string }> {
    // Adding a way in needs a recent proof (issue 29.3): a stale or stolen session must not link
    // an outside account that then signs in as this user, even after a password change.
    d.requireRecentProof(p);
    try {
      return await start(p.tenantId, p.subdomain, providerId, p.userId);
    } catch (e) {
      if (!(e instanceof Failure)) throw e;
      if (e.code === "oauth_provider_unavailable") throw errors.notFound("No such identity provider, or it is turned off.");
      if (e.code === "oauth_account_unverified") throw errors.conflict("oauth_account_unverified", OAUTH_ERRORS.oauth_account_unverified);
      throw errors.conflict("oauth_provider_error", "The identity provider cannot be reached; try again later.");
    }
  }

  /**
   * The provider's redirect back. `tenantId` is the organization the callback's host names;
   * `browser` the flow cookie. Every outcome is audited; none throws.
   */
  async function callback(tenantId: string | null, subdomain: string | null, query: URLSearchParams, browser: string | undefined, req: RequestInfo): Promise<CallbackOutcome> {
    let flow: FlowRow | null = null;
    let provider: ProviderRow | undefined;
    try {
      if (!(await d.limiter.hit(d.limits.oauthCallbackPerIp, req.ip ?? "unknown")).allowed) throw new Failure("oauth_rate_limited", "callbacks per IP");
      const state = query.get("state");
      if (!state) throw new Failure("oauth_state_invalid", "no state");
      // The organization the state names; a state from before states named it (a flow lives 10
      // minutes) is looked up in the one the callback's host names. Anything else: unknown.
      const where = tokenTenant(state);
      const stateTenant = where && (where.tenantId ?? tenantId);
      if (!stateTenant) throw new Failure("oauth_state_invalid", where ? "unknown or spent state" : "malformed state");
      const stateHash = hashToken(state);
      const found = (await d.repo.flow(stateTenant, stateHash)) ?? null;
      if (!found || found.expires_at <= d.now()) throw new Failure("oauth_state_invalid", found ? "expired state" : "unknown or spent state");
      // Another organization's host, or another browser than the one that started the flow (no
      // cookie, or another one): refused without spending it, so that nobody but the browser
      // that started a flow can end it, and the refusal is recorded where it was tried.
      if (tenantId !== found.tenant_id || subdomain === null) throw new Failure("oauth_identity_other_org", "state of another organization");
      if (!browser || hashToken(browser) !== found.browser_hash) throw new Failure("oauth_state_invalid", "browser mismatch");
      // Spent now, whatever happens next: a state works once.
      flow = (await d.repo.spendFlow(found.tenant_id, stateHash)) ?? null;
      if (!flow) throw new Failure("oauth_state_invalid", "state spent meanwhile");
      await inService(flow.tenant_id);
      provider = (await d.repo.provider(flow.tenant_id, flow.provider_id)) ?? undefined;
      if (!provider || provider.enabled !== 1) throw new Failure("oauth_provider_unavailable", "provider removed or disabled");
      let proven: ProvenIdentity;
      try {
        const as = await d.protocol.server(provider);
        const redirect = d.providers.redirectUri(subdomain);
        const callbackUrl = new URL(redirect);
        for (const [k, v] of query) callbackUrl.searchParams.append(k, v);
        const verifier = d.sealer.open(flow.verifier_sealed, flow.state_hash);
        proven = await d.protocol.complete(as, provider, d.providers.openSecret(provider), redirect, callbackUrl, { state, verifier, nonce: flow.nonce });
      } catch (e) {
        if (e instanceof FlowError) throw new Failure(e.code, e.reason);
        throw e;
      }
      return flow.user_id ? await link(flow, provider, proven, req) : await signIn(flow, provider, proven, req);
    } catch (e) {
      const known = asFailure(e);
      const failure = known instanceof Failure ? known : new Failure("oauth_provider_error", `unexpected: ${e instanceof Error ? e.name : "error"}`);
      const link = flow?.user_id != null;
      // Recorded in the organization whose flow it was once the flow is proven this browser's; before that, where it was tried.
      await d.audit(
        auditEntry("oauth.failure", { tenantId: flow?.tenant_id ?? tenantId, userId: flow?.user_id ?? null }, req, {
          provider_id: provider?.id ?? flow?.provider_id ?? null,
          code: failure.code,
          reason: failure.reason,
          stage: link ? "link" : "sign_in",
        }),
      );
      if (!(known instanceof Failure)) d.log({ level: "error", msg: "oauth callback failed unexpectedly", error: e instanceof Error ? e.name : typeof e });
      return { kind: "failed", code: failure.code, link };
    }
  }

  async function link(flow: FlowRow, p: ProviderRow, id: ProvenIdentity, req: RequestInfo): Promise<CallbackOutcome> {
    const user = await d.users.byId(flow.tenant_id, flow.user_id!);
    if (!user) throw new Failure("oauth_account_unavailable", "linking user gone");
    if (!addressVerified(user)) throw new Failure("oauth_account_unverified", "linking user's own address unverified");
    const existing = await d.repo.identity(flow.tenant_id, id.issuer, id.subject);
    if (existing) {
      if (existing.user_id !== user.id) throw new Failure("oauth_identity_in_use", "identity linked to another user");
      return { kind: "linked", providerId: p.id };
    }
    if (!id.email || !id.emailVerified) throw new Failure("oauth_email_unverified", "address missing or unverified");
    const domains = d.providers.domainsOf(p);
    if (domains.length > 0 && !domains.includes(domainOf(id.email))) throw new Failure("oauth_domain_not_allowed", "link: domain not allowed");
    const now = d.now();
    const row = { id: newId(), tenant_id: flow.tenant_id, user_id: user.id, provider_id: p.id, issuer: id.issuer, subject: id.subject, email: id.email, created_at: now, last_used_at: null };
    const entry = auditEntry("identity.linked", { tenantId: flow.tenant_id, userId: user.id }, req, { provider_id: p.id, identity_id: row.id, kind: p.kind });
    if ((await d.repo.linkIdentity(row, entry)) === "taken") throw new Failure("oauth_identity_in_use", "identity linked meanwhile");
    return { kind: "linked", providerId: p.id };
  }

  async function signIn(flow: FlowRow, p: ProviderRow, id: ProvenIdentity, req: RequestInfo): Promise<CallbackOutcome> {
    const method = `oidc:${p.name}`;
    // Found by (issuer, subject) only: an address never finds an account.
    const known = await d.repo.identity(flow.tenant_id, id.issuer, id.subject);
    let user: UserRow | null | undefined;
    if (known) {
      user = await d.users.byId(flow.tenant_id, known.user_id);
      if (!user) throw new Failure("oauth_account_unavailable", "identity's user gone");
      await d.repo.touchIdentity(flow.tenant_id, known.id, d.now());
    } else {
      user = await join(flow, p, id, req);
    }
    const outcome = await d.signIn(user, method, req);
    return outcome.kind === "session" ? { kind: "session", tokens: outcome.tokens } : { kind: "challenge", tempToken: outcome.tempToken };
  }

  /** An unknown identity becomes a member only with a verified address of an allowed domain, joining on, and no account with that address. */
  async function join(flow: FlowRow, p: ProviderRow, id: ProvenIdentity, req: RequestInfo): Promise<UserRow> {
    if (!id.email || !id.emailVerified) throw new Failure("oauth_email_unverified", "address missing or unverified");
    if (await d.users.byEmail(flow.tenant_id, id.email)) throw new Failure("oauth_account_exists", "address of an existing account");
    if (!d.providers.domainsOf(p).includes(domainOf(id.email))) throw new Failure("oauth_domain_not_allowed", "join: domain not allowed");
    if (p.auto_join !== 1) throw new Failure("oauth_not_registered", "joining is off");
    const profile = p.default_profile_id
      ? await d.users.profile(flow.tenant_id, p.default_profile_id)
      : await d.users.profileByName(flow.tenant_id, DEFAULT_PROFILE);
    const now = d.now();
    const user: UserRow = {
      id: newId(),
      tenant_id: flow.tenant_id,
      email: id.email,
      full_name: null,
      role: profile?.is_admin ? "admin" : "member",
      profile_id: profile?.id ?? null,
      password_hash: NO_PASSWORD,
      created_at: now,
      updated_at: now,
      // The provider vouched for the address: inside this organization only. Its admin picked the
      // provider, so this is no proof for anything that crosses organizations (issue 29.1).
      email_verified_at: null,
      provider_verified_at: now,
    };
    const identity = { id: newId(), tenant_id: flow.tenant_id, user_id: user.id, provider_id: p.id, issuer: id.issuer, subject: id.subject, email: id.email, created_at: now, last_used_at: now };
    const entry = auditEntry("oauth.joined", { tenantId: flow.tenant_id, userId: user.id }, req, { provider_id: p.id, identity_id: identity.id, profile_id: user.profile_id });
    if ((await d.repo.join(user, identity, entry)) === "exists") throw new Failure("oauth_account_exists", "address or identity taken meanwhile");
    return user;
  }

  async function identities(p: Principal, q: { page: number; size: number }): Promise<Page<IdentityRead>> {
    const [rows, total] = await Promise.all([d.repo.identitiesOfUser(p.tenantId, p.userId, q.size, offsetOf(q.page, q.size)), d.repo.identityCount(p.tenantId, p.userId)]);
    const items = rows.map((r): IdentityRead => ({ id: r.id, provider_id: r.provider_id, provider_name: r.provider_name, kind: r.kind, email: r.email, created_at: toIso(r.created_at) }));
    return pageOf(items, total, q.page, q.size);
  }

  /**
   * Unlinks one of the caller's identities, unless it is their last way to sign in: what counts is
   * a password of their own (not NO_PASSWORD) or another identity whose provider is enabled.
   */
  async function unlink(p: Principal, id: string, req: RequestInfo): Promise<void> {
    d.requireRecentProof(p);
    const row = await d.repo.identityOfUser(p.tenantId, p.userId, id);
    if (!row) throw errors.notFound("No such identity.");
    const user = await d.users.byId(p.tenantId, p.userId);
    if (!user) throw errors.sessionRevoked();
    if (!hasPassword(user)) {
      const others = (await d.repo.identitiesOfUser(p.tenantId, p.userId, 1000, 0)).filter((i) => i.id !== id);
      const usable = await Promise.all(others.map(async (i) => (await d.repo.provider(p.tenantId, i.provider_id))?.enabled === 1));
      if (!usable.includes(true)) throw errors.conflict("last_sign_in_method", "This is your last way to sign in: set a password or link another identity first.");
    }
    const entry = auditEntry("identity.unlinked", { tenantId: p.tenantId, userId: p.userId }, req, { identity_id: id, provider_id: row.provider_id });
    if (!(await d.repo.unlinkIdentity(p.tenantId, p.userId, id, entry, d.now()))) throw errors.notFound("No such identity.");
  }

  return { startSignIn, startLink, callback, identities, unlink };
}

export type FlowService = ReturnType<typeof createFlowService>;
