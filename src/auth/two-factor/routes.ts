import { Elysia } from "elysia";
import type { Context } from "../../context";
import { authGuard } from "../../http/auth-guard";
import { requestInfo } from "../../http/client";
import { setSessionCookies } from "../../http/cookies";
import { requestedSubdomain } from "../../http/tenancy";
import { ConfirmBody, DisableBody, SessionsOption, VerifyBody, compactCode } from "./model";

/** TOTP second factor: /api/v1/auth/2fa. Verify is the only route without the auth guard. */
export const twoFactorRoutes = (ctx: Context) =>
  new Elysia({ name: "two-factor-routes", prefix: "/api/v1/auth/2fa", seed: ctx.id })
    .post(
      "/verify",
      async ({ body, headers, request, server, cookie }) => {
        const req = requestInfo(request, server, ctx.config.trustProxy);
        const tokens = await ctx.twoFactor.verify(body, requestedSubdomain(headers, ctx.config.baseDomain), req);
        setSessionCookies(cookie, ctx.config, tokens);
        return { access_token: tokens.access_token, refresh_token: tokens.refresh_token, token_type: tokens.token_type };
      },
      { body: VerifyBody, transform: compactCode },
    )
    .use(authGuard(ctx))
    .post(
      "/setup",
      ({ auth, body, request, server }) =>
        ctx.twoFactor.setup(auth, requestInfo(request, server, ctx.config.trustProxy), body?.revoke_other_sessions),
      { body: SessionsOption },
    )
    .post("/confirm", ({ auth, body, request, server }) => ctx.twoFactor.confirm(auth, body.code, requestInfo(request, server, ctx.config.trustProxy)), {
      body: ConfirmBody,
      transform: compactCode,
    })
    .post("/disable", ({ auth, body, request, server }) => ctx.twoFactor.disable(auth, body, requestInfo(request, server, ctx.config.trustProxy)), {
      body: DisableBody,
      transform: compactCode,
    })
    .get("/status", ({ auth }) => ctx.twoFactor.status(auth))
    .post(
      "/backup-codes",
      ({ auth, body, request, server }) =>
        ctx.twoFactor.regenerateBackupCodes(auth, requestInfo(request, server, ctx.config.trustProxy), body?.revoke_other_sessions),
      { body: SessionsOption },
    );
