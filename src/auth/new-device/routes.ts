import { Elysia } from "elysia";
import type { Context } from "../../context";
import { requestInfo } from "../../http/client";
import { doc } from "../../http/openapi";
import { NOT_ME_DONE, NotMeBody, NotMeDone } from "./model";

/** "This wasn't me": the link of a new-device mail (auth/new-device/service.ts). */
export const newDeviceRoutes = (ctx: Context) =>
  new Elysia({ name: "new-device-routes", prefix: "/api/v1/auth", seed: ctx.id }).post(
    "/not-me",
    async ({ body, request, server }) => {
      const ended = await ctx.newDevice.notMe(body.token, requestInfo(request, server, ctx.config.trustProxy));
      return { detail: NOT_ME_DONE, sessions_ended: ended };
    },
    {
      body: NotMeBody,
      ...doc({
        summary: "\"This wasn't me\": end a new device's sign-in and every one since",
        description:
          "With the token of a new-device mail's link (`/not-me#token=…`; single use, 7 days): ends the session that sign-in opened, every session of the account started since and its outstanding 2FA challenges, then mails a link to choose a new password. Needs no session. A used, expired or unknown token: 400 `not_me_token_invalid`.",
        tags: ["auth"],
        ok: { 200: ["NotMeDone", NotMeDone] },
        errors: [400, 429],
        codes: { 400: ["not_me_token_invalid"] },
      }),
    },
  );
