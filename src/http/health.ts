import { Elysia, t } from "elysia";
import { doc } from "./openapi";
import type { Context } from "../context";
import { AppError } from "./errors";

/**
 * GET /api/v1/health: 200 when the database answers (CONTRACT §12). The statement is looked up
 * on each call (db.query caches it) rather than prepared once: a statement prepared up front
 * keeps answering `SELECT 1` from a connection that has been closed, and it reads the schema
 * page so that a file that cannot be read shows.
 */
export const healthRoutes = (ctx: Context) =>
  new Elysia({ name: "health", prefix: "/api/v1", seed: ctx.id }).get("/health", () => {
    try {
      ctx.db.query("SELECT count(*) AS n FROM sqlite_master").get();
    } catch {
      throw new AppError(503, "unavailable", "The database does not answer.");
    }
    return { status: "ok" };
  }, doc({ summary: "Whether the server and its database answer", tags: ["health"], ok: { 200: ["Health", Health] }, errors: [503], codes: { 503: ["unavailable"] } }));

const Health = t.Object({ status: t.Literal("ok") });
