import { Elysia } from "elysia";
import type { Context } from "../context";
import { authGuard, requireAdmin } from "../http/auth-guard";
import { requestInfo } from "../http/client";
import { setSessionCookies } from "../http/cookies";
import { AppError } from "../http/errors";
import { lowerCaseFields } from "../http/validation";
import { doc } from "../http/openapi";
import { SignupBody, SignupResponse, TenantRead, UpdateTenantBody } from "./model";

const TENANT: readonly [string, typeof TenantRead] = ["TenantRead", TenantRead];

/** Signup: a new organization and its first admin, signed in (CONTRACT §8). Closed by SUITE_SIGNUP=closed. */
const signupRoutes = (ctx: Context) =>
  new Elysia({ name: "signup-routes", prefix: "/api/v1/auth", seed: ctx.id }).post(
    "/signup",
    async ({ body, request, server, cookie, set }) => {
      const req = requestInfo(request, server, ctx.config.trustProxy);
      const { tenant, user, tokens } = await ctx.tenants.createOrganization(body, req, "signup");
      setSessionCookies(cookie, ctx.config, tokens);
      set.status = 201;
      return { tenant, user, access_token: tokens.access_token, refresh_token: tokens.refresh_token, token_type: tokens.token_type } satisfies SignupResponse;
    },
    // Addresses and subdomains are compared in lower case: accept them typed in any case.
    // A closed server says so before looking at the body: nothing about its shape matters then.
    {
      body: SignupBody,
      transform: [
        () => {
          if (ctx.config.signup === "closed") {
            throw new AppError(403, "signup_closed", "Signup is closed on this server: ask its operator for a workspace (suite tenant create).");
          }
        },
        lowerCaseFields("email", "subdomain"),
      ],
      ...doc({
        summary: "Create an organization and its first admin, signed in",
        description: "On a server started with `SUITE_SIGNUP=closed` this answers 403 `signup_closed`.",
        tags: ["auth"],
        ok: { 201: ["SignupResponse", SignupResponse] },
        cookies: "set",
        errors: [403, 409, 429],
        codes: { 403: ["signup_closed"], 409: ["subdomain_taken"] },
      }),
    },
  );

/** The caller's organization: any member reads it, admins rename it and turn modules on and off. */
const organizationRoutes = (ctx: Context) =>
  new Elysia({ name: "organization-routes", prefix: "/api/v1/tenant", seed: ctx.id })
    .use(authGuard(ctx))
    .get("/", ({ auth }) => ctx.tenants.read(auth.tenantId), {
      ...doc({ summary: "The caller's organization: name, subdomain and modules", tags: ["organization"], auth: true, ok: { 200: TENANT } }),
    })
    .patch("/", async ({ auth, body, request, server }) => ctx.tenants.update(auth, body, requestInfo(request, server, ctx.config.trustProxy)), {
      body: UpdateTenantBody,
      // Admins only, checked before the body: a member learns 403, not the body's shape.
      transform: ({ auth }) => requireAdmin(auth),
      ...doc({
        summary: "Rename the organization and turn modules on and off (admins)",
        description:
          "`modules` is the full list of modules that are on. A module turned off answers 403 `module_disabled` on its routes at once " +
          "and keeps its data; turning it on again shows it all.",
        tags: ["organization"],
        auth: true,
        ok: { 200: TENANT },
      }),
    });

export const tenantsRoutes = (ctx: Context) =>
  new Elysia({ name: "tenants-routes", seed: ctx.id }).use(signupRoutes(ctx)).use(organizationRoutes(ctx));
