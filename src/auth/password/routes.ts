import { Elysia } from "elysia";
import type { Context } from "../../context";
import { authGuard } from "../../http/auth-guard";
import { requestInfo } from "../../http/client";
import { doc } from "../../http/openapi";
import { namedTenantId } from "../../http/tenancy";
import { lowerCaseFields } from "../../kernel/validation";
import { ChangePasswordBody, FORGOT_ACCEPTED, ForgotAccepted, ForgotPasswordBody, PasswordChanged, PasswordReset, ResetPasswordBody } from "./model";

/** Forgotten password, reset by mailed link, and change of password: /api/v1/auth/password. */
export const passwordRoutes = (ctx: Context) => {
  const tenantIdOf = (headers: Record<string, string | undefined>) => namedTenantId(headers, ctx.config.baseDomain, ctx.repos.tenants.bySubdomain);
  const info = (request: Request, server: Parameters<typeof requestInfo>[1]) => requestInfo(request, server, ctx.config.trustProxy);

  return new Elysia({ name: "password-routes", prefix: "/api/v1/auth/password", seed: ctx.id })
    .post(
      "/forgot",
      async ({ body, headers, request, server, set }) => {
        await ctx.password.forgot(body.email, await tenantIdOf(headers), info(request, server));
        set.status = 202;
        return { detail: FORGOT_ACCEPTED } satisfies ForgotAccepted;
      },
      {
        body: ForgotPasswordBody,
        transform: lowerCaseFields("email"),
        ...doc({
          summary: "Mail a link to choose a new password",
          description:
            "Always 202 with the same body, whether or not the address has an account. Without a tenant in Host or `X-Tenant`, one link per workspace the address belongs to (verified addresses first, as sign-in). The link opens `/reset-password#token=…` and works once, for 30 minutes. At most 3 per address and 30 per IP per 15 minutes.",
          tags: ["auth"],
          ok: { 202: ["ForgotAccepted", ForgotAccepted] },
          errors: [403, 404, 429],
        }),
      },
    )
    .post(
      "/reset",
      async ({ body, request, server }) => {
        await ctx.password.reset(body.token, body.password, info(request, server));
        return { detail: "Your password has been changed. Sign in with it." } satisfies PasswordReset;
      },
      {
        body: ResetPasswordBody,
        ...doc({
          summary: "Choose a new password with the token of a mailed link",
          description:
            "Sets the password, ends every session and outstanding 2FA challenge of the user, and signs nobody in. A used, expired or unknown token: 400 `reset_token_invalid`; the organization disabled by its operator: 403 `tenant_disabled`.",
          tags: ["auth"],
          ok: { 200: ["PasswordReset", PasswordReset] },
          errors: [400, 403, 429],
          codes: { 400: ["reset_token_invalid"] },
        }),
      },
    )
    .use(authGuard(ctx))
    .post(
      "/change",
      async ({ auth, body, request, server }) => {
        const revoked = await ctx.password.change(auth, body.current_password, body.new_password, info(request, server));
        return { detail: "Password changed. Your other sessions have been signed out.", revoked } satisfies PasswordChanged;
      },
      {
        body: ChangePasswordBody,
        ...doc({
          summary: "Change the signed-in user's password",
          description:
            "Needs the current password, checked under the login limits: a wrong one is 401 `invalid_credentials` and counts toward the account's sign-in lock (429). The user's other sessions and outstanding 2FA challenges end; this one stays.",
          tags: ["auth"],
          auth: true,
          ok: { 200: ["PasswordChanged", PasswordChanged] },
          errors: [429],
        }),
      },
    );
};
