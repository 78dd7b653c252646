import { Elysia } from "elysia";
import type { Principal } from "../auth/service";
import type { Context } from "../context";
import { SESSION_COOKIE } from "./cookies";
import { checkCsrf } from "./csrf";
import { errors } from "./errors";
import { requestPath } from "./request-path";
import { requestedSubdomain } from "./tenancy";

/**
 * Resolves `auth` (the Principal) for every route registered after it: a bearer header or the
 * svc_session cookie, a live session, the tenant the request names, and CSRF for cookies.
 * It runs before the body is validated (derive, not resolve), as FastAPI's dependencies do: a
 * caller without credentials learns 401, not the shape of the body, and a cross-site cookie
 * request is refused whatever it sends.
 */
export const authGuard = (ctx: Context) =>
  new Elysia({ name: "auth-guard", seed: ctx.id }).derive({ as: "scoped" }, async ({ request, headers, cookie }): Promise<{ auth: Principal }> => {
    const header = headers.authorization;
    let token: string | undefined;
    if (header !== undefined) {
      const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
      if (!m) throw errors.notAuthenticated();
      token = m[1];
    }
    const viaCookie = token === undefined;
    token ??= cookie[SESSION_COOKIE]?.value as string | undefined;
    if (!token) throw errors.notAuthenticated();

    const principal = await ctx.auth.authenticate(token);
    const named = requestedSubdomain(headers, ctx.config.baseDomain);
    if (named !== null && named !== principal.subdomain) throw errors.tenantMismatch();
    if (viaCookie) checkCsrf(request.method, headers, ctx.config.baseDomain, requestPath(request.url));
    return { auth: principal };
  });

/** Admin-only routes call this first. */
export function requireAdmin(p: Principal): void {
  if (p.role !== "admin") throw errors.forbidden();
}
