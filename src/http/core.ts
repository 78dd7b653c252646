import { Elysia, ValidationError } from "elysia";
import type { Context } from "../context";
import { JsonInvalid, checkDeclaredLength, readJsonBody } from "./body";
import { AppError, RequestValidationError, errors } from "./errors";
import { toValidationItems } from "./validation";

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;
/** Methods that never write what a caller is told about (a session's last-use mark is not that). */
const READS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * What every request gets, whatever its route: a request id, the 1 MiB body bound, our JSON
 * reader, CONTRACT §1's error bodies, answers to writes held until their commits are on disk
 * (ctx.durable), and one access-log line (method, path without its query, status, duration,
 * request id: nothing that could carry a secret).
 */
export const httpCore = (ctx: Context) => {
  const started = new WeakMap<Request, { at: number; id: string }>();
  return new Elysia({ name: "http-core", seed: ctx.id })
    .onRequest(({ request, set }) => {
      const given = request.headers.get("x-request-id");
      const id = given && REQUEST_ID.test(given) ? given : crypto.randomUUID();
      started.set(request, { at: performance.now(), id });
      set.headers["x-request-id"] = id;
      set.headers["cache-control"] = "no-store";
      checkDeclaredLength(request);
    })
    .onParse({ as: "global" }, ({ request, contentType }) => readJsonBody(request, contentType ?? ""))
    .onAfterHandle({ as: "global" }, async ({ request }) => {
      if (!READS.has(request.method)) await ctx.durable();
    })
    .onError({ as: "global" }, async ({ code, error: raised, set, request }) => {
      // A refusal may follow writes too (an audit row, a counter): on disk before the answer.
      if (!READS.has(request.method)) await ctx.durable().catch(() => {});
      // Elysia wraps what our body reader throws in its own ParseError.
      const error = code === "PARSE" && (raised as Error).cause ? (raised as Error).cause : raised;
      const fail = (e: AppError) => {
        set.status = e.status;
        Object.assign(set.headers, e.headers);
        return { detail: e.detail, code: e.code };
      };
      if (error instanceof AppError) return fail(error);
      if (error instanceof RequestValidationError) {
        set.status = 422;
        return { detail: error.items };
      }
      if (error instanceof JsonInvalid) {
        set.status = 422;
        return { detail: [{ loc: ["body", error.offset], msg: error.msg, type: "json_invalid" }] };
      }
      if (error instanceof ValidationError && error.type !== "response") {
        set.status = 422;
        return { detail: toValidationItems(error.type, error.all) };
      }
      if (code === "NOT_FOUND") return fail(errors.notFound());
      if (code === "PARSE") {
        set.status = 422;
        return { detail: [{ loc: ["body", 0], msg: "JSON decode error", type: "json_invalid" }] };
      }
      const id = started.get(request)?.id;
      const e = error as Error;
      ctx.log({ level: "error", msg: "unhandled error", request_id: id, error: e?.name, message: e?.message, stack: e?.stack });
      return fail(errors.internal());
    })
    .onAfterResponse({ as: "global" }, ({ request, set }) => {
      const s = started.get(request);
      ctx.log({
        level: "info",
        msg: "request",
        method: request.method,
        path: new URL(request.url).pathname,
        status: typeof set.status === "number" ? set.status : Number(set.status) || 200,
        duration_ms: s ? Math.round((performance.now() - s.at) * 100) / 100 : null,
        request_id: s?.id,
      });
    });
};
