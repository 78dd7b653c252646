import { Elysia } from "elysia";
import type { Context } from "../context";
import { requestInfo } from "../http/client";
import { setSessionCookies } from "../http/cookies";
import { lowerCaseFields } from "../http/validation";
import { doc } from "../http/openapi";
import { SignupBody, SignupResponse } from "./model";

/** Signup: a new organization and its first admin, signed in (CONTRACT §8). */
export const tenantsRoutes = (ctx: Context) =>
  new Elysia({ name: "tenants-routes", prefix: "/api/v1/auth", seed: ctx.id }).post(
    "/signup",
    async ({ body, request, server, cookie, set }) => {
      const req = requestInfo(request, server, ctx.config.trustProxy);
      const { tenant, user, tokens } = await ctx.tenants.createOrganization(body, req, "signup");
      setSessionCookies(cookie, ctx.config, tokens);
      set.status = 201;
      return { tenant, user, access_token: tokens.access_token, refresh_token: tokens.refresh_token, token_type: tokens.token_type };
    },
    // Addresses and subdomains are compared in lower case: accept them typed in any case.
    {
      body: SignupBody,
      transform: lowerCaseFields("email", "subdomain"),
      ...doc({
        summary: "Create an organization and its first admin, signed in",
        tags: ["auth"],
        ok: { 201: ["SignupResponse", SignupResponse] },
        cookies: "set",
        errors: [409, 429],
        codes: { 409: ["subdomain_taken"] },
      }),
    },
  );
