import { formatCents } from "./money";

/**
 * A deal's timeline entries, the same on both backends: what each write records (built here, in
 * plain JavaScript, and stored as JSON text in the writing transaction) and what the API answers.
 */

export type ActivityType = "created" | "updated" | "stage_changed" | "note" | "imported" | "restored";

/** One field's change: what a person saw before and after (names for the records a deal names; their ids beside). */
export interface FieldChange {
  field: string;
  before: string | number | null;
  after: string | number | null;
  before_id?: string | null;
  after_id?: string | null;
}

/** A new entry, as the stores write it (n and the row's place are theirs). */
export interface NewActivity {
  id: string;
  type: ActivityType;
  actor_id: string | null;
  created_at: number;
  data: string;
}

/** A long text (a deal's notes field) is kept to its first 500 characters in an entry: the timeline shows a change, not a copy. */
export const MAX_TEXT_IN_ENTRY = 500;
const short = (v: unknown): string | null => {
  if (v === null || v === undefined) return null;
  const s = String(v);
  return s.length > MAX_TEXT_IN_ENTRY ? `${s.slice(0, MAX_TEXT_IN_ENTRY)}…` : s;
};

type Snapshot = Record<string, unknown>;

/**
 * The fields a timeline shows, each with how it reads from a stored deal row (the deals columns,
 * as the deal stores and imports hold them). The stage has its own entry (stage_changed).
 */
const FIELDS: Array<{ field: string; column: string; show: (row: Snapshot) => string | number | null; idColumn?: string }> = [
  { field: "title", column: "title", show: (r) => r.title as string },
  { field: "value", column: "value_cents", show: (r) => formatCents(Number(r.value_cents ?? 0)) },
  { field: "currency", column: "currency", show: (r) => r.currency as string },
  { field: "close_date", column: "close_date", show: (r) => (r.close_date as string | null) ?? null },
  { field: "probability", column: "probability", show: (r) => (r.probability === null || r.probability === undefined ? null : Number(r.probability)) },
  { field: "account", column: "account_id", idColumn: "account_id", show: (r) => (r.account_name as string | null) ?? null },
  { field: "contact", column: "contact_id", idColumn: "contact_id", show: (r) => (r.contact_name as string | null) ?? null },
  { field: "assignee", column: "assigned_to", idColumn: "assigned_to", show: (r) => ((r.assignee_name ?? r.assignee_email) as string | null) ?? null },
  { field: "notes", column: "notes", show: (r) => short(r.notes) },
  // custom_data is up to 16 KiB of JSON: the entry says it changed, without copying it twice.
  { field: "custom_data", column: "custom_data", show: () => null },
];

/** What changed between two stored rows of a deal (the stage apart); empty when nothing a person sees did. */
export function fieldChanges(before: Snapshot, after: Snapshot): FieldChange[] {
  const out: FieldChange[] = [];
  for (const f of FIELDS) {
    if ((before[f.column] ?? null) === (after[f.column] ?? null)) continue;
    const c: FieldChange = { field: f.field, before: f.show(before), after: f.show(after) };
    if (f.idColumn) {
      c.before_id = (before[f.idColumn] as string | null) ?? null;
      c.after_id = (after[f.idColumn] as string | null) ?? null;
    }
    out.push(c);
  }
  return out;
}

/** The entries of one deal write: "created", or "updated" and/or "stage_changed" (none when nothing changed). */
export function entriesOfWrite(
  newId: () => string,
  actor: string | null,
  now: number,
  before: Snapshot | null,
  after: Snapshot,
): NewActivity[] {
  if (before === null) {
    const data = { title: after.title, stage: after.stage, value: formatCents(Number(after.value_cents ?? 0)), currency: after.currency };
    return [{ id: newId(), type: "created", actor_id: actor, created_at: now, data: JSON.stringify(data) }];
  }
  const out: NewActivity[] = [];
  const changes = fieldChanges(before, after);
  if (changes.length > 0) out.push({ id: newId(), type: "updated", actor_id: actor, created_at: now, data: JSON.stringify({ changes }) });
  if (before.stage !== after.stage) {
    out.push({ id: newId(), type: "stage_changed", actor_id: actor, created_at: now, data: JSON.stringify({ from: before.stage, to: after.stage }) });
  }
  return out;
}

/** An import's entry on a deal it added or changed: the job, and what it changed. */
export function importEntry(newId: () => string, actor: string | null, now: number, jobId: string, before: Snapshot | null, after: Snapshot): NewActivity {
  const data =
    before === null
      ? { job_id: jobId, action: "added" }
      : { job_id: jobId, action: "updated", changes: fieldChanges(before, after), ...(before.stage !== after.stage ? { from: before.stage, to: after.stage } : {}) };
  return { id: newId(), type: "imported", actor_id: actor, created_at: now, data: JSON.stringify(data) };
}

/**
 * A bulk change's entries on a deal: those of a single edit, each naming the job (and, for an
 * undo, the bulk change it reverts), so the timeline says the change came in bulk.
 */
export function bulkEntries(newId: () => string, actor: string | null, now: number, job: { job_id: string; undo_of?: string }, before: Snapshot, after: Snapshot): NewActivity[] {
  return entriesOfWrite(newId, actor, now, before, after).map((a) => ({ ...a, data: JSON.stringify({ ...(JSON.parse(a.data) as object), ...job }) }));
}

/** A deleted deal brought back by undoing a bulk delete (its earlier entries and notes come back with it). */
export const restoredEntry = (newId: () => string, actor: string | null, now: number, job: { job_id: string; undo_of: string }): NewActivity => ({
  id: newId(), type: "restored", actor_id: actor, created_at: now, data: JSON.stringify(job),
});
