import { Elysia } from "elysia";
import type { Context } from "../context";
import { authGuard } from "../http/auth-guard";
import { requireAdmin } from "../kernel/principal";
import { requestInfo } from "../http/client";
import { doc } from "../http/openapi";
import { TenantRead, UpdateTenantBody } from "./model";

const TENANT: readonly [string, typeof TenantRead] = ["TenantRead", TenantRead];

/** The caller's organization: any member reads it, admins rename it and turn modules on and off. */
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
        summary: "Rename the organization and turn modules on and off (admins)",
        description:
          "`modules` is the full list of modules that are on. A module turned off answers 403 `module_disabled` on its routes at once " +
          "and keeps its data; turning it on again shows it all.",
        tags: ["organization"],
        auth: true,
        ok: { 200: TENANT },
      }),
    });
