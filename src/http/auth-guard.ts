import { Elysia } from "elysia";
import type { Principal } from "../kernel/principal";
import type { Context } from "../context";
import { SESSION_COOKIE } from "./cookies";
import { checkCsrf } from "./csrf";
import { errors } from "../kernel/errors";
import { checkPolicySetup } from "./policy-setup";
import { requestPath } from "./request-path";
import { requestedSubdomain } from "./tenancy";

type ModuleName = Parameters<Context["tenants"]["requireModule"]>[1];

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * The value of cookie `name` in a Cookie header, as Elysia's parser reads it (the first one of
 * that name wins, surrounding quotes and percent-escapes undone), or undefined.
 */
export function cookieValue(header: string | null, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq === -1 || part.slice(0, eq).trim() !== name) continue;
    let value = part.slice(eq + 1).trim();
    if (value.length > 1 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    try {
      return decodeURIComponent(value);
    } catch {
      return value;
    }
  }
  return undefined;
}

/**
 * Resolves `auth` (the Principal) for every route registered after it: a bearer header or the
 * svc_session cookie, a live session, the tenant the request names, and CSRF for cookies; then,
 * when `module` is given, 403 module_disabled unless the organization has it; then 403
 * policy_setup_required for a member who must first set up a passkey or 2FA.
 * It runs before the body is validated (derive, not resolve), as FastAPI's dependencies do: a
 * caller without credentials learns 401, not the shape of the body, and a cross-site cookie
 * request is refused whatever it sends.
 *
 * It reads the few headers it needs from the request itself: naming Elysia's `headers` or
 * `cookie` here would make every route behind it copy all headers and build a cookie jar first
 * (issue 15: a deal-list request's time is mostly such work around the product's).
 */
export const authGuard = (ctx: Context, opts: { module?: ModuleName } = {}) =>
  new Elysia({ name: "auth-guard", seed: opts.module ? `${ctx.id}:${opts.module}` : ctx.id }).derive(
    { as: "scoped" },
    async ({ request }): Promise<{ auth: Principal }> => {
      const headers = request.headers;
      const { token, viaCookie } = credentialOf(headers, SESSION_COOKIE);

      // The module's presence is read with the session (one statement), and checked below in its turn.
      const { moduleOn, ...principal } = await ctx.auth.authenticate(token, opts.module);
      const named = requestedSubdomain(headers, ctx.config.baseDomain);
      if (named !== null && named !== principal.subdomain) throw errors.tenantMismatch();
      if (viaCookie) checkCsrf(request.method, headers, ctx.config.baseDomain, requestPath(request.url));
      // Before the body is validated, as FastAPI's dependencies run: a tenant without the module learns 403.
      if (opts.module && !moduleOn) throw errors.moduleDisabled(opts.module);
      // A member the organization's sign-in policy holds back may only set up what it asks for.
      if (principal.policySetup !== undefined) checkPolicySetup(principal, request.method, requestPath(request.url));
      return { auth: principal };
    },
  );

/**
 * The credential a request presents: its bearer token (a malformed Authorization header is a 401,
 * never a fall-back to the cookie), else the named cookie; 401 with neither. The organizations'
 * guard and the operators' share it, each with its own cookie.
 */
export function credentialOf(headers: Headers, cookie: string): { token: string; viaCookie: boolean } {
  const header = headers.get("authorization");
  if (header !== null) {
    const m = BEARER.exec(header);
    if (!m) throw errors.notAuthenticated();
    return { token: m[1]!, viaCookie: false };
  }
  const token = cookieValue(headers.get("cookie"), cookie);
  if (!token) throw errors.notAuthenticated();
  return { token, viaCookie: true };
}

/** The token a request presents: its bearer token, else its session cookie (what the guard authenticated). */
export function presentedToken(headers: Headers): string | undefined {
  const header = headers.get("authorization");
  if (header !== null) return BEARER.exec(header)?.[1];
  return cookieValue(headers.get("cookie"), SESSION_COOKIE);
}
