import type { Db } from "./database";

/**
 * How much of a deal's notes the deal search covers: the newest 20,000 characters (UTF-16 units)
 * of their bodies, newest first, joined by line breaks (deals.note_text, a part of search_text).
 * A bound, so that a note's write on a deal of hundreds of notes re-indexes at most this much.
 * Here rather than in the CRM's model because migration 33's backfill builds the same text.
 */
export const MAX_NOTE_TEXT = 20_000;

/** A deal's notes' text from its bodies newest first; stops reading once the bound is reached. */
export function noteTextOf(bodiesNewestFirst: Iterable<string>): string {
  let out = "";
  for (const body of bodiesNewestFirst) {
    out = out === "" ? body : `${out}\n${body}`;
    if (out.length >= MAX_NOTE_TEXT) break;
  }
  if (out.length <= MAX_NOTE_TEXT) return out;
  // Cut between two UTF-16 units, never inside a surrogate pair.
  const code = out.charCodeAt(MAX_NOTE_TEXT - 1);
  return out.slice(0, code >= 0xd800 && code <= 0xdbff ? MAX_NOTE_TEXT - 1 : MAX_NOTE_TEXT);
}

/**
 * A deal's notes' text as stored (SQLite): its notes read newest first, one at a time, until the
 * bound is reached (deal_notes_newest holds the order), so a deal's hundreds of notes are never all read.
 */
export function noteTextOfDeal(db: Db, tenantId: string, dealId: string): string {
  const bodies = db.query<{ body: string }, [string, string]>(
    "SELECT body FROM deal_notes INDEXED BY deal_notes_newest WHERE tenant_id = ?1 AND deal_id = ?2 ORDER BY created_at DESC, id DESC",
  );
  return noteTextOf((function* () {
    for (const r of bodies.iterate(tenantId, dealId)) yield r.body;
  })());
}

/**
 * Migration 33's data work: each deal with notes gets its notes' text, and its search text that
 * text after its own (search_text is lower-cased in JS, and the line break between the parts keeps
 * lower-casing each part alone the same as lower-casing the whole: see searchTextOf in src/crm/model.ts).
 */
export function backfillNoteText(db: Db): void {
  const deals = db.query("SELECT DISTINCT tenant_id, deal_id FROM deal_notes").all() as Array<{ tenant_id: string; deal_id: string }>;
  const set = db.query("UPDATE deals SET note_text = ?3, search_text = search_text || char(10) || ?4 WHERE tenant_id = ?1 AND id = ?2 AND note_text = ''");
  for (const d of deals) {
    const text = noteTextOfDeal(db, d.tenant_id, d.deal_id);
    if (text !== "") set.run(d.tenant_id, d.deal_id, text, text.toLowerCase());
  }
}
