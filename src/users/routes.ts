import { Elysia } from "elysia";
import type { Principal } from "../auth/service";
import type { Context } from "../context";
import { authGuard, requireAdmin } from "../http/auth-guard";
import { requestInfo } from "../http/client";
import { lowerCaseFields } from "../http/validation";
import { INVITATION_STATUSES, InviteUserBody } from "./invitations-model";
import { UpdateUserBody } from "./model";
import { QueryReader, type RawQuery } from "./paging";

/** Checked as a transform, before the body is validated: a member learns 403, not the body's shape. */
const adminsOnly = ({ auth }: { auth: Principal }) => requireAdmin(auth);

/** The team: invitations and members, under /api/v1/users. */
export const usersRoutes = (ctx: Context) =>
  new Elysia({ name: "users-routes", prefix: "/api/v1/users", seed: ctx.id })
    .use(authGuard(ctx))
    .post(
      "/invite",
      async ({ auth, body, request, server, set }) => {
        const { created, invitation } = await ctx.invitations.invite(auth, body, requestInfo(request, server, ctx.config.trustProxy));
        // The mail row is committed: let the sender take it now rather than at its next poll.
        ctx.mail.kick?.();
        set.status = created ? 201 : 200;
        return invitation;
      },
      // Addresses are compared trimmed and in lower case (CONTRACT §2): accept them typed so.
      { body: InviteUserBody, transform: [adminsOnly, lowerCaseFields("email")] },
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
      { transform: adminsOnly },
    )
    .post(
      "/invitations/:id/revoke",
      async ({ auth, params, request, server }) => ctx.invitations.revoke(auth, params.id, requestInfo(request, server, ctx.config.trustProxy)),
      { transform: adminsOnly },
    )
    .get(
      "/",
      async ({ auth, query }) => {
        const q = new QueryReader(query as RawQuery);
        const paging = q.paging();
        const search = q.search("search");
        q.done();
        return ctx.users.list(auth, { ...paging, search });
      },
      { transform: adminsOnly },
    )
    .patch(
      "/:id",
      async ({ auth, params, body, request, server }) =>
        ctx.users.rename(auth, params.id, body.full_name, requestInfo(request, server, ctx.config.trustProxy)),
      { body: UpdateUserBody },
    );
