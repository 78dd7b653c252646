import type { FieldChange, NewActivity } from "./deal-activity";

/**
 * An account's and a contact's timeline entries, the same on both backends (as deal-activity.ts
 * for deals): built here in plain JavaScript and stored as JSON text in the writing transaction.
 */

export type RecordKind = "account" | "contact";

type Snapshot = Record<string, unknown>;
const text = (column: string) => (r: Snapshot) => (r[column] as string | null | undefined) ?? null;

/**
 * The fields each timeline shows, with how each reads from a stored row (a contact's account is
 * shown by its name, read by the store beside the row as `account_name`, its id beside).
 */
const FIELDS: Record<RecordKind, Array<{ field: string; column: string; show: (r: Snapshot) => string | null; idColumn?: string }>> = {
  account: [
    { field: "name", column: "name", show: text("name") },
    { field: "domain", column: "domain", show: text("domain") },
    { field: "industry", column: "industry", show: text("industry") },
  ],
  contact: [
    { field: "first_name", column: "first_name", show: text("first_name") },
    { field: "last_name", column: "last_name", show: text("last_name") },
    { field: "email", column: "email", show: text("email") },
    { field: "phone", column: "phone", show: text("phone") },
    { field: "account", column: "account_id", idColumn: "account_id", show: text("account_name") },
  ],
};

/** What changed between two stored rows of a record; empty when nothing a person sees did. */
export function recordChanges(kind: RecordKind, before: Snapshot, after: Snapshot): FieldChange[] {
  const out: FieldChange[] = [];
  for (const f of FIELDS[kind]) {
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

/** The entry of one record write: "created" (its fields as shown), or "updated" with its changes (none when nothing changed). */
export function recordEntriesOfWrite(kind: RecordKind, newId: () => string, actor: string | null, now: number, before: Snapshot | null, after: Snapshot): NewActivity[] {
  if (before === null) {
    const data: Record<string, string | null> = {};
    for (const f of FIELDS[kind]) {
      data[f.field] = f.show(after);
      if (f.idColumn) data[`${f.field}_id`] = (after[f.idColumn] as string | null) ?? null;
    }
    return [{ id: newId(), type: "created", actor_id: actor, created_at: now, data: JSON.stringify(data) }];
  }
  const changes = recordChanges(kind, before, after);
  return changes.length === 0 ? [] : [{ id: newId(), type: "updated", actor_id: actor, created_at: now, data: JSON.stringify({ changes }) }];
}

/**
 * An import's entry on an account or contact it added or changed: the job, and what it changed
 * (a contact's account by its ids: the import matched it by name, which the entry does not repeat).
 */
export function recordImportEntry(kind: RecordKind, newId: () => string, actor: string | null, now: number, jobId: string, before: Snapshot | null, after: Snapshot): NewActivity {
  const data = before === null ? { job_id: jobId, action: "added" } : { job_id: jobId, action: "updated", changes: recordChanges(kind, before, after) };
  return { id: newId(), type: "imported", actor_id: actor, created_at: now, data: JSON.stringify(data) };
}
