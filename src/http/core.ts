import { Elysia, ValidationError } from "elysia";
import type { Context } from "../context";
import { JsonInvalid, checkDeclaredLength, isCsvImport, readJsonBody } from "./body";
import { isCookieWrite } from "./csrf";
import { isStorageFull } from "../db/disk-room";
import { beginWork, nameWork } from "../db/stall-monitor";
import { AppError, RequestValidationError, errors } from "../kernel/errors";
import { requestPath } from "./request-path";
import { securityHeaders } from "./security-headers";
import { toValidationItems } from "../kernel/validation";
import { traceOf } from "./trace";

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;
/** Methods that never write what a caller is told about (a session's last-use mark is not that). */
const READS = new Set(["GET", "HEAD", "OPTIONS"]);
/** A path longer than this is cut in the access log (Bun accepts request lines of many KiB). */
const MAX_LOGGED_PATH = 2048;

/**
 * What every request gets, whatever its route: a request id, the 1 MiB body bound, our JSON
 * reader, the error bodies of docs/interface.md#errors, answers to writes held until their commits are on disk
 * (ctx.durable), and one access-log line (method, path without its query, status, duration,
 * request id: nothing that could carry a secret).
 *
 * No hook may throw past its request (issue 13): what fails in one is logged with the request
 * id and turned into that request's 500, or, after the answer is sent, only logged. A hook that
 * throws once the answer is gone would otherwise reach the process as an unhandled rejection.
 */
export const httpCore = (ctx: Context) => {
  const started = new WeakMap<Request, { at: number; id: string; trace: string }>();
  /** A log line that cannot throw either (a logger failing must not take the request with it). */
  const log = (line: Record<string, unknown>) => {
    try {
      ctx.log(line);
    } catch {
      // Nowhere left to report it; the request goes on.
    }
  };
  const failure = (msg: string, request: Request, e: unknown) => {
    const err = e as Error | undefined;
    const s = started.get(request);
    log({ level: "error", msg, request_id: s?.id, trace_id: s?.trace, error: err?.name, message: err?.message, stack: err?.stack });
  };
  return new Elysia({ name: "http-core", seed: ctx.id })
    .onRequest(({ request, set }) => {
      const given = request.headers.get("x-request-id");
      const id = given && REQUEST_ID.test(given) ? given : crypto.randomUUID();
      // A caller's W3C trace (a proxy's) is continued, or one is started: its id joins the logs.
      const trace = traceOf(request.headers.get("traceparent"));
      started.set(request, { at: performance.now(), id, trace: trace.traceId });
      // The stall monitor names what this request's code holds after it (db/stall-monitor.ts).
      beginWork(request.method);
      Object.assign(set.headers, securityHeaders);
      set.headers["x-request-id"] = id;
      set.headers.traceparent = trace.header;
      set.headers["cache-control"] = "no-store";
      checkDeclaredLength(request);
    })
    // Once routed: the method and route template (never the path, which can carry ids).
    .onTransform({ as: "global" }, ({ request, route }) => nameWork(`${request.method} ${route}`))
    .onParse({ as: "global" }, async ({ request, contentType }) => {
      // A CSV import reads its own body (up to 50 MB, counted as it streams): see body.ts.
      if (isCsvImport(request)) return null;
      try {
        return await readJsonBody(request, contentType ?? "");
      } catch (e) {
        // A non-JSON body with our cookie is a cross-site form's write: CSRF, not a media type.
        if (e instanceof AppError && e.status === 415 && isCookieWrite(request)) throw errors.csrf();
        throw e;
      }
    })
    .onAfterHandle({ as: "global" }, async ({ request }) => {
      if (READS.has(request.method)) return;
      try {
        await ctx.durable();
      } catch (e) {
        // The commit may not be on disk: the caller must not be told its write is done.
        failure("durability wait failed", request, e);
        throw isStorageFull(e) ? errors.storageFull() : errors.internal();
      }
    })
    .onError({ as: "global" }, async ({ code, error: raised, set, request }) => {
      try {
        return await answerError(code, raised, set, request);
      } catch (e) {
        failure("error handler failed", request, e);
        set.status = 500;
        return { detail: "Something went wrong on our side.", code: "internal_error" };
      }
    })
    .onAfterResponse({ as: "global" }, ({ request, set, route }) => {
      try {
        const s = started.get(request);
        const status = typeof set.status === "number" ? set.status : Number(set.status) || 200;
        const ms = s ? performance.now() - s.at : 0;
        // The route's template, never the path: ids and unmatched paths would make labels without end.
        ctx.metrics.request(route || "unmatched", request.method, status, ms / 1000);
        ctx.requestRate.add(status, ms / 1000, route, request.method);
        log({
          level: "info",
          msg: "request",
          method: request.method,
          path: requestPath(request.url).slice(0, MAX_LOGGED_PATH),
          status,
          duration_ms: s ? Math.round(ms * 100) / 100 : null,
          request_id: s?.id,
          trace_id: s?.trace,
        });
      } catch (e) {
        failure("access log failed", request, e);
      }
    });

  type Set = { status?: number | string; headers: Record<string, unknown> };
  async function answerError(code: string | number, raised: unknown, set: Set, request: Request) {
    // A refusal may follow writes too (an audit row, a counter): on disk before the answer.
    if (!READS.has(request.method)) await ctx.durable().catch((e) => failure("durability wait failed", request, e));
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
    // A write the disk had no room for (SQLite, the OS or PostgreSQL saying so): 507, not 500.
    if (isStorageFull(error)) {
      const err = error as Error;
      log({ level: "warn", msg: "storage full", request_id: started.get(request)?.id, error: err?.name, message: err?.message });
      return fail(errors.storageFull());
    }
    failure("unhandled error", request, error);
    return fail(errors.internal());
  }
};
