import { Elysia } from "elysia";
import type { Context } from "../../context";
import { requestInfo } from "../../http/client";
import { setSessionCookies } from "../../http/cookies";
import { doc } from "../../http/openapi";
import { AppError } from "../../kernel/errors";
import { lowerCaseFields } from "../../kernel/validation";
import { SignupBody, SignupResponse } from "../../organization/model";

/** Signup: a new organization and its first admin, signed in (docs/interface.md#signup-and-invitations). Closed by SUITE_SIGNUP=closed. */
export const signupRoutes = (ctx: Context) =>
  new Elysia({ name: "signup-routes", prefix: "/api/v1/auth", seed: ctx.id }).post(
    "/signup",
    async ({ body, request, server, cookie, set }) => {
      const req = requestInfo(request, server, ctx.config.trustProxy);
      const { tenant, user, tokens } = await ctx.tenants.createOrganization(body, req, "signup");
      // The browser that made the account is a known device of it: no new-device mail at its next sign-in.
      setSessionCookies(cookie, ctx.config, { ...tokens, device: await ctx.newDevice.remember(tenant.id, user.id, req) });
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
