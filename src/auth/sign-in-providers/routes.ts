import { type Cookie, Elysia, t } from "elysia";
import type { Principal } from "../service";
import type { Context } from "../../context";
import { authGuard } from "../../http/auth-guard";
import { requireAdmin } from "../../kernel/principal";
import { requestInfo } from "../../http/client";
import { setSessionCookies } from "../../http/cookies";
import { AppError } from "../../kernel/errors";
import { doc } from "../../http/openapi";
import { QueryReader, type RawQuery, rawQuery } from "../../kernel/paging";
import { listParameters, pageSchema } from "../../http/page-schema";
import { requestedSubdomain } from "../../http/tenancy";
import { CreateProviderBody, IdentityRead, LinkBody, LinkStarted, OAUTH_ERRORS, ProviderRead, PublicProviderList, UpdateProviderBody } from "./model";
import { FLOW_TTL_SECONDS } from "./flow-service";

/** The cookie binding a flow to the browser that started it: host-only, sent only to the callback. */
export const FLOW_COOKIE = "svc_oauth";
const FLOW_PATH = "/api/v1/auth/oauth";

type Jar = Record<string, Cookie<unknown>>;

const PROVIDER: readonly [string, typeof ProviderRead] = ["ProviderRead", ProviderRead];
const CODES = Object.keys(OAUTH_ERRORS).map((c) => `\`${c}\``).join(", ");
const Id = t.Object({ id: t.String({ minLength: 1, maxLength: 64 }) });
const STEP_UP =
  "Needs a recent sign-in: this session's last first-factor proof within `SUITE_REAUTH_WINDOW` seconds (default 600), else 403 `reauthentication_required` (renew it with `POST /api/v1/auth/reauthenticate`).";
const ProviderId = t.Object({ provider_id: t.String({ minLength: 1, maxLength: 64 }) });

/**
 * Sign-in with an identity provider, under /api/v1/auth: the organization's providers (admins),
 * the authorization-code flow (start, callback), and the caller's linked identities.
 */
