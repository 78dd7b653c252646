import { type AnyElysia, Elysia } from "elysia";
import { newDeviceRoutes } from "./auth/new-device/routes";
import { magicLinkRoutes } from "./auth/magic-link/routes";
import { emailRoutes } from "./auth/email/routes";
import { passwordRoutes } from "./auth/password/routes";
import { authRoutes } from "./auth/routes";
import { oidcRoutes } from "./auth/sign-in-providers/routes";
import { twoFactorRoutes } from "./auth/two-factor/routes";
import { passkeyRoutes } from "./auth/passkeys/routes";
import type { Context } from "./context";
import { httpCore } from "./http/core";
import { docsRoutes } from "./http/docs";
import { healthRoutes } from "./http/health";
import { tlsRoutes } from "./tls/routes";
import { metricsRoutes } from "./metrics/routes";
import { signupRoutes } from "./auth/signup/routes";
import { organizationRoutes } from "./organization/routes";
import { invitationAcceptRoutes } from "./auth/invitations/routes";
import { usersRoutes } from "./team/routes";
import { crmRoutes } from "./crm/routes";
import { viewRoutes } from "./crm/views-routes";
import { auditRoutes } from "./security-log/routes";
import { eventsRoutes } from "./events/routes";
import { webhookRoutes } from "./webhooks/routes";
import { transferRoutes } from "./crm/export-import/routes";
import { bulkRoutes } from "./crm/bulk-routes";
import { webRoutes } from "./web/routes";
import { operatorRoutes } from "./operator/routes";
import { isolateWork } from "./db/stall-monitor";

/** The HTTP application: the shared core first (its hooks must precede every route), then features. */
export function createApp(ctx: Context) {
  // The API description is generated from every route, so it reads the app once built.
  let self: AnyElysia | undefined;
  const app = new Elysia({ normalize: true })
    .use(httpCore(ctx))
    .use(docsRoutes(ctx, () => self!))
    .use(healthRoutes(ctx))
    .use(tlsRoutes(ctx))
    .use(metricsRoutes(ctx))
    .use(signupRoutes(ctx))
    .use(organizationRoutes(ctx))
    .use(authRoutes(ctx))
    .use(oidcRoutes(ctx))
    .use(twoFactorRoutes(ctx))
    .use(passkeyRoutes(ctx))
    .use(magicLinkRoutes(ctx))
    .use(newDeviceRoutes(ctx))
    .use(passwordRoutes(ctx))
    .use(emailRoutes(ctx))
    .use(invitationAcceptRoutes(ctx))
    .use(usersRoutes(ctx))
    .use(crmRoutes(ctx))
    .use(viewRoutes(ctx))
    .use(auditRoutes(ctx))
    .use(eventsRoutes(ctx))
    .use(webhookRoutes(ctx))
    .use(transferRoutes(ctx))
    .use(bulkRoutes(ctx))
    .use(operatorRoutes(ctx))
    // Last: its catch-all page must not shadow any API route.
    .use(webRoutes(ctx));
  self = app;
  // In-process callers of handle (tests, the bench) keep their own async context: see isolateWork.
  const handle = app.handle;
  app.handle = (request: Request) => isolateWork(() => handle(request));
  return app;
}

export type App = ReturnType<typeof createApp>;
