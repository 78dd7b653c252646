/**
 * Signed webhooks (issue 31): an organization's endpoints, and one delivery row per (event,
 * endpoint) written by the event's own append, in the change's transaction, so that a committed
 * event always has its deliveries and a rolled-back one has none.
 */
import type { OutgoingMail } from "../mail/repo";

/** Who hears that the server disabled an endpoint: its organization, and the admins' addresses. */
export interface DisabledNotice {
  tenantName: string;
  subdomain: string;
  recipients: string[];
}

/** The endpoint's disable that an attempt's end brings, and the mails that tell its admins. */
export interface EndpointDisable {
  endpointId: string;
  reason: "gone" | "failing";
  mails: (notice: DisabledNotice) => OutgoingMail[];
}

/** What recording an attempt's end did (WebhooksStore.finish). */
export type FinishOutcome = "stale" | "recorded" | "disabled";

/** An endpoint as stored. `events` is JSON text: event types, or ["*"]. */
export interface EndpointRow {
  tenant_id: string;
  id: string;
  url: string;
  description: string | null;
  events: string;
  /** 0/1. */
  enabled: number;
  /** Why the server disabled it: `gone` (410) or `failing` (three days without a 2xx); null otherwise. */
  disabled_reason: string | null;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_until: number | null;
  created_at: number;
  updated_at: number;
}

export type DeliveryStatus = "pending" | "delivered" | "failed";

/** A delivery as stored. A pending one is due at `next_attempt_at` (a leased one: when its lease ends). */
export interface DeliveryRow {
  tenant_id: string;
  id: string;
  endpoint_id: string;
  /** The event's seq in the organization's log; null for a test event (its body is `payload`). */
  event_seq: number | null;
  event_type: string;
  payload: string | null;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: number;
  window_start: number;
  last_status: number | null;
  last_duration_ms: number | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
}

/** A leased delivery with what sending it needs: the endpoint and the event as stored. `attempts` counts this one. */
export interface LeasedDelivery extends DeliveryRow {
  url: string;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_until: number | null;
  /** The event row's fields (null when the event is gone from the log, or for a test event). */
  ev_created_at: number | null;
  ev_actor_type: "user" | "system" | null;
  ev_actor_id: string | null;
  ev_data: string | null;
}

/** The end of one attempt: `delivered` (2xx), `retry` at `next`, or `failed` (given up). */
export type AttemptEnd =
  | { kind: "delivered" }
  | { kind: "retry"; next: number }
  | { kind: "failed" };

export interface AttemptResult {
  status: number | null;
  durationMs: number;
  error: string | null;
}

export type EndpointChange = Pick<EndpointRow, "url" | "description" | "events" | "enabled" | "disabled_reason" | "updated_at">;

/**
 * The store of webhooks. Endpoint writes tell the backend's append hook (SQLite keeps each
 * organization's subscribed endpoints in memory; PostgreSQL reads them in the append statement).
 */
export interface WebhooksStore {
  list(tenantId: string): Promise<EndpointRow[]>;
  byId(tenantId: string, id: string): Promise<EndpointRow | null>;
  count(tenantId: string): Promise<number>;
  insert(row: EndpointRow): Promise<void>;
  update(tenantId: string, id: string, change: EndpointChange): Promise<void>;
  /** A new secret; the current one becomes the previous one until `previousUntil`. */
  rotate(tenantId: string, id: string, sealed: string, previousSealed: string, previousUntil: number, now: number): Promise<void>;
  /** Deletes up to `max` of the endpoint's deliveries (one short transaction); answers how many. */
  removeDeliveries(tenantId: string, id: string, max: number): Promise<number>;
  /** Deletes the endpoint (and whatever deliveries are left). */
  remove(tenantId: string, id: string): Promise<void>;

  /** The endpoint's deliveries, newest first. */
  deliveries(tenantId: string, endpointId: string, limit: number, offset: number): Promise<DeliveryRow[]>;
  deliveryCount(tenantId: string, endpointId: string): Promise<number>;
  delivery(tenantId: string, endpointId: string, id: string): Promise<DeliveryRow | null>;
  /** A delivery of a test event (its body in `payload`), due now. */
  insertTest(row: DeliveryRow): Promise<void>;
  /** Makes a delivery pending and due at `now` again, with a new retry window (also a delivered one). */
  requeue(tenantId: string, id: string, now: number): Promise<void>;

  /**
   * Leases up to `limit` due deliveries of enabled endpoints, in one short transaction: each
   * `accept`ed candidate is due again only at `leaseUntil` (when a sender died with it), and its
   * attempts count one more. On PostgreSQL, rows another instance is leasing are skipped (SKIP LOCKED).
   */
  lease(now: number, leaseUntil: number, limit: number, accept: (d: DeliveryRow) => boolean): Promise<LeasedDelivery[]>;
  /**
   * Records an attempt's end, unless the delivery was leased again since (its attempts moved on):
   * "stale" then. With `disable` (a 410, or three days of failures), the same transaction disables
   * the endpoint if it is still enabled and queues the mails to its admins ("disabled"): no crash
   * leaves the delivery ended with its endpoint enabled, or the endpoint disabled with nobody told.
   */
  finish(tenantId: string, id: string, attempts: number, end: AttemptEnd, result: AttemptResult, now: number, disable?: EndpointDisable): Promise<FinishOutcome>;
  /** Pending deliveries, and those of them whose last attempt failed (the metrics). */
  backlog(): Promise<{ pending: number; failing: number }>;
  /** Deletes up to `max` finished deliveries created before `before`; answers how many. */
  sweepStep(before: number, max: number): Promise<number>;
}

/** The id of an event's delivery to an endpoint: the same for every attempt (the `webhook-id` header). */
export const eventDeliveryId = (seq: number, endpointId: string): string => `e${seq}_${endpointId}`;

/** Which endpoints of an organization want an event: `["*"]`, or the types listed. */
export interface Subscription {
  id: string;
  all: boolean;
  types: ReadonlySet<string>;
}

export const subscriptionOf = (row: Pick<EndpointRow, "id" | "events">): Subscription => {
  const events = JSON.parse(row.events) as string[];
  return { id: row.id, all: events.includes("*"), types: new Set(events) };
};
