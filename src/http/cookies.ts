import type { Cookie } from "elysia";
import type { IssuedTokens } from "../kernel/principal";
import type { Config } from "../config";

export const SESSION_COOKIE = "svc_session";
export const REFRESH_COOKIE = "svc_refresh";
/** The refresh cookie goes only where it is used (docs/interface.md#cookies). */
export const REFRESH_PATH = "/api/v1/auth";

type Jar = Record<string, Cookie<unknown>>;

/**
 * The device cookie of one organization: `svc_device_<organization id>`, a random secret the
 * server knows by its hash (auth/new-device). Named per organization, so that cookies shared across
 * subdomains (SUITE_COOKIE_DOMAIN) still say which organization knows the browser. Sent only to the
 * sign-in routes; Lax, so that an identity provider's redirect back to the callback carries it.
 */
export const DEVICE_COOKIE_PREFIX = "svc_device_";
export const DEVICE_COOKIE_PAIR = /(?:^|;\s*)svc_device_([A-Za-z0-9_-]{1,64})=([A-Za-z0-9_-]{43})(?=;|$)/g;
/** Browsers keep a cookie at most 400 days; each sign-in from the device sets it again. */
const DEVICE_MAX_AGE = 400 * 86400;

const attributes = (config: Config) => ({
  httpOnly: true,
  secure: config.cookieSecure,
  ...(config.cookieDomain ? { domain: config.cookieDomain } : {}),
});

/** Sets svc_session (access) and svc_refresh (refresh) with the attributes of docs/interface.md#cookies. */
export function setSessionCookies(jar: Jar, config: Config, t: IssuedTokens): void {
  jar[SESSION_COOKIE]!.set({ value: t.access_token, sameSite: "lax", path: "/", maxAge: t.accessMaxAge, ...attributes(config) });
  jar[REFRESH_COOKIE]!.set({ value: t.refresh_token, sameSite: "strict", path: REFRESH_PATH, maxAge: t.refreshMaxAge, ...attributes(config) });
  if (t.device) jar[`${DEVICE_COOKIE_PREFIX}${t.device.tenantId}`]!.set({ value: t.device.secret, sameSite: "lax", path: REFRESH_PATH, maxAge: DEVICE_MAX_AGE, ...attributes(config) });
}

/** Clears both, with the same Path and Domain that set them (or the browser keeps them). */
export function clearSessionCookies(jar: Jar, config: Config): void {
  const gone = { value: "", maxAge: 0, expires: new Date(0), ...attributes(config) };
  jar[SESSION_COOKIE]!.set({ ...gone, sameSite: "lax", path: "/" });
  jar[REFRESH_COOKIE]!.set({ ...gone, sameSite: "strict", path: REFRESH_PATH });
}
