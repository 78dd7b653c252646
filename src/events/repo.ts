/**
 * The organization's event log (issue 31): one ordered log per organization, each event written by
 * the store function that makes the change, inside its transaction, so that a rolled-back change
 * leaves no event and a committed one always has its event.
 */

/** Every event type the log holds (the stream's `event:` names). */
export const EVENT_TYPES = [
  "deal.created", "deal.updated", "deal.stage_changed", "deal.deleted",
  "account.created", "account.updated", "account.deleted",
  "contact.created", "contact.updated", "contact.deleted",
  "pipeline_stage.created", "pipeline_stage.updated", "pipeline_stage.reordered", "pipeline_stage.deleted",
  "import.finished",
  "member.joined", "member.updated", "member.role_changed", "member.removed",
  "invitation.created", "invitation.accepted", "invitation.revoked",
  "user.signed_in", "user.two_factor_enabled", "user.two_factor_disabled", "session.revoked",
] as const;

/** Who made a change: a signed-in user, or the system (a job, the operator's command line). */
export interface EventActor {
  type: "user" | "system";
  id: string | null;
}

export const SYSTEM_ACTOR: EventActor = { type: "system", id: null };

/** The actor of a request's principal. */
export const userActor = (p: { userId: string }): EventActor => ({ type: "user", id: p.userId });

/** The actor of a change its audit row names (a user's, or the system's). */
export const actorOfAudit = (a: { userId: string | null }): EventActor => (a.userId ? { type: "user", id: a.userId } : SYSTEM_ACTOR);

/** An event to append: its type, who did it and what it says (never a secret: no password, token, code or link). */
export interface NewEvent {
  type: string;
  actor: EventActor;
  data: Record<string, unknown>;
}

/** An event as stored: `seq` orders the organization's log (its public id is `seq`, zero-padded). */
export interface EventRow {
  tenant_id: string;
  seq: number;
  type: string;
  created_at: number;
  actor_type: "user" | "system";
  actor_id: string | null;
  /** JSON text. */
  data: string;
}

/**
 * The store of the event log. Writes happen inside other stores' transactions (their `…InTx`
 * helpers call the backend's append); this interface reads, sweeps and hears of new events.
 */
export interface EventsStore {
  /** Events of the organization with seq > `after`, oldest first, at most `limit`. */
  since(tenantId: string, after: number, limit: number): Promise<EventRow[]>;
  /** Events with seq < `before` and seq > `since`, newest first, at most `limit`. */
  page(tenantId: string, before: number, since: number, limit: number): Promise<EventRow[]>;
  /** The organization's last seq (0 before its first event). */
  lastSeq(tenantId: string): Promise<number>;
  /** One bounded step of the sweep: events older than `before` of up to `tenants` organizations after `afterTenant`. */
  sweepStep(before: number, afterTenant: string, tenants: number, maxRows: number): Promise<{ deleted: number; next: string | null }>;
  /**
   * Calls `committed(tenantId, seq)` after an event is committed (on PostgreSQL: by any instance
   * sharing the database, through LISTEN/NOTIFY), and `resync()` when notices may have been missed
   * (a reconnect). Answers the function that stops listening.
   */
  watch(committed: (tenantId: string, seq: number) => void, resync: () => void): Promise<() => Promise<void>>;
}

/** An event id as the API shows it: the organization's sequence number, zero-padded so that ids sort as text too. */
export const eventId = (seq: number): string => String(seq).padStart(12, "0");

/** The seq of an id from the API, or null when it is not one. */
export function seqOfId(id: string): number | null {
  if (!/^[0-9]{1,15}$/.test(id)) return null;
  return Number(id);
}
