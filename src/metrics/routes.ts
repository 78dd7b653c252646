import { createHash, timingSafeEqual } from "node:crypto";
import { Elysia } from "elysia";
import type { Context } from "../context";
import { AppError, BEARER, errors } from "../kernel/errors";
import { doc } from "../http/openapi";

const digest = (s: string) => createHash("sha256").update(s).digest();

/**
 * GET /api/v1/metrics: this instance's metrics in Prometheus' text format, for the operator's
 * Prometheus. Off (404) unless SUITE_METRICS_TOKEN is set; then only `Authorization: Bearer <it>`
 * reads them (401 otherwise). The token is the operator's: no organization's session or key opens it.
 */
export const metricsRoutes = (ctx: Context) => {
  const expected = ctx.config.metricsToken === null ? null : digest(ctx.config.metricsToken);
  return new Elysia({ name: "metrics", prefix: "/api/v1", seed: ctx.id }).get(
    "/metrics",
    async ({ request, set }) => {
      if (expected === null) throw errors.notFound();
      const given = /^Bearer (.+)$/i.exec(request.headers.get("authorization") ?? "")?.[1]?.trim();
      // Compared as digests: equal lengths, and no timing that tells how much of a guess was right.
      if (!given || !timingSafeEqual(digest(given), expected)) throw new AppError(401, "not_authenticated", "Send the metrics token as a bearer token.", BEARER);
      set.headers["content-type"] = ctx.metrics.registry.contentType;
      return ctx.metrics.text();
    },
    metricsDoc(),
  );
};

function metricsDoc() {
  const d = doc({
    summary: "This instance's metrics, in Prometheus' text format (the operator's token)",
    description:
      "Off (404) unless the server runs with `SUITE_METRICS_TOKEN`; then `Authorization: Bearer <that token>` is required (401 otherwise). " +
      "Requests by route template, method and status class with a latency histogram; sign-ins by method and result; rate-limit refusals; " +
      "the mail outbox; event-loop delay; process CPU, memory and open files; the build. Labels never name an organization or a user.",
    tags: ["metrics"],
    ok: { 200: null },
    errors: [401, 404],
  });
  (d.detail.responses as Record<string, unknown>)[200] = { description: "The metrics", content: { "text/plain": { schema: { type: "string" } } } };
  d.detail.security = [{ metricsToken: [] }];
  return d;
}
