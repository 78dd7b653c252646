import { Elysia, t } from "elysia";
import type { Principal } from "../auth/service";
import type { Context } from "../context";
import { authGuard, requireAdmin } from "../http/auth-guard";
import { requestInfo } from "../http/client";
import { doc } from "../http/openapi";
import { lowerCaseFields } from "../http/validation";
import { INVITATION_STATUSES, InvitationRead, InviteUserBody } from "./invitations-model";
import { UpdateUserBody, UserRead } from "./model";
import { SEARCH_SCHEMA, QueryReader, type RawQuery, listParameters, pageSchema } from "../http/paging";

/**
 * Admins of an organization with the users module: checked as a transform, before the body is
 * validated, so a member learns 403, not the body's shape.
 */
const teamAdmin =
  (ctx: Context) =>
  async ({ auth }: { auth: Principal }) => {
    requireAdmin(auth);
    await ctx.tenants.requireModule(auth.tenantId, "users");
  };

const INVITATION: readonly [string, typeof InvitationRead] = ["Invitation", InvitationRead];

/** The team: invitations and members, under /api/v1/users. */
export const usersRoutes = (ctx: Context) => {
  const adminsOnly = teamAdmin(ctx);
  return new Elysia({ name: "users-routes", prefix: "/api/v1/users", seed: ctx.id })
    .use(authGuard(ctx))
    .post(
      "/invite",
      async ({ auth, body, request, server, set }) => {
        const { created, invitation } = await ctx.invitations.invite(auth, body, requestInfo(request, server, ctx.config.trustProxy));
        set.status = created ? 201 : 200;
        return invitation;
      },
      {
        body: InviteUserBody,
        // Addresses are compared trimmed and in lower case (CONTRACT §2): accept them typed so.
        transform: [adminsOnly, lowerCaseFields("email")],
        ...doc({
          summary: "Invite someone by email (admins); a repeat for a pending invitation resends it",
          tags: ["users"],
          auth: true,
          ok: { 201: INVITATION, 200: INVITATION },
          errors: [404, 409, 429],
          codes: { 409: ["already_member"] },
        }),
      },
    )
    .get(
      "/invitations",
      async ({ auth, query }) => {
        const q = new QueryReader(query as RawQuery);
        const paging = q.paging();
        const status = q.literal("status", INVITATION_STATUSES);
        q.done();
        return ctx.invitations.list(auth, { ...paging, status });
      },
      {
        transform: adminsOnly,
        ...doc({
          summary: "The organization's invitations, newest first (admins)",
          tags: ["users"],
          auth: true,
          ok: { 200: ["InvitationPage", pageSchema(InvitationRead)] },
          parameters: listParameters([{ name: "status", description: "Only invitations in this state", schema: { type: "string", enum: [...INVITATION_STATUSES] } }]),
        }),
      },
    )
    .post(
      "/invitations/:id/revoke",
      async ({ auth, params, request, server }) => ctx.invitations.revoke(auth, params.id, requestInfo(request, server, ctx.config.trustProxy)),
      {
        transform: adminsOnly,
        ...doc({ summary: "Revoke an invitation: its link stops working (admins)", tags: ["users"], auth: true, ok: { 200: INVITATION }, errors: [404, 409], codes: { 409: ["invitation_accepted"] } }),
      },
    )
    .get("/profiles", ({ auth }) => ctx.users.profiles(auth), {
      transform: adminsOnly,
      ...doc({
        summary: "The organization's permission profiles, for invitations (admins)",
        tags: ["users"],
        auth: true,
        ok: { 200: ["ProfileList", t.Array(t.Object({ id: t.String(), name: t.String(), is_admin: t.Boolean() }))] },
      }),
    })
    .get(
      "/",
      async ({ auth, query }) => {
        const q = new QueryReader(query as RawQuery);
        const paging = q.paging();
        const search = q.search("search");
        q.done();
        return ctx.users.list(auth, { ...paging, search });
      },
      {
        transform: adminsOnly,
        ...doc({
          summary: "The organization's members, oldest first (admins)",
          tags: ["users"],
          auth: true,
          ok: { 200: ["UserPage", pageSchema(UserRead)] },
          parameters: listParameters([{ name: "search", description: "Part of an email or name, any case", schema: SEARCH_SCHEMA }]),
        }),
      },
    )
    .patch(
      "/:id",
      async ({ auth, params, body, request, server }) =>
        ctx.users.rename(auth, params.id, body.full_name, requestInfo(request, server, ctx.config.trustProxy)),
      {
        body: UpdateUserBody,
        ...doc({ summary: "Rename a member (themself, or anyone for admins)", tags: ["users"], auth: true, ok: { 200: ["UserRead", UserRead] }, errors: [404] }),
      },
    );
};
