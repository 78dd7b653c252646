import { Elysia } from "elysia";
import type { Principal } from "../auth/service";
import type { Context } from "../context";
import { authGuard } from "../http/auth-guard";
import { requireAdmin } from "../kernel/principal";
import { requestInfo } from "../http/client";
import { doc } from "../http/openapi";
import { createOnce } from "../idempotency/create-once";
import { lowerCaseFields } from "../kernel/validation";
import { INVITATION_STATUSES, InvitationLink, InvitationRead, InviteUserBody } from "./invitations-model";
import { ProfileList, UpdateUserBody, UserRead } from "./model";
import { SEARCH_SCHEMA, QueryReader, type RawQuery } from "../kernel/paging";
import { listParameters, pageSchema } from "../http/page-schema";

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
        set.status = 201;
        const invite = async () => {
          const { created, invitation } = await ctx.invitations.invite(auth, body, requestInfo(request, server, ctx.config.trustProxy));
          set.status = created ? 201 : 200;
          return invitation;
        };
        return createOnce(ctx.idempotency, { auth, body, set, request }, invite, (id) => ctx.invitations.read(auth, id));
      },
      {
        body: InviteUserBody,
        // Addresses are compared trimmed and in lower case (docs/interface.md#tenancy): accept them typed so.
        transform: [adminsOnly, lowerCaseFields("email")],
        ...doc({
          summary: "Invite someone by email (admins); a repeat for a pending invitation resends it",
          tags: ["users"],
          auth: true,
          ok: { 201: INVITATION, 200: INVITATION },
          errors: [404, 409, 429],
          codes: { 409: ["already_member"] },
          idempotent: true,
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
    .post(
      "/invitations/:id/link",
      async ({ auth, params, request, server }) => ctx.invitations.link(auth, params.id, requestInfo(request, server, ctx.config.trustProxy)),
      {
        transform: adminsOnly,
        ...doc({
          summary: "Copy link: re-issue a pending invitation's link and answer it once (admins)",
          description:
            "Draws a fresh link and expiry; the link mailed or copied before stops working. Nothing is mailed and the server keeps no copy of the link. " +
            "An invitation with an administrator profile needs a recent sign-in (`POST /api/v1/auth/reauthenticate`), else 403 `reauthentication_required`, as inviting with that profile does.",
          tags: ["users"],
          auth: true,
          ok: { 200: ["InvitationLink", InvitationLink] },
          errors: [404, 409],
          codes: { 409: ["invitation_not_pending", "invitation_changed"] },
        }),
      },
    )
    .get("/profiles", ({ auth }) => ctx.users.profiles(auth), {
      transform: adminsOnly,
      ...doc({
        summary: "The organization's permission profiles, for invitations (admins)",
        tags: ["users"],
        auth: true,
        ok: { 200: ["ProfileList", ProfileList] },
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
      async ({ auth, params, body, request, server }) => {
        // Roles and profiles belong to the team area: the users module gates them as it gates the member list.
        if (body.role !== undefined || body.profile_id !== undefined) await ctx.tenants.requireModule(auth.tenantId, "users");
        return ctx.members.update(auth, params.id, body, requestInfo(request, server, ctx.config.trustProxy));
      },
      {
        body: UpdateUserBody,
        ...doc({
          summary: "Rename a member (themself, or anyone for admins); admins also set the role and profile",
          description: "Demoting the organization's last admin answers 409 `last_admin`. A `profile_id` not in this organization is 404.",
          tags: ["users"],
          auth: true,
          ok: { 200: ["UserRead", UserRead] },
          errors: [404, 409],
          codes: { 409: ["last_admin"] },
        }),
      },
    )
    .delete(
      "/:id",
      async ({ auth, params, query, request, server, set }) => {
        const q = new QueryReader(query as RawQuery);
        const reassignTo = q.search("reassign_to");
        q.done();
        await ctx.members.remove(auth, params.id, reassignTo, requestInfo(request, server, ctx.config.trustProxy));
        set.status = 204;
      },
      {
        transform: adminsOnly,
        ...doc({
          summary: "Remove a member (admins): their sessions end, their deals become unassigned or go to `reassign_to`",
          description:
            "In one transaction: the member's deals move, their pending invitations (sent by them or to them) are revoked, and their sessions, " +
            "sign-in challenges, magic links and second factor are deleted. The last admin cannot be removed (409 `last_admin`). " +
            "A `reassign_to` that is not a member of this organization is 404.",
          tags: ["users"],
          auth: true,
          ok: { 204: null },
          errors: [404, 409],
          codes: { 409: ["last_admin"] },
          parameters: [{ name: "reassign_to", in: "query", description: "A member's id: the removed member's deals go to them", schema: { type: "string", minLength: 1, maxLength: 64 } }],
        }),
      },
    )
    .post("/:id/2fa/reset", async ({ auth, params, request, server }) => ctx.members.resetSecondFactor(auth, params.id, requestInfo(request, server, ctx.config.trustProxy)), {
      transform: adminsOnly,
      ...doc({
        summary: "Turn a member's second factor off (admins): for a lost authenticator; their backup codes and 2FA challenges stop working",
        tags: ["users"],
        auth: true,
        ok: { 200: ["UserRead", UserRead] },
        errors: [404],
      }),
    })
    .post("/:id/unlock", async ({ auth, params, request, server }) => ctx.members.unlock(auth, params.id, requestInfo(request, server, ctx.config.trustProxy)), {
      transform: adminsOnly,
      ...doc({
        summary: "Lift a member's sign-in lockout (admins): the failed sign-in counter in this organization and the second factor's lock",
        tags: ["users"],
        auth: true,
        ok: { 200: ["UserRead", UserRead] },
        errors: [404],
      }),
    });
};
