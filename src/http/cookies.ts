import type { Cookie } from "elysia";
import type { IssuedTokens } from "../kernel/principal";
import type { Config } from "../config";

export const SESSION_COOKIE = "svc_session";
export const REFRESH_COOKIE = "svc_refresh";
/** The refresh cookie goes only where it is used (docs/interface.md#cookies). */
export const REFRESH_PATH = "/api/v1/auth";

type Jar = Record<string, Cookie<unknown>>;

const attributes = (config: Config) => ({
  httpOnly: true,
  secure: config.cookieSecure,
  ...(config.cookieDomain ? { domain: config.cookieDomain } : {}),
});

/** Sets svc_session (access) and svc_refresh (refresh) with the attributes of docs/interface.md#cookies. */
export function setSessionCookies(jar: Jar, config: Config, t: IssuedTokens): void {
  jar[SESSION_COOKIE]!.set({ value: t.access_token, sameSite: "lax", path: "/", maxAge: t.accessMaxAge, ...attributes(config) });
  jar[REFRESH_COOKIE]!.set({ value: t.refresh_token, sameSite: "strict", path: REFRESH_PATH, maxAge: t.refreshMaxAge, ...attributes(config) });
}

/** Clears both, with the same Path and Domain that set them (or the browser keeps them). */
export function clearSessionCookies(jar: Jar, config: Config): void {
  const gone = { value: "", maxAge: 0, expires: new Date(0), ...attributes(config) };
  jar[SESSION_COOKIE]!.set({ ...gone, sameSite: "lax", path: "/" });
  jar[REFRESH_COOKIE]!.set({ ...gone, sameSite: "strict", path: REFRESH_PATH });
}
