import { Elysia } from "elysia";
import type { Context } from "../../context";
import { authGuard } from "../../http/auth-guard";
import { requestInfo } from "../../http/client";
import { doc } from "../../http/openapi";
import { EmailVerified, VerificationSent, VerifyEmailBody } from "./model";

/** Address verification: /api/v1/auth/email. */
export const emailRoutes = (ctx: Context) => {
  const info = (request: Request, server: Parameters<typeof requestInfo>[1]) => requestInfo(request, server, ctx.config.trustProxy);

  return new Elysia({ name: "email-routes", prefix: "/api/v1/auth/email", seed: ctx.id })
    .post(
      "/verify",
      async ({ body, request, server }) => {
        const done = await ctx.emailVerification.verify(body.token, info(request, server));
        return { detail: "Your email address is verified.", ...done } satisfies EmailVerified;
      },
      {
        body: VerifyEmailBody,
        ...doc({
          summary: "Prove an address with the token of a mailed link",
          description:
            "No session needed: the token is the proof (the link may be opened on another device). Single use, 24 hours. A used, expired or unknown token: 400 `verification_token_invalid`.",
          tags: ["auth"],
          ok: { 200: ["EmailVerified", EmailVerified] },
          errors: [400, 429],
          codes: { 400: ["verification_token_invalid"] },
        }),
      },
    )
    .use(authGuard(ctx))
    .post(
      "/resend",
      async ({ auth, request, server, set }) => {
        await ctx.emailVerification.resend(auth, info(request, server));
        set.status = 202;
        return { detail: "A new verification link is on its way." } satisfies VerificationSent;
      },
      doc({
        summary: "Mail the signed-in user a new verification link",
        description: "Already verified: 409 `email_already_verified`. At most 3 per user per 15 minutes. Earlier links stay valid until used or expired.",
        tags: ["auth"],
        auth: true,
        ok: { 202: ["VerificationSent", VerificationSent] },
        errors: [409, 429],
        codes: { 409: ["email_already_verified"] },
      }),
    );
};
