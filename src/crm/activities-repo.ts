/** A timeline entry as read: the actor's name and, for a note's entry, the note's current text joined. */
export interface ActivityJoined {
  id: string;
  type: string;
  actor_id: string | null;
  actor_name: string | null;
  created_at: number;
  data: string;
  /** A note's entry only (null otherwise). */
  note_body: string | null;
  note_updated_at: number | null;
}

export interface NoteRow {
  tenant_id: string;
  id: string;
  deal_id: string;
  author_id: string;
  body: string;
  created_at: number;
  updated_at: number;
}

export interface NoteJoined extends NoteRow {
  author_name: string | null;
}

/**
 * A deal's timeline and notes. The deal writes themselves add their entries (deals-repo.ts, in
 * their own transaction); a note's create and delete add and remove its entry in theirs.
 */
export interface DealActivityStore {
  /** Newest first. */
  timeline(tenantId: string, dealId: string, limit: number, offset: number): Promise<{ rows: ActivityJoined[]; total: number }>;
  note(tenantId: string, id: string): Promise<NoteJoined | null>;
  /** False when the deal is not the tenant's (nothing written). Marks an Idempotency-Key held by the caller. */
  insertNote(n: NoteRow): Promise<boolean>;
  updateNote(tenantId: string, id: string, body: string, now: number): Promise<void>;
  /** The note and its timeline entry. */
  removeNote(tenantId: string, id: string): Promise<void>;
}

/** An account's or a contact's timeline entry as read (its actor's name joined). */
export type RecordActivityJoined = Omit<ActivityJoined, "note_body" | "note_updated_at">;

/**
 * An account's and a contact's timelines. Their writes add the entries (CrmStore's insert and
 * update of accounts and contacts, in their own transaction); the record's deletion removes them.
 */
export interface RecordActivityStore {
  /** Newest first. */
  timeline(kind: "account" | "contact", tenantId: string, recordId: string, limit: number, offset: number): Promise<{ rows: RecordActivityJoined[]; total: number }>;
}
