import { Elysia } from "elysia";
import type { Context } from "../context";
import { authGuard } from "../http/auth-guard";
import { requireAdmin } from "../kernel/principal";
import { requestInfo } from "../http/client";
import { doc } from "../http/openapi";
import { TenantRead, UpdateTenantBody } from "./model";

const TENANT: readonly [string, typeof TenantRead] = ["TenantRead", TenantRead];

/** The caller's organization: any member reads it, admins rename it, turn modules on and off and set its sign-in policy. */
export const organizationRoutes = (ctx: Context) =>
  new Elysia({ name: "organization-routes", prefix: "/api/v1/tenant", seed: ctx.id })
    .use(authGuard(ctx))
    .get("/", ({ auth }) => ctx.tenants.read(auth.tenantId), {
      ...doc({ summary: "The caller's organization: name, subdomain and modules", tags: ["organization"], auth: true, ok: { 200: TENANT } }),
    })
    .patch("/", async ({ auth, body, request, server }) => ctx.tenants.update(auth, body, requestInfo(request, server, ctx.config.trustProxy)), {
      body: UpdateTenantBody,
      // Admins only, checked before the body: a member learns 403, not the body's shape.
      transform: ({ auth }) => requireAdmin(auth),
      ...doc({
        summary: "Rename the organization, turn modules on and off, set the sign-in policy (admins)",
        description:
          "`modules` is the full list of modules that are on. A module turned off answers 403 `module_disabled` on its routes at once " +
          "and keeps its data; turning it on again shows it all. `require_passkey_or_2fa` and `require_passkey_for_admins`: a member " +
          "who does not comply gets 403 `policy_setup_required` on everything but setting up a passkey or 2FA until they do. Needs a recent sign-in.",
        tags: ["organization"],
        auth: true,
        ok: { 200: TENANT },
      }),
    });
