import { isIP } from "node:net";
import { DEVICE_COOKIE_PAIR } from "./cookies";
import type { DeviceClue, RequestInfo } from "../kernel/principal";

type Server = { requestIP(request: Request): { address: string } | null } | null | undefined;

const MAX_USER_AGENT = 512;

/**
 * Who sent the request. Behind a reverse proxy (SUITE_TRUST_PROXY), the address the proxy saw:
 * the last X-Forwarded-For entry, the one the proxy itself appended. An entry that is not an IP
 * address (a port, brackets, a name, junk) is not used: the socket's address is, so what lands
 * in audit rows and rate-limit keys is always an address.
 */
export function requestInfo(request: Request, server: Server, trustProxy: boolean): RequestInfo {
  let ip: string | null = null;
  if (trustProxy) {
    const forwarded = request.headers.get("x-forwarded-for");
    const last = forwarded?.split(",").at(-1)!.trim();
    if (last && isIP(last) !== 0) ip = last;
  }
  ip ??= server?.requestIP(request)?.address ?? null;
  const ua = request.headers.get("user-agent");
  return { ip, userAgent: ua ? ua.slice(0, MAX_USER_AGENT) : null, device: deviceClue(request.headers) };
}

/** At most this many organizations' device cookies are read from one request (a cookie header is the client's to fill). */
const MAX_DEVICE_COOKIES = 50;

/** The `svc_device_<organization id>` cookies of a request (http/cookies.ts), and whether a browser sent it. */
export function deviceClue(headers: Headers): DeviceClue {
  const cookies: Record<string, string> = {};
  let n = 0;
  for (const m of (headers.get("cookie") ?? "").matchAll(DEVICE_COOKIE_PAIR)) {
    if (++n > MAX_DEVICE_COOKIES) break;
    cookies[m[1]!] = m[2]!;
  }
  return { cookies, browser: headers.has("sec-fetch-mode") };
}
