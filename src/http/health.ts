import { Elysia } from "elysia";
import type { Context } from "../context";
import { AppError } from "./errors";

/** GET /api/v1/health: 200 when the database answers (CONTRACT §12). */
export const healthRoutes = (ctx: Context) => {
  const ping = ctx.db.prepare("SELECT 1 AS ok");
  return new Elysia({ name: "health", prefix: "/api/v1", seed: ctx.id }).get("/health", () => {
    try {
      ping.get();
    } catch {
      throw new AppError(503, "unavailable", "The database does not answer.");
    }
    return { status: "ok" };
  });
};
