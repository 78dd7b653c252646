import * as oauth from "oauth4webapi";
import type { Config } from "../../config";
import { isDevHost } from "../../config";
import { OutboundError, type OutboundGuard } from "../../outbound/guard";
import type { ProviderKind } from "./model";
import { type ProviderFailure, foreignEndpoint, providerFailure } from "./provider-reach";

/** What a provider proved about the person: who they are there, and their address if it is verified. */
export interface ProvenIdentity {
  issuer: string;
  subject: string;
  /** Lower-cased; null when the provider gave none. */
  email: string | null;
  /** Only true when the provider itself vouches for the address (see verifiedEmail). */
  emailVerified: boolean;
}

/** A failure the callback reports as `code` (model.ts OAUTH_ERRORS); `reason` is the audit's, one of PROVIDER_FAILURES. */
export class FlowError extends Error {
  constructor(readonly code: "oauth_provider_error" | "oauth_token_invalid", readonly reason: ProviderFailure) {
    super(code);
  }
}

export const GOOGLE_ISSUER = "https://accounts.google.com";
/**
 * Microsoft Entra ID, work and school accounts of any directory (`organizations`): an admin needs
 * no directory id. Each ID token names its directory (`tid`) and must come from that directory's
 * own issuer; identities are keyed by that issuer. Who may join is still limited by allowed_domains.
 */
export const MICROSOFT_ISSUER = "https://login.microsoftonline.com/organizations/v2.0";
export const GITHUB_ISSUER = "https://github.com";
/** The algorithms an ID token may be signed with: asymmetric only, never `none` or an HMAC. */
const ID_TOKEN_ALGS = ["RS256", "PS256", "ES256", "EdDSA"];
/**
 * oauth4webapi's two untyped exports for multi-tenant issuers, the ones openid-client v6 uses for
 * Entra ID: discovery that accepts the templated issuer, and the issuer each ID token is held to.
 */
const internal = oauth as unknown as { _nodiscoverycheck: symbol; _expectedIssuer: symbol };
const DISCOVERY_TTL_MS = 10 * 60_000;
const TIMEOUT_MS = 10_000;

export interface ProviderSpec {
  kind: ProviderKind;
  issuer: string | null;
  client_id: string;
}

/** The issuer URL an `oidc` provider may have: https, or (tests only) http on a loopback host. */
export function issuerProblem(config: Config, issuer: string): string | null {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    return "must be a URL such as https://login.example.com";
  }
  if (url.search || url.hash || url.username || url.password) return "must not carry a query, fragment or credentials";
  if (url.protocol === "https:") return null;
  if (url.protocol === "http:" && config.oidcTestLoopback && isDevHost(url.hostname)) return null;
  return "must be an https URL";
}

/**
 * The OAuth / OpenID Connect side of a flow, through oauth4webapi: no hand-made token checks.
 * Every request to a provider goes through the outbound guard (oauth4webapi's customFetch).
 */