export const oidcRoutes = (ctx: Context) => {
  const info = (request: Request, server: Parameters<typeof requestInfo>[1]) => requestInfo(request, server, ctx.config.trustProxy);
  // The organization a request's Host (or X-Tenant) names, or, on a bare IP address, `?tenant=`.
  async function organizationOf(headers: Record<string, string | undefined>, query: RawQuery): Promise<{ id: string; subdomain: string } | null> {
    let sub: string | null;
    try {
      sub = requestedSubdomain(headers, ctx.config.baseDomain);
    } catch {
      return null;
    }
    const fromQuery = query.tenant;
    sub ??= typeof fromQuery === "string" ? fromQuery.toLowerCase() : null;
    if (!sub) return null;
    const tenant = await ctx.repos.tenants.bySubdomain(sub);
    return tenant ? { id: tenant.id, subdomain: tenant.subdomain } : null;
  }
  const setFlowCookie = (jar: Jar, value: string) =>
    jar[FLOW_COOKIE]!.set({ value, httpOnly: true, secure: ctx.config.cookieSecure, sameSite: "lax", path: FLOW_PATH, maxAge: FLOW_TTL_SECONDS });
  const clearFlowCookie = (jar: Jar) =>
    jar[FLOW_COOKIE]!.set({ value: "", httpOnly: true, secure: ctx.config.cookieSecure, sameSite: "lax", path: FLOW_PATH, maxAge: 0, expires: new Date(0) });
  const redirect = (set: { status?: number | string; headers: Record<string, string | number> }, location: string) => {
    set.status = 302;
    set.headers.location = location;
    set.headers["cache-control"] = "no-store";
    return "";
  };
  const admins = ({ auth }: { auth: Principal }) => requireAdmin(auth);

  return new Elysia({ name: "oidc-routes", prefix: "/api/v1/auth", seed: ctx.id })
    .get(
      "/providers/public",
      async ({ headers, request }) => {
        const org = await organizationOf(headers, rawQuery(request.url));
        if (!org) throw new AppError(400, "tenant_required", "Name the organization: call its own address (its subdomain) or send X-Tenant.");
        return ctx.oidc.providers.listPublic(org.id);
      },
      doc({
        summary: "The organization's enabled identity providers, for its sign-in page",
        description: "No sign-in needed: the organization is the one the Host (or X-Tenant) names. Names, kinds and ids only.",
        tags: ["auth"],
        ok: { 200: ["PublicProviderList", PublicProviderList] },
        errors: [400],
        codes: { 400: ["tenant_required"] },
      }),
    )
    .get(
      "/oauth/:provider_id/start",
      async ({ params, headers, request, server, cookie, set }) => {
        const org = await organizationOf(headers, rawQuery(request.url));
        const started = await ctx.oidc.flow.startSignIn(org?.id ?? null, org?.subdomain ?? null, params.provider_id, info(request, server));
        if (!started.ok) return redirect(set, `/sign-in?error=${started.code}`);
        setFlowCookie(cookie, started.browser);
        return redirect(set, started.url);
      },
      {
        params: ProviderId,
        ...doc({
          summary: "Start signing in with an identity provider: a redirect to it",
          description:
            "302 to the provider (authorization code with PKCE S256, state and nonce), setting the short-lived `svc_oauth` cookie (HttpOnly, SameSite=Lax, Path=/api/v1/auth/oauth) that binds the flow to this browser. " +
            "An unknown or disabled provider: 302 to `/sign-in?error=oauth_provider_unavailable`; an organization its operator disabled: 302 to `/sign-in?error=tenant_disabled`, never to the provider.",
          tags: ["auth"],
          ok: { 302: null },
        }),
      },
    )
    .get(
      "/oauth/callback",
      async ({ headers, request, server, cookie, set }) => {
        const raw = rawQuery(request.url);
        const org = await organizationOf(headers, raw);
        const query = new URLSearchParams(request.url.includes("?") ? request.url.slice(request.url.indexOf("?") + 1) : "");
        query.delete("tenant");
        const browser = cookie[FLOW_COOKIE]?.value as string | undefined;
        const outcome = await ctx.oidc.flow.callback(org?.id ?? null, org?.subdomain ?? null, query, browser || undefined, info(request, server));
        if (browser) clearFlowCookie(cookie);
        switch (outcome.kind) {
          case "session":
            setSessionCookies(cookie, ctx.config, outcome.tokens);
            return redirect(set, "/");
          case "challenge":
            // The fragment never reaches a server or a Referer: the web app reads it and calls /auth/2fa/verify.
            return redirect(set, `/sign-in?step=2fa#temp_token=${encodeURIComponent(outcome.tempToken)}`);
          case "linked":
            return redirect(set, `/settings?linked=${encodeURIComponent(outcome.providerId)}`);
          default:
            return redirect(set, outcome.link ? `/settings?error=${outcome.code}` : `/sign-in?error=${outcome.code}`);
        }
      },
      doc({
        summary: "Where identity providers send the browser back",
        description:
          "Always a 302 into the web app. Signed in: `/`, with the session cookies (`svc_session`, `svc_refresh`) set as by a password sign-in; the `svc_oauth` cookie is cleared. 2FA on: `/sign-in?step=2fa#temp_token=<temp token>` (then POST /api/v1/auth/2fa/verify). " +
          `Linked: \`/settings?linked=<provider_id>\`. Failed: \`/sign-in?error=<code>\` (or \`/settings?error=<code>\` for a link), the code one of ${CODES}.`,
        tags: ["auth"],
        ok: { 302: null },
      }),
    )
    .use(authGuard(ctx))
    .post(
      "/providers",
      async ({ auth, body, request, server, set }) => {
        set.status = 201;
        return ctx.oidc.providers.create(auth, body, info(request, server));
      },
      {
        body: CreateProviderBody,
        transform: admins,
        ...doc({
          summary: "Add an identity provider to the organization (admins)",
          description: `The answer never carries the client secret, which is kept sealed. \`redirect_uri\` is what to register at the provider. ${STEP_UP}`,
          tags: ["auth"],
          auth: true,
          ok: { 201: PROVIDER },
          errors: [404, 409],
          codes: { 409: ["provider_name_taken"] },
        }),
      },
    )
    .get(
      "/providers",
      async ({ auth, query }) => {
        const q = new QueryReader(query as RawQuery);
        const paging = q.paging();
        q.done();
        return ctx.oidc.providers.list(auth, paging);
      },
      {
        transform: admins,
        ...doc({
          summary: "The organization's identity providers, oldest first (admins)",
          tags: ["auth"],
          auth: true,
          ok: { 200: ["ProviderPage", pageSchema(ProviderRead)] },
          parameters: listParameters([]),
        }),
      },
    )
    .patch("/providers/:id", async ({ auth, params, body, request, server }) => ctx.oidc.providers.update(auth, params.id, body, info(request, server)), {
      params: Id,
      body: UpdateProviderBody,
      transform: admins,
      ...doc({
        summary: "Change an identity provider (admins); an absent client_secret keeps the current one",
        description: STEP_UP,
        tags: ["auth"],
        auth: true,
        ok: { 200: PROVIDER },
        errors: [404, 409],
        codes: { 409: ["provider_name_taken"] },
      }),
    })
    .delete(
      "/providers/:id",
      async ({ auth, params, request, server, set }) => {
        await ctx.oidc.providers.remove(auth, params.id, info(request, server));
        set.status = 204;
        return "";
      },
      {
        params: Id,
        transform: admins,
        ...doc({ summary: "Remove an identity provider and every identity linked through it (admins)", description: STEP_UP, tags: ["auth"], auth: true, ok: { 204: null }, errors: [404] }),
      },
    )
    .post(
      "/identities/link/:provider_id",
      async ({ auth, params, cookie }) => {
        const started = await ctx.oidc.flow.startLink(auth, params.provider_id);
        setFlowCookie(cookie, started.browser);
        return { authorization_url: started.url } satisfies LinkStarted;
      },
      {
        params: ProviderId,
        body: LinkBody,
        ...doc({
          summary: "Start linking an identity provider's account to the caller",
          description:
            "Sets the `svc_oauth` flow cookie and answers the provider's URL to open; the provider then returns to the callback, which ends on `/settings?linked=<provider_id>` or `/settings?error=<code>`. " + STEP_UP,
          tags: ["auth"],
          auth: true,
          ok: { 200: ["LinkStarted", LinkStarted] },
          errors: [404, 409],
          codes: { 409: ["oauth_provider_error", "oauth_account_unverified"] },
        }),
      },
    )
    .get(
      "/identities",
      async ({ auth, query }) => {
        const q = new QueryReader(query as RawQuery);
        const paging = q.paging();
        q.done();
        return ctx.oidc.flow.identities(auth, paging);
      },
      doc({
        summary: "The caller's linked identities, oldest first",
        tags: ["auth"],
        auth: true,
        ok: { 200: ["IdentityPage", pageSchema(IdentityRead)] },
        parameters: listParameters([]),
      }),
    )
    .delete(
      "/identities/:id",
      async ({ auth, params, request, server, set }) => {
        await ctx.oidc.flow.unlink(auth, params.id, info(request, server));
        set.status = 204;
        return "";
      },
      {
        params: Id,
        ...doc({
          summary: "Unlink one of the caller's identities",
          description: `409 \`last_sign_in_method\` when the account has no password of its own and no other identity with an enabled provider. ${STEP_UP}`,
          tags: ["auth"],
          auth: true,
          ok: { 204: null },
          errors: [404, 409],
          codes: { 409: ["last_sign_in_method"] },
        }),
      },
    );
};
