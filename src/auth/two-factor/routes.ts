import { Elysia } from "elysia";
import type { Context } from "../../context";
import { authGuard } from "../../http/auth-guard";
import { requestInfo } from "../../http/client";
import { setSessionCookies } from "../../http/cookies";
import { doc } from "../../http/openapi";
import { requestedSubdomain } from "../../http/tenancy";
import { TokenPair } from "../model";
import {
  BackupCodes,
  ConfirmBody,
  DisableBody,
  SessionsOption,
  TwoFactorEnabled,
  TwoFactorSetup,
  TwoFactorStatus,
  VerifyBody,
  compactCode,
} from "./model";

const tags = ["two-factor"] as const;
const REVOKE = "`{\"revoke_other_sessions\": true}` also ends the caller's other sessions.";
const STEP_UP = "Needs a recent sign-in: this session's last password or magic-link proof within `SUITE_REAUTH_WINDOW` seconds (default 600), else 403 `reauthentication_required` (renew it with `POST /api/v1/auth/reauthenticate`).";

/** TOTP second factor: /api/v1/auth/2fa. Verify is the only route without the auth guard. */
export const twoFactorRoutes = (ctx: Context) =>
  new Elysia({ name: "two-factor-routes", prefix: "/api/v1/auth/2fa", seed: ctx.id })
    .post(
      "/verify",
      async ({ body, headers, request, server, cookie }) => {
        const req = requestInfo(request, server, ctx.config.trustProxy);
        const tokens = await ctx.twoFactor.verify(body, requestedSubdomain(headers, ctx.config.baseDomain), req);
        setSessionCookies(cookie, ctx.config, tokens);
        return { access_token: tokens.access_token, refresh_token: tokens.refresh_token, token_type: tokens.token_type } satisfies TokenPair;
      },
      {
        body: VerifyBody,
        transform: compactCode,
        ...doc({
          summary: "Complete a sign-in with the second factor",
          description: "The login's `temp_token` and a 6-digit code (or a backup code `xxxx-xxxx`): a token pair and the session cookies. The `temp_token` is spent by the verify that succeeds, and ends with logout-all and 2FA disable. 5 attempts per minute per user; 20 wrong codes in a row lock the factor for 15 minutes.",
          tags,
          ok: { 200: ["TokenPair", TokenPair] },
          cookies: "set",
          errors: [401, 403, 429],
        }),
      },
    )
    .use(authGuard(ctx))
    .post(
      "/setup",
      ({ auth, body, request, server }) => ctx.twoFactor.setup(auth, requestInfo(request, server, ctx.config.trustProxy), body?.revoke_other_sessions),
      {
        body: SessionsOption,
        ...doc({
          summary: "Start 2FA setup: a new secret, its otpauth:// URI and 10 backup codes",
          description: `No body needed. A second setup before confirm replaces the pending secret. ${REVOKE} ${STEP_UP}`,
          tags,
          auth: true,
          ok: { 200: ["TwoFactorSetup", TwoFactorSetup] },
          errors: [409],
          codes: { 409: ["two_factor_already_enabled"] },
        }),
      },
    )
    .post("/confirm", ({ auth, body, request, server }) => ctx.twoFactor.confirm(auth, body.code, requestInfo(request, server, ctx.config.trustProxy)), {
      body: ConfirmBody,
      transform: compactCode,
      ...doc({
        summary: "Turn 2FA on with a code from the authenticator app",
        description: `5 attempts per minute per user, a counter of its own. ${STEP_UP}`,
        tags,
        auth: true,
        ok: { 200: ["TwoFactorEnabled", TwoFactorEnabled] },
        errors: [409, 429],
        codes: { 409: ["two_factor_not_pending", "two_factor_already_enabled"] },
      }),
    })
    .post("/disable", ({ auth, body, request, server }) => ctx.twoFactor.disable(auth, body, requestInfo(request, server, ctx.config.trustProxy)), {
      body: DisableBody,
      transform: compactCode,
      ...doc({
        summary: "Turn 2FA off with the password and a code (or a backup code)",
        description:
          "The password is this change's proof: no recent sign-in needed. 5 attempts per minute per user, a counter of its own. " +
          `409 \`required_by_policy\` when the organization requires a passkey or 2FA and the user has no passkey. ${REVOKE}`,
        tags,
        auth: true,
        ok: { 200: ["TwoFactorEnabled", TwoFactorEnabled] },
        errors: [409, 429],
        codes: { 409: ["two_factor_not_enabled", "required_by_policy"] },
      }),
    })
    .get("/status", ({ auth }) => ctx.twoFactor.status(auth), doc({ summary: "Whether 2FA is on or pending, and the backup codes left", tags, auth: true, ok: { 200: ["TwoFactorStatus", TwoFactorStatus] } }))
    .post(
      "/backup-codes",
      ({ auth, body, request, server }) =>
        ctx.twoFactor.regenerateBackupCodes(auth, requestInfo(request, server, ctx.config.trustProxy), body?.revoke_other_sessions),
      {
        body: SessionsOption,
        ...doc({
          summary: "Replace the backup codes with 10 new ones",
          description: `No body needed; the old codes stop working. 409 when 2FA is not on. ${REVOKE} ${STEP_UP}`,
          tags,
          auth: true,
          ok: { 200: ["BackupCodes", BackupCodes] },
          errors: [409],
          codes: { 409: ["two_factor_not_enabled"] },
        }),
      },
    );
