import { Elysia } from "elysia";
import type { Context } from "../../context";
import { requestInfo } from "../../http/client";
import { errors } from "../../kernel/errors";
import { namedTenantId } from "../../http/tenancy";
import { doc } from "../../http/openapi";
import { lowerCaseFields } from "../../kernel/validation";
import { LoginResponse } from "../model";
import { answerSignIn } from "../sign-in";
import { MAGIC_LINK_ACCEPTED } from "./service";
import { MagicLinkAccepted, MagicLinkBody, MagicVerifyBody } from "./model";

/** Passwordless sign-in: ask for a link by mail, then trade its token for a session. */
export const magicLinkRoutes = (ctx: Context) => {
  const tenantIdOf = (headers: Record<string, string | undefined>) => namedTenantId(headers, ctx.config.baseDomain, ctx.repos.tenants.bySubdomain);

  return new Elysia({ name: "magic-link-routes", prefix: "/api/v1/auth", seed: ctx.id })
    .post(
      "/magic-link",
      async ({ body, headers, request, server, set }) => {
        const req = requestInfo(request, server, ctx.config.trustProxy);
        await ctx.magicLinks.request(body.email, await tenantIdOf(headers), req);
        set.status = 202;
        return { detail: MAGIC_LINK_ACCEPTED } satisfies MagicLinkAccepted;
      },
      {
        body: MagicLinkBody,
        transform: lowerCaseFields("email"),
        ...doc({
          summary: "Mail a one-time sign-in link",
          description:
            "Always 202 with the same body, whether or not the address has an account. Without a tenant in Host or `X-Tenant`, one link per workspace the address belongs to. At most 3 per address per 15 minutes.",
          tags: ["auth"],
          ok: { 202: ["MagicLinkAccepted", MagicLinkAccepted] },
          errors: [403, 404, 429],
        }),
      },
    )
    .post(
      "/magic-verify",
      async ({ body, headers, request, server, cookie }) => {
        const req = requestInfo(request, server, ctx.config.trustProxy);
        const user = await ctx.magicLinks.verify(body.token, await tenantIdOf(headers), req);
        // Through the one sign-in path: a user with 2FA on gets the challenge, not a session.
        return answerSignIn(cookie, ctx.config, await ctx.signIn(user, "magic_link", req));
      },
      {
        body: MagicVerifyBody,
        ...doc({
          summary: "Sign in with the token of a mailed link",
          description:
            "Single use, 10 minutes. Answers a token pair and sets the session cookies or, when 2FA is on, `requires_2fa` and a `temp_token`. A used, expired or unknown token: 401 `invalid_token`; another workspace's token: 403 `tenant_mismatch`.",
          tags: ["auth"],
          ok: { 200: ["LoginResponse", LoginResponse] },
          cookies: "set",
          errors: [401, 403, 404, 429],
        }),
      },
    );
};
