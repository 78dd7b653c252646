import { CSV_IMPORT_PATH } from "./body";
import { errors } from "../kernel/errors";
import { type HeaderSource, headerOf, hostName, requestedSubdomain } from "./tenancy";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);
const JSON_TYPE = /^application\/([\w.+-]+\+)?json\s*(;|$)/i;
/**
 * CSV imports take the file as a text/csv body. That type is not CORS-safelisted (the Fetch
 * standard safelists only application/x-www-form-urlencoded, multipart/form-data and text/plain
 * for Content-Type), so a cross-site page cannot send it without a preflight we never grant, as
 * with JSON; a form cannot send it at all. The Origin checks below still apply.
 */
const CSV_TYPE = /^text\/csv\s*(;|$)/i;
/** Our session, refresh or operator cookie in a Cookie header. */
const OUR_COOKIE = /(?:^|;)\s*svc_(?:session|refresh|operator)=/;

/** The host name of an Origin or Referer, or null when it is not a URL (or is `null`). */
const originHost = (url: string): string | null => {
  try {
    const host = new URL(url).host;
    return host ? hostName(host) : null;
  } catch {
    return null;
  }
};

/**
 * For cookie-authenticated requests that change state (docs/interface.md#csrf): a JSON content type, no
 * `Sec-Fetch-Site: cross-site`, and an Origin (or Referer) that is the base domain itself or the
 * request's own organization host: the one its Host or X-Tenant names. Organizations are
 * neighbours on one base domain, so `evil.<base>` is another site for this purpose even though
 * browsers call it same-site (and send it our cookie). A JSON content type alone already forces a
 * CORS preflight on any cross-site page.
 */
export function checkCsrf(method: string, headers: HeaderSource, baseDomain: string, path = ""): void {
  if (SAFE_METHODS.has(method)) return;
  const type = headerOf(headers, "content-type") ?? "";
  if (!JSON_TYPE.test(type) && !(CSV_TYPE.test(type) && CSV_IMPORT_PATH.test(path))) throw errors.csrf();
  if ((headerOf(headers, "sec-fetch-site") ?? "").toLowerCase() === "cross-site") throw errors.csrf();
  const origin = headerOf(headers, "origin") ?? headerOf(headers, "referer");
  const from = origin ? originHost(origin) : null;
  if (from === null) throw errors.csrf();
  if (from === baseDomain) return;
  const own = requestedSubdomain(headers, baseDomain);
  if (own === null || from !== `${own}.${baseDomain}`) throw errors.csrf();
}

/**
 * A write whose body is not JSON, sent with our cookie and no bearer header: what a cross-site
 * HTML form can send. It is refused 403 `csrf_failed` before any route sees it (docs/interface.md#csrf),
 * where a bearer client sending the same gets 415.
 */
export function isCookieWrite(request: Request): boolean {
  if (SAFE_METHODS.has(request.method) || request.headers.has("authorization")) return false;
  return OUR_COOKIE.test(request.headers.get("cookie") ?? "");
}
