import { Elysia } from "elysia";
import { magicLinkRoutes } from "./auth/magic-link/routes";
import { authRoutes } from "./auth/routes";
import { twoFactorRoutes } from "./auth/two-factor/routes";
import type { Context } from "./context";
import { httpCore } from "./http/core";
import { healthRoutes } from "./http/health";
import { tenantsRoutes } from "./tenants/routes";
import { invitationAcceptRoutes } from "./users/accept-routes";
import { usersRoutes } from "./users/routes";
import { crmRoutes } from "./crm/routes";

/** The HTTP application: the shared core first (its hooks must precede every route), then features. */
export function createApp(ctx: Context) {
  return new Elysia({ normalize: true })
    .use(httpCore(ctx))
    .use(healthRoutes(ctx))
    .use(tenantsRoutes(ctx))
    .use(authRoutes(ctx))
    .use(magicLinkRoutes(ctx))
    .use(twoFactorRoutes(ctx))
    .use(invitationAcceptRoutes(ctx))
    .use(usersRoutes(ctx))
    .use(crmRoutes(ctx));
}

export type App = ReturnType<typeof createApp>;
