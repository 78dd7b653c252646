import { t, type Static } from "elysia";
import { toIso } from "../kernel/ids";
import { type EventRow, eventId } from "./repo";

/** One event of the organization's log, as the list and the stream send it. */
export const EventRead = t.Object(
  {
    id: t.String({ description: "Sortable: a later event of the organization has a greater id (as text and as a number)" }),
    type: t.String({ description: "What happened: `deal.created`, `deal.updated`, `deal.stage_changed`, `member.removed`…" }),
    created_at: t.String({ format: "date-time" }),
    organization_id: t.String(),
    actor: t.Object({
      type: t.Union([t.Literal("user"), t.Literal("system")]),
      id: t.Nullable(t.String({ description: "The user's id (null for the system)" })),
    }),
    data: t.Record(t.String(), t.Any(), { description: "The record's id and fields; for an update, `changes` holds each changed field's `before` and `after`" }),
  },
  { title: "Event" },
);
export type EventRead = Static<typeof EventRead>;

export const EventList = t.Object(
  {
    items: t.Array(EventRead),
    next_after: t.Nullable(t.String({ description: "Pass as `after` for the next (older) page; null on the last page" })),
  },
  { title: "EventList" },
);
export type EventList = Static<typeof EventList>;

export const toEventRead = (r: EventRow): EventRead => ({
  id: eventId(r.seq),
  type: r.type,
  created_at: toIso(r.created_at),
  organization_id: r.tenant_id,
  actor: { type: r.actor_type, id: r.actor_id },
  data: JSON.parse(r.data) as Record<string, unknown>,
});
