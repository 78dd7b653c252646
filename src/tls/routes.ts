import { Elysia } from "elysia";
import type { Context } from "../context";
import { AppError, errors } from "../kernel/errors";
import { doc } from "../http/openapi";
import { AskAnswer, AskQuery } from "./model";

/**
 * GET /api/v1/tls/ask?domain=HOST: Caddy's `on_demand_tls { ask … }` (deploy/Caddyfile). 200 for
 * the base domain and an existing, enabled organization's host; 404 for any other name; 403
 * `loopback_only` unless the caller is on this machine and did not come through the proxy.
 */
export const tlsRoutes = (ctx: Context) =>
  new Elysia({ name: "tls-routes", prefix: "/api/v1/tls", seed: ctx.id }).get(
    "/ask",
    async ({ query, request, server }) => {
      const peer = server?.requestIP(request)?.address ?? null;
      if (!ctx.tls.callerMayAsk(peer, request.headers)) {
        throw new AppError(403, "loopback_only", "Only a proxy on this machine may ask this, directly (not through the proxy).");
      }
      if (!(await ctx.tls.certificateAllowed(query.domain))) throw errors.notFound("No organization has this host name.");
      return { domain: query.domain.trim().toLowerCase() } satisfies AskAnswer;
    },
    {
      query: AskQuery,
      ...doc({
        summary: "Whether the proxy may get a TLS certificate for a host name (Caddy's on-demand TLS)",
        description:
          "200 for the base domain and the host of an existing, enabled organization; 404 for any other name. " +
          "Answered only to callers on the server's own machine that connect directly (no X-Forwarded-For, Forwarded or X-Real-IP): " +
          "everyone else gets 403 `loopback_only`, so it tells nobody outside which organizations exist.",
        tags: ["tls"],
        ok: { 200: ["TlsAskAnswer", AskAnswer] },
        errors: [403, 404],
        codes: { 403: ["loopback_only"], 404: ["not_found"] },
      }),
    },
  );
