import { expect } from "bun:test";
import { type Attempt, asB, req } from "./attempt-kit";
import type { World } from "./world";
import { testSql } from "../../support/sql";

/** A's newest event id, as the API writes it: a number B's log also has, which must name B's own events only. */
const aNewest = async (w: World) => {
  const row = await testSql(w.t.ctx).get<{ seq: number }>("SELECT max(seq) AS seq FROM events WHERE tenant_id = ?1", w.a.tenantId);
  return String(row?.seq ?? 0).padStart(12, "0");
};

/** Every event answered is B's, and B has some: A's never show, whatever id is named. */
const onlyB = (body: any, w: World) => {
  const orgs = new Set((body.items as Array<{ organization_id: string }>).map((e) => e.organization_id));
  expect([...orgs]).toEqual([w.b.tenantId]);
};
const noneOfA = (body: any, w: World) => expect((body.items as Array<{ organization_id: string }>).filter((e) => e.organization_id !== w.b.tenantId)).toEqual([]);

/** The event log and its live stream. */
export const EVENT_ATTEMPTS: Attempt[] = [
  { op: "GET /api/v1/events", what: "read the event log", send: (w) => req("GET", "/events?limit=100", asB(w)), expect: { status: 200 }, check: onlyB },
  { op: "GET /api/v1/events", what: "event log, no tenant named", send: (w) => req("GET", "/events?limit=100", { token: w.b.admin.access }), expect: { status: 200 }, check: onlyB },
  { op: "GET /api/v1/events", what: "after and since name A's newest id", send: async (w) => req("GET", `/events?after=${await aNewest(w)}&since=0`, asB(w)), expect: { status: 200 }, check: noneOfA },
  { op: "GET /api/v1/events", what: "B's member reads the event log", send: (w) => req("GET", "/events?limit=100", { token: w.b.member.access, tenant: "bravo" }), expect: { status: 200 }, check: noneOfA },
  { op: "GET /api/v1/events/stream", what: "resume the stream from the start", send: (w) => req("GET", "/events/stream?last_event_id=0", asB(w)), expect: { status: 200 }, check: onlyB },
  {
    op: "GET /api/v1/events/stream",
    what: "Last-Event-ID is one of A's ids",
    send: async (w) => req("GET", "/events/stream", { ...asB(w), headers: { "last-event-id": await aNewest(w) } }),
    expect: { status: 200 },
    check: noneOfA,
  },
  { op: "GET /api/v1/events/stream", what: "B's member resumes the stream", send: (w) => req("GET", "/events/stream?last_event_id=0", { token: w.b.member.access, tenant: "bravo" }), expect: { status: 200 }, check: noneOfA },
];
