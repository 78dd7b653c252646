import { Elysia } from "elysia";
import type { Context } from "../context";
import { authGuard, presentedToken } from "../http/auth-guard";
import { doc } from "../http/openapi";
import { RequestValidationError, errors } from "../kernel/errors";
import { QueryReader, type RawQuery } from "../kernel/paging";
import { EventList } from "./model";
import { seqOfId } from "./repo";

const ID_SCHEMA = { type: "string", pattern: "^[0-9]{1,15}$" };

const streamDoc = doc({
  summary: "The organization's events as they happen (Server-Sent Events)",
  description:
    "A `text/event-stream`: each event is sent with `id:` (the event's id), `event:` (its type) and `data:` (the Event as JSON). " +
    "A reconnecting client sends `Last-Event-ID` (or `last_event_id`) and gets every later event still kept; without it the stream starts with the next event. " +
    "A comment line is sent every 25 seconds. Only events the caller may read are sent (the CRM's to everyone of an organization with the CRM, " +
    "the team's and sign-ins to admins). The stream ends when the session is revoked or expires, or the access token it was opened with expires.",
  tags: ["events"],
  auth: true,
  ok: { 200: null },
  parameters: [
    { name: "Last-Event-ID", in: "header", description: "The id of the last event received: the stream resumes after it", schema: ID_SCHEMA },
    { name: "last_event_id", in: "query", description: "The same as the Last-Event-ID header, for a client that cannot set headers", schema: ID_SCHEMA },
  ],
});
(streamDoc.detail.responses as Record<string, { content?: Record<string, unknown> }>)["200"]!.content = {
  "text/event-stream": { schema: { type: "string", description: "Server-Sent Events: `id`, `event` and `data` (an Event as JSON) per event" } },
};

/** /api/v1/events: the organization's event log, as a list and as a live stream. */
export const eventsRoutes = (ctx: Context) =>
  new Elysia({ name: "events-routes", prefix: "/api/v1/events", seed: ctx.id })
    .use(authGuard(ctx))
    .get(
      "",
      ({ auth, query }) => {
        const q = new QueryReader(query as RawQuery);
        const limit = q.int("limit", 50, 1, 100);
        const cursor = (name: string): number | null => {
          const text = q.value(name);
          if (text === undefined || text === "") return null;
          const seq = seqOfId(text);
          if (seq === null) q.items.push({ loc: ["query", name], msg: "String should match pattern '^[0-9]{1,15}$'", type: "string_pattern_mismatch", ctx: { pattern: "^[0-9]{1,15}$" } });
          return seq;
        };
        const after = cursor("after");
        const since = cursor("since");
        q.done();
        return ctx.events.list(auth, { after, since, limit });
      },
      doc({
        summary: "The organization's events, newest first",
        description: "Only events the caller may read (as the stream). `after` continues a listing (the previous page's `next_after`); `since` stops at an event already known.",
        tags: ["events"],
        auth: true,
        ok: { 200: ["EventList", EventList] },
        parameters: [
          { name: "after", in: "query", description: "Events older than this id (the previous page's `next_after`)", schema: ID_SCHEMA },
          { name: "since", in: "query", description: "Only events newer than this id", schema: ID_SCHEMA },
          { name: "limit", in: "query", description: "At most this many events (1 to 100, default 50)", schema: { type: "integer", minimum: 1, maximum: 100, default: 50 } },
        ],
      }),
    )
    .get(
      "/stream",
      async ({ auth, request, server }) => {
        const text = request.headers.get("last-event-id") ?? new URL(request.url).searchParams.get("last_event_id");
        let last: number | null = null;
        if (text !== null && text !== "") {
          last = seqOfId(text.trim());
          if (last === null)
            throw new RequestValidationError([{ loc: ["header", "Last-Event-ID"], msg: "String should match pattern '^[0-9]{1,15}$'", type: "string_pattern_mismatch", ctx: { pattern: "^[0-9]{1,15}$" } }]);
        }
        const token = presentedToken(request.headers);
        if (!token) throw errors.notAuthenticated();
        // Bun closes a connection idle for 10 s; the heartbeat comes every 25.
        server?.timeout(request, Math.ceil((ctx.events.heartbeatMs * 2) / 1000) + 5);
        const body = await ctx.events.stream(auth, token, last);
        return new Response(body, {
          headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-store", "x-accel-buffering": "no" },
        });
      },
      streamDoc,
    );