export function createProtocol(config: Config, outbound: OutboundGuard) {
  const discovered = new Map<string, { as: oauth.AuthorizationServer; at: number }>();
  const githubBase = config.oidcTestGithubUrl ?? null;
  // http is only ever allowed towards loopback hosts with the test-only setting on.
  const insecure = (url: string) => config.oidcTestLoopback && new URL(url).protocol === "http:" && isDevHost(new URL(url).hostname);
  const guarded = (url: string, init: RequestInit | undefined) => outbound.guardedFetch(url, init, { purpose: "identity_provider", timeoutMs: TIMEOUT_MS });
  const opts = (url: string) => ({ [oauth.allowInsecureRequests]: insecure(url), [oauth.customFetch]: guarded, signal: AbortSignal.timeout(TIMEOUT_MS) });

  async function discover(kind: ProviderKind, issuer: string, exact: boolean): Promise<oauth.AuthorizationServer> {
    const hit = discovered.get(issuer);
    if (hit && Date.now() - hit.at < DISCOVERY_TTL_MS) return hit.as;
    const url = new URL(issuer);
    const as = await oauth.processDiscoveryResponse(exact ? url : (internal._nodiscoverycheck as never), await oauth.discoveryRequest(url, opts(issuer)));
    if (foreignEndpoint(kind, as, issuer, config.oidcEndpointHosts)) throw new FlowError("oauth_provider_error", "foreign_endpoint");
    discovered.set(issuer, { as, at: Date.now() });
    return as;
  }

  /**
   * Registration's check of an issuer: null when its host may be reached, else why not
   * (`refused_address`). A name that does not resolve yet is accepted: sign-in reports it.
   */
  async function issuerRefused(issuer: string): Promise<"refused_address" | null> {
    try {
      await outbound.check(issuer, "identity_provider", TIMEOUT_MS);
      return null;
    } catch (e) {
      return e instanceof OutboundError && e.reason === "refused_address" ? "refused_address" : null;
    }
  }

  /** The provider's endpoints (discovery for OpenID Connect; GitHub's are fixed). */
  async function server(p: ProviderSpec): Promise<oauth.AuthorizationServer> {
    try {
      switch (p.kind) {
        case "github": {
          const web = githubBase ?? "https://github.com";
          return { issuer: GITHUB_ISSUER, authorization_endpoint: `${web}/login/oauth/authorize`, token_endpoint: `${web}/login/oauth/access_token` };
        }
        case "google":
          return await discover("google", GOOGLE_ISSUER, true);
        case "microsoft": {
          const as = await discover("microsoft", MICROSOFT_ISSUER, false);
          // The token's directory's own issuer: https://login.microsoftonline.com/{tid}/v2.0.
          return { ...as, [internal._expectedIssuer]: (r: { claims: Record<string, unknown> }) => String(as.issuer).replace("{tenantid}", String(r.claims.tid ?? "")) } as oauth.AuthorizationServer;
        }
        default:
          return await discover("oidc", p.issuer!, true);
      }
    } catch (e) {
      throw e instanceof FlowError ? e : new FlowError("oauth_provider_error", providerFailure(e, "bad_document"));
    }
  }

  function authorizationUrl(as: oauth.AuthorizationServer, p: ProviderSpec, redirectUri: string, f: { state: string; nonce: string; challenge: string }): string {
    const url = new URL(as.authorization_endpoint!);
    const params: Record<string, string> = {
      client_id: p.client_id,
      redirect_uri: redirectUri,
      response_type: "code",
      scope: p.kind === "github" ? "read:user user:email" : "openid email profile",
      state: f.state,
      code_challenge: f.challenge,
      code_challenge_method: "S256",
    };
    if (p.kind !== "github") params.nonce = f.nonce;
    // Let the person pick among several accounts rather than silently use the last one.
    if (p.kind === "google" || p.kind === "microsoft") params.prompt = "select_account";
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    return url.href;
  }

  /**
   * Checks the callback's parameters against the state, exchanges the code (with the PKCE
   * verifier), validates the ID token (signature from the JWKS, issuer, audience, expiry, nonce,
   * algorithm) and answers who the person is.
   */
  async function complete(
    as: oauth.AuthorizationServer,
    p: ProviderSpec,
    clientSecret: string,
    redirectUri: string,
    callback: URL,
    f: { state: string; verifier: string; nonce: string },
  ): Promise<ProvenIdentity> {
    const client: oauth.Client = { client_id: p.client_id, id_token_signed_response_alg: ID_TOKEN_ALGS as unknown as string };
    let params: URLSearchParams;
    try {
      params = oauth.validateAuthResponse(as, client, callback, f.state);
    } catch (e) {
      throw new FlowError("oauth_provider_error", providerFailure(e, "bad_document"));
    }
    const tokenUrl = as.token_endpoint!;
    let response: Response;
    try {
      response = await oauth.authorizationCodeGrantRequest(as, client, oauth.ClientSecretPost(clientSecret), params, redirectUri, f.verifier, opts(tokenUrl));
    } catch (e) {
      throw new FlowError("oauth_provider_error", providerFailure(e, "bad_document"));
    }
    if (p.kind === "github") return github(as, client, response);
    let result: oauth.TokenEndpointResponse;
    try {
      result = await oauth.processAuthorizationCodeResponse(as, client, response, { expectedNonce: f.nonce, requireIdToken: true });
    } catch (e) {
      // The provider refused the code (an error body) or answered something unusable.
      const refused = e instanceof oauth.ResponseBodyError || (e instanceof oauth.OperationProcessingError && e.code === oauth.RESPONSE_IS_NOT_CONFORM);
      throw new FlowError(refused ? "oauth_provider_error" : "oauth_token_invalid", providerFailure(e, "bad_token"));
    }
    try {
      // The ID token's signature, by a key from the provider's JWKS (never an HMAC).
      await oauth.validateApplicationLevelSignature(as, response, opts(as.jwks_uri ?? as.issuer));
    } catch (e) {
      const failure = providerFailure(e, "bad_token");
      // Not reaching the JWKS is the provider's failure; a signature that does not verify is the token's.
      throw new FlowError(failure === "bad_token" ? "oauth_token_invalid" : "oauth_provider_error", failure);
    }
    const claims = oauth.getValidatedIdTokenClaims(result)!;
    let email = typeof claims.email === "string" ? claims.email : null;
    let verified = verifiedEmail(p.kind, claims);
    if (email === null && as.userinfo_endpoint) {
      // Some providers put the address only behind the userinfo endpoint; its subject must match.
      try {
        const info = await oauth.processUserInfoResponse(as, client, claims.sub, await oauth.userInfoRequest(as, client, result.access_token, opts(as.userinfo_endpoint)));
        email = typeof info.email === "string" ? info.email : null;
        verified = verifiedEmail(p.kind, info as Record<string, unknown>);
      } catch (e) {
        throw new FlowError("oauth_provider_error", providerFailure(e, "bad_document"));
      }
    }
    return { issuer: String(claims.iss), subject: claims.sub, email: email?.trim().toLowerCase() ?? null, emailVerified: email !== null && verified };
  }

  /** GitHub has no ID token: the user API names the account, the emails API its primary verified address. */
  async function github(as: oauth.AuthorizationServer, client: oauth.Client, response: Response): Promise<ProvenIdentity> {
    let token: string;
    try {
      token = (await oauth.processAuthorizationCodeResponse(as, client, response)).access_token;
    } catch (e) {
      throw new FlowError("oauth_provider_error", providerFailure(e, "bad_token"));
    }
    const api = githubBase ?? "https://api.github.com";
    const get = async (path: string) => {
      const r = await guarded(`${api}${path}`, {
        headers: { authorization: `Bearer ${token}`, accept: "application/vnd.github+json", "user-agent": "workspace-suite" },
      });
      if (!r.ok) throw new FlowError("oauth_provider_error", "bad_status");
      return r.json() as Promise<unknown>;
    };
    try {
      const user = (await get("/user")) as { id?: unknown };
      const emails = (await get("/user/emails")) as Array<{ email?: unknown; primary?: unknown; verified?: unknown }>;
      if (typeof user.id !== "number" && typeof user.id !== "string") throw new FlowError("oauth_provider_error", "bad_document");
      const primary = Array.isArray(emails) ? emails.find((e) => e.primary === true && typeof e.email === "string") : undefined;
      const email = typeof primary?.email === "string" ? primary.email.trim().toLowerCase() : null;
      return { issuer: GITHUB_ISSUER, subject: String(user.id), email, emailVerified: email !== null && primary?.verified === true };
    } catch (e) {
      if (e instanceof FlowError) throw e;
      throw new FlowError("oauth_provider_error", providerFailure(e, "bad_document"));
    }
  }

  return { server, authorizationUrl, complete, issuerRefused, generate: oauth };
}

/**
 * Whether the provider vouches for the address. Entra ID's `email` is not verified by default: it
 * counts only with the `xms_edov` optional claim (email domain owner verified) true.
 */
export function verifiedEmail(kind: ProviderKind, claims: Record<string, unknown>): boolean {
  if (kind === "microsoft") return claims.xms_edov === true || claims.xms_edov === "1" || claims.xms_edov === 1;
  return claims.email_verified === true || claims.email_verified === "true";
}

export type Protocol = ReturnType<typeof createProtocol>;
