import { Elysia } from "elysia";
import type { Context } from "../../context";
import { requestInfo } from "../../http/client";
import { setSessionCookies } from "../../http/cookies";
import { doc } from "../../http/openapi";
import { requestedSubdomain } from "../../http/tenancy";
import { SignupResponse } from "../../organization/model";
import { AcceptInvitationBody } from "../../team/invitations-model";

/** Joining by invitation: the invited person chooses a password and is signed in (docs/interface.md#signup-and-invitations). */
export const invitationAcceptRoutes = (ctx: Context) =>
  new Elysia({ name: "invitation-accept-routes", prefix: "/api/v1/auth", seed: ctx.id }).post(
    "/invitations/accept",
    async ({ body, headers, request, server, cookie, set }) => {
      const req = requestInfo(request, server, ctx.config.trustProxy);
      const named = requestedSubdomain(headers, ctx.config.baseDomain);
      const { user, tenant, tokens } = await ctx.invitations.accept(body, req, named);
      // The browser that joined is a known device of the account: no new-device mail at its next sign-in.
      setSessionCookies(cookie, ctx.config, { ...tokens, device: await ctx.newDevice.remember(tenant.id, user.id, req) });
      set.status = 201;
      return { user, tenant, access_token: tokens.access_token, refresh_token: tokens.refresh_token, token_type: tokens.token_type } satisfies SignupResponse;
    },
    {
      body: AcceptInvitationBody,
      ...doc({
        summary: "Accept an invitation: choose a password, join the organization, signed in",
        tags: ["auth"],
        // The same shape as signup's answer: the user, their organization and a token pair.
        ok: { 201: ["SignupResponse", SignupResponse] },
        cookies: "set",
        errors: [400, 403, 409, 429],
        codes: { 400: ["invitation_invalid"], 409: ["already_member"] },
      }),
    },
  );
