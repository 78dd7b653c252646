import * as oauth from "oauth4webapi";
import { OutboundError } from "../../outbound/guard";
import type { ProviderKind } from "./model";

/**
 * Why talking to an identity provider failed: the audit row's `reason`, from this fixed set only.
 * Never an error's own text: a reason quoting the connection error ("connection refused",
 * "certificate has expired") made the audit log a port and TLS scanner of any host an admin named.
 */
export const PROVIDER_FAILURES = [
  // The outbound guard's (src/outbound/guard.ts), but bad_url, which is bad_document here.
  "refused_address",
  "unreachable",
  "timeout",
  "tls",
  "redirect",
  "too_large",
  // An endpoint of the provider's document on another host than the issuer's, and not allowed.
  "foreign_endpoint",
  // An endpoint over plain http.
  "insecure_endpoint",
  // The provider answered an unexpected HTTP status.
  "bad_status",
  // Its metadata, JWKS, userinfo or user API answer is unusable (not JSON, wrong issuer, missing fields).
  "bad_document",
  // It answered with an OAuth error (the person declined, a refused code, a wrong client secret).
  "provider_refused",
  // The ID token or token response failed validation.
  "bad_token",
] as const;
export type ProviderFailure = (typeof PROVIDER_FAILURES)[number];

/** A failure as one of PROVIDER_FAILURES; `fallback` names what was being read when the error says nothing more. */
export function providerFailure(e: unknown, fallback: "bad_document" | "bad_token"): ProviderFailure {
  if (e instanceof OutboundError) return e.reason === "bad_url" ? "bad_document" : e.reason;
  if (e instanceof oauth.ResponseBodyError || e instanceof oauth.AuthorizationResponseError) return "provider_refused";
  if (e instanceof oauth.OperationProcessingError) {
    if (e.code === oauth.HTTP_REQUEST_FORBIDDEN || e.code === oauth.REQUEST_PROTOCOL_FORBIDDEN) return "insecure_endpoint";
    if (e.code === oauth.RESPONSE_IS_NOT_CONFORM) return "bad_status";
  }
  return fallback;
}

/**
 * Hosts the built-in providers' documents put their endpoints on besides the issuer's: Google's
 * token, JWKS and userinfo live under googleapis.com, Entra ID's userinfo on Microsoft Graph.
 */
const BUILT_IN_ENDPOINT_HOSTS: Record<ProviderKind, readonly string[]> = {
  google: ["oauth2.googleapis.com", "www.googleapis.com", "openidconnect.googleapis.com"],
  microsoft: ["graph.microsoft.com"],
  github: [],
  oidc: [],
};

/** The endpoints the server itself calls (the authorization endpoint is the browser's). */
const SERVER_ENDPOINTS = ["token_endpoint", "jwks_uri", "userinfo_endpoint"] as const;

/**
 * Whether the provider's server-side endpoints are all on the issuer's host, a built-in one of its
 * kind, or one the operator listed (SUITE_OIDC_ENDPOINT_HOSTS): a document may not send the
 * server's requests anywhere it likes. The address guard still checks each host when it is called.
 */
export function foreignEndpoint(kind: ProviderKind, as: oauth.AuthorizationServer, issuer: string, listed: readonly string[]): boolean {
  const allowed = new Set([new URL(issuer).hostname.toLowerCase(), ...BUILT_IN_ENDPOINT_HOSTS[kind], ...listed]);
  for (const key of SERVER_ENDPOINTS) {
    const value = as[key];
    if (value === undefined) continue;
    let host: string;
    try {
      host = new URL(String(value)).hostname.toLowerCase().replace(/\.$/, "");
    } catch {
      return true;
    }
    if (!allowed.has(host)) return true;
  }
  return false;
}
