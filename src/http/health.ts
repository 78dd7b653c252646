import { Elysia, t } from "elysia";
import { doc } from "./openapi";
import type { Context } from "../context";
import { AppError } from "./errors";

/** GET /api/v1/health: 200 when the database answers (CONTRACT §12): the stores' ping. */
export const healthRoutes = (ctx: Context) =>
  new Elysia({ name: "health", prefix: "/api/v1", seed: ctx.id }).get("/health", async () => {
    try {
      await ctx.ping();
    } catch {
      throw new AppError(503, "unavailable", "The database does not answer.");
    }
    return { status: "ok" };
  }, doc({ summary: "Whether the server and its database answer", tags: ["health"], ok: { 200: ["Health", Health] }, errors: [503], codes: { 503: ["unavailable"] } }));

const Health = t.Object({ status: t.Literal("ok") });
