import { constants, accessSync } from "node:fs";
import { Elysia, type Static, t } from "elysia";
import { doc } from "./openapi";
import type { Context } from "../context";
import { diskRoom } from "../db/disk-room";
import { keyFileOf } from "../security/key-file";
import { AppError } from "../kernel/errors";

/**
 * GET /api/v1/health: liveness, 200 when the database answers (docs/interface.md#health-and-logs): the stores' ping.
 * GET /api/v1/health/ready: readiness, 200 only when the database answers, its schema is this
 * release's and the key file can be read; 503 `not_ready` naming the reason otherwise. Its
 * `storage` field reports disk pressure (free space under SUITE_DISK_RESERVE_MB: `low`) without
 * turning the answer to 503: reads, sign-ins and small writes still work then.
 */
export const healthRoutes = (ctx: Context) =>
  new Elysia({ name: "health", prefix: "/api/v1", seed: ctx.id })
    .get("/health", async () => {
      try {
        await ctx.ping();
      } catch {
        throw new AppError(503, "unavailable", "The database does not answer.");
      }
      return { status: "ok" } satisfies Health;
    }, doc({ summary: "Whether the server and its database answer", tags: ["health"], ok: { 200: ["Health", Health] }, errors: [503], codes: { 503: ["unavailable"] } }))
    .get("/health/ready", async () => {
      try {
        await ctx.ping();
      } catch {
        throw notReady("The database does not answer.");
      }
      const v = await ctx.repos.schemaVersion().catch(() => null);
      if (!v) throw notReady("The database's schema version cannot be read.");
      if (v.current !== v.target) throw notReady(`The database's schema is version ${v.current}; this release needs ${v.target}: run suite migrate.`);
      if (ctx.config.db !== ":memory:") {
        try {
          accessSync(keyFileOf(ctx.config.db), constants.R_OK);
        } catch (e) {
          throw notReady(`The key file ${keyFileOf(ctx.config.db)} cannot be read (${(e as NodeJS.ErrnoException).code ?? "error"}).`);
        }
      }
      const rooms = diskRoom();
      const free = rooms.length ? Math.min(...rooms.map((r) => r.freeBytes)) : null;
      return { status: "ready", storage: rooms.some((r) => r.low) ? "low" : "ok", free_mb: free === null ? null : Math.floor(free / 1048576) } satisfies Readiness;
    }, doc({
      summary: "Whether this server is ready for traffic: database, schema, key file; and its storage pressure",
      tags: ["health"],
      ok: { 200: ["Readiness", Readiness] },
      errors: [503],
      codes: { 503: ["not_ready"] },
    }));

const notReady = (why: string) => new AppError(503, "not_ready", `Not ready: ${why}`);

const Health = t.Object({ status: t.Literal("ok") });
type Health = Static<typeof Health>;
const Readiness = t.Object({
  status: t.Literal("ready"),
  storage: t.Union([t.Literal("ok"), t.Literal("low")], { description: "`low`: free disk under SUITE_DISK_RESERVE_MB; imports are refused with 507 until space is freed" }),
  free_mb: t.Union([t.Integer(), t.Null()], { description: "free MB on the SQLite database's filesystem (null on PostgreSQL)" }),
});
type Readiness = Static<typeof Readiness>;
