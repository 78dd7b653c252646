import type { DealFields } from "../crm/deals-repo";
import { type EventActor, type NewEvent, SYSTEM_ACTOR } from "./repo";

/** The fields of `fields` whose value differs between `before` and `after`, each with both values. */
export function changesOf<T extends object>(before: T, after: T, fields: ReadonlyArray<keyof T & string>): Record<string, { before: unknown; after: unknown }> {
  const out: Record<string, { before: unknown; after: unknown }> = {};
  for (const f of fields) if (before[f] !== after[f]) out[f] = { before: before[f] ?? null, after: after[f] ?? null };
  return out;
}

/** `fields` of `row`, for a created or deleted record's event. */
export function pick<T extends object>(row: T, fields: ReadonlyArray<keyof T & string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields) out[f] = row[f] ?? null;
  return out;
}

export const DEAL_EVENT_FIELDS = [
  "title", "account_id", "contact_id", "assigned_to", "stage", "value_cents", "currency", "close_date", "probability", "notes", "custom_data",
] as const;
export const ACCOUNT_EVENT_FIELDS = ["name", "domain", "industry"] as const;
export const CONTACT_EVENT_FIELDS = ["first_name", "last_name", "email", "phone", "account_id"] as const;
export const STAGE_EVENT_FIELDS = ["key", "name", "color", "position", "probability", "is_won", "is_lost"] as const;

/**
 * A deal's change as an event: `deal.stage_changed` (with `from` and `to`) when it moved to another
 * stage, else `deal.updated`; `changes` holds every changed field's value before and after. Null
 * when nothing changed.
 */
export function dealChangedEvent(id: string, before: DealFields, after: DealFields, actor: EventActor): NewEvent | null {
  const changes = changesOf(before, after, DEAL_EVENT_FIELDS);
  if (Object.keys(changes).length === 0) return null;
  return before.stage !== after.stage
    ? { type: "deal.stage_changed", actor, data: { id, from: before.stage, to: after.stage, changes } }
    : { type: "deal.updated", actor, data: { id, changes } };
}


/** What an invitation's events say of it: never its token or link. */
export const invitationData = (row: { id: string; email: string; profile_id: string | null }) => ({ id: row.id, email: row.email, profile_id: row.profile_id });

/** What a member's events say of them. */
export const memberData = (u: { id: string; email: string; full_name: string | null; role: string; profile_id: string | null }) => ({
  id: u.id,
  email: u.email,
  full_name: u.full_name,
  role: u.role,
  profile_id: u.profile_id,
});

/** A member's change: `member.role_changed` for role or profile, `member.updated` for a new name (both when both changed). */
export function memberChangedEvents(
  before: { id: string; full_name: string | null; role: string; profile_id: string | null },
  after: { id: string; full_name: string | null; role: string; profile_id: string | null },
  actor: EventActor,
): NewEvent[] {
  const out: NewEvent[] = [];
  const rights = changesOf(before, after, ["role", "profile_id"]);
  if (Object.keys(rights).length > 0) out.push({ type: "member.role_changed", actor, data: { id: after.id, changes: rights } });
  const name = changesOf(before, after, ["full_name"]);
  if (Object.keys(name).length > 0) out.push({ type: "member.updated", actor, data: { id: after.id, changes: name } });
  return out;
}

const IMPORT_FIELDS = { account: ACCOUNT_EVENT_FIELDS, contact: CONTACT_EVENT_FIELDS, deal: DEAL_EVENT_FIELDS } as const;

/**
 * A record an import wrote, as the event the same write through the API makes (`job_id` added):
 * `*.created` for a new one, `*.updated` (a deal's `deal.stage_changed`) for a changed one, or
 * null when none of the fields events carry changed.
 */
export function importedEvent(
  entity: "account" | "contact" | "deal",
  id: string,
  values: Record<string, unknown>,
  before: Record<string, unknown> | null,
  actor: EventActor,
  jobId: string,
): NewEvent | null {
  const fields = IMPORT_FIELDS[entity] as ReadonlyArray<string>;
  if (before === null) return { type: `${entity}.created`, actor, data: { id, ...pick(values, fields), job_id: jobId } };
  if (entity === "deal") {
    const e = dealChangedEvent(id, before as unknown as DealFields, values as unknown as DealFields, actor);
    return e && { ...e, data: { ...e.data, job_id: jobId } };
  }
  const changes = changesOf(before, values, fields);
  return Object.keys(changes).length === 0 ? null : { type: `${entity}.updated`, actor, data: { id, changes, job_id: jobId } };
}

/** A sign-in's event: the new session's public id and how it was signed in (never its tokens). */
export const signedInEvent = (s: { user_id: string; id: string; method: string }): NewEvent => ({
  type: "user.signed_in",
  actor: { type: "user", id: s.user_id },
  data: { user_id: s.user_id, session_id: s.id, method: s.method },
});

/**
 * Sessions ended: one (`session_id`) or several of a user (`count`). The user's own doing when
 * `self` (signing a session out, "sign out the others"); else the system's (a password change, a
 * second factor turned off, an admin's step), which the audit row of that change names.
 */
export const revokedEvent = (userId: string, sessionId: string | null, count: number, reason: string, self: boolean): NewEvent => ({
  type: "session.revoked",
  actor: self ? { type: "user", id: userId } : SYSTEM_ACTOR,
  data: { user_id: userId, session_id: sessionId, count, reason },
});
