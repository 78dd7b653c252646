import { errors } from "./errors";

// What every layer knows of a caller, declared in the kernel so that neither src/http nor a
// service imports a feature for it (auth/service.ts re-exports these under the names it always had).

/** Where a request came from, for sessions, limits and the audit log. */
export interface RequestInfo {
  ip: string | null;
  userAgent: string | null;
  /** What a sign-in needs to tell a known device from a new one (auth/new-device); absent outside HTTP. */
  device?: DeviceClue;
}

/** The device cookies a request carries (organization id → the cookie's secret), and whether a browser sent it. */
export interface DeviceClue {
  cookies: Record<string, string>;
  /** Browsers send Sec-Fetch-Mode on every request (fetch and navigation); API clients do not. */
  browser: boolean;
}

/** The long-lived device cookie of one organization, to set with a sign-in's answer. */
export interface DeviceCookie {
  tenantId: string;
  secret: string;
}

/** Who is calling: what the auth guard hands to every protected route. */
export interface Principal {
  userId: string;
  tenantId: string;
  /** The session's public id (never the secret sid its tokens carry). */
  sessionId: string;
  role: "admin" | "member";
  email: string;
  subdomain: string;
  /** When this session last proved the first factor (ms): step-up checks read it. */
  provenAt: number;
  /**
   * What the organization's sign-in policy still asks of this user (a passkey, or a passkey or
   * 2FA); absent when they comply. Until then only the operations that comply answer (http/policy-setup.ts).
   */
  policySetup?: PolicySetup;
}

/** What a sign-in policy asks of a user who does not comply yet. */
export type PolicySetup = "passkey" | "passkey_or_2fa";

/** A new session's tokens, as the sign-in answers and the cookies carry them. */
export interface IssuedTokens {
  access_token: string;
  refresh_token: string;
  token_type: "bearer";
  /** Seconds, for the cookies' Max-Age. */
  accessMaxAge: number;
  refreshMaxAge: number;
  /** A device cookie to set with these tokens (a sign-in from a browser without one). */
  device?: DeviceCookie;
}

/** Admin-only routes and services call this first. */
export function requireAdmin(p: Principal): void {
  if (p.role !== "admin") throw errors.forbidden();
}
