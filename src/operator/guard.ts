import { Elysia } from "elysia";
import type { Context } from "../context";
import { credentialOf } from "../http/auth-guard";
import { checkCsrf } from "../http/csrf";
import { requestPath } from "../http/request-path";
import { requestedSubdomain } from "../http/tenancy";
import type { OperatorPrincipal } from "./service";
import { operatorErrors } from "./model";

/** The operator's own cookie: never an organization's session, and the organizations' never this. */
export const OPERATOR_COOKIE = "svc_operator";
/** Sent to the console's API only, and host-only (no Domain): an organization's subdomain never receives it. */
export const OPERATOR_COOKIE_PATH = "/api/v1/operator";

/**
 * The console lives on the base domain only: a request naming an organization (its Host, or
 * X-Tenant) is 404, as if the console did not exist there, before anything else is looked at.
 */
export const baseDomainOnly = (ctx: Context) =>
  new Elysia({ name: "operator-base-domain", seed: ctx.id }).derive({ as: "scoped" }, ({ request }) => {
    if (requestedSubdomain(request.headers, ctx.config.baseDomain) !== null) throw operatorErrors.notOnOrganizationHost();
    return {};
  });

/**
 * Resolves `operator` for every route after it: a bearer header or the svc_operator cookie (with
 * CSRF checked for cookies), a live operator session. An organization's token or cookie is no
 * operator's: its token is not an operator token, and svc_session is never read here.
 */
export const operatorGuard = (ctx: Context) =>
  new Elysia({ name: "operator-guard", seed: ctx.id }).derive({ as: "scoped" }, async ({ request }): Promise<{ operator: OperatorPrincipal }> => {
    const headers = request.headers;
    const { token, viaCookie } = credentialOf(headers, OPERATOR_COOKIE);
    const operator = await ctx.operators.authenticate(token);
    if (viaCookie) checkCsrf(request.method, headers, ctx.config.baseDomain, requestPath(request.url));
    return { operator };
  });
