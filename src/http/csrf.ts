import { hostName } from "./tenancy";
import { errors } from "./errors";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);
const JSON_TYPE = /^application\/([\w.+-]+\+)?json\s*(;|$)/i;

const fromOurDomain = (url: string, baseDomain: string): boolean => {
  try {
    const host = hostName(new URL(url).host);
    return host === baseDomain || host.endsWith(`.${baseDomain}`);
  } catch {
    return false;
  }
};

/**
 * For cookie-authenticated requests that change state (CONTRACT §5): a JSON content type, no
 * `Sec-Fetch-Site: cross-site`, and an Origin (or Referer) on the base domain or a subdomain.
 * A JSON content type alone already forces a CORS preflight on any cross-site page.
 */
export function checkCsrf(method: string, headers: Record<string, string | undefined>, baseDomain: string): void {
  if (SAFE_METHODS.has(method)) return;
  if (!JSON_TYPE.test(headers["content-type"] ?? "")) throw errors.csrf();
  if ((headers["sec-fetch-site"] ?? "").toLowerCase() === "cross-site") throw errors.csrf();
  const origin = headers.origin ?? headers.referer;
  if (!origin || !fromOurDomain(origin, baseDomain)) throw errors.csrf();
}
