import type { ActivityJoined, DealActivityStore, NoteJoined, NoteRow } from "../../crm/activities-repo";
import type { NewActivity } from "../../crm/deal-activity";
import { type Db, writeTxAsync } from "../../db/database";
import { keyCreatedInTx } from "./idempotency";
import { searchTextOf } from "../../crm/model";
import { noteTextOfDeal } from "../../db/deal-note-text";

/**
 * Appends timeline entries inside the caller's transaction: `n` is the deal's next number (one
 * index seek at the deal's last entry). One prepared statement per connection.
 */
export function activityWriter(db: Db): (tenantId: string, dealId: string, a: NewActivity) => void {
  const add = db.prepare<never, [string, string, string, string, string | null, number, string]>(
    `INSERT INTO deal_activities (tenant_id, deal_id, n, id, type, actor_id, created_at, data)
     VALUES (?1, ?2, (SELECT coalesce(max(n), 0) + 1 FROM deal_activities WHERE tenant_id = ?1 AND deal_id = ?2), ?3, ?4, ?5, ?6, ?7)`,
  );
  return (tenantId, dealId, a) => void add.run(tenantId, dealId, a.id, a.type, a.actor_id, a.created_at, a.data);
}

/** SQL of a deal's timeline and notes (src/crm/activities-repo.ts). Every statement names the tenant first. */
export function createSqliteDealActivityStore(db: Db) {
  const write = activityWriter(db);
  const page = db.prepare<ActivityJoined, [string, string, number, number]>(
    `SELECT a.id, a.type, a.actor_id, coalesce(u.full_name, u.email) AS actor_name, a.created_at, a.data,
            nt.body AS note_body, nt.updated_at AS note_updated_at
       FROM deal_activities a
       LEFT JOIN users u ON u.tenant_id = a.tenant_id AND u.id = a.actor_id
       LEFT JOIN deal_notes nt ON a.type = 'note' AND nt.tenant_id = a.tenant_id AND nt.id = a.id
      WHERE a.tenant_id = ?1 AND a.deal_id = ?2 ORDER BY a.n DESC LIMIT ?3 OFFSET ?4`,
  );
  const count = db.prepare<{ n: number }, [string, string]>("SELECT count(*) AS n FROM deal_activities WHERE tenant_id = ?1 AND deal_id = ?2");
  const noteById = db.prepare<NoteJoined, [string, string]>(
    `SELECT nt.*, coalesce(u.full_name, u.email) AS author_name FROM deal_notes nt
       LEFT JOIN users u ON u.tenant_id = nt.tenant_id AND u.id = nt.author_id WHERE nt.tenant_id = ?1 AND nt.id = ?2`,
  );
  const dealExists = db.prepare<{ one: number }, [string, string]>("SELECT 1 AS one FROM deals WHERE tenant_id = ?1 AND id = ?2");
  const insertNote = db.prepare<never, [string, string, string, string, string, number]>(
    "INSERT INTO deal_notes (tenant_id, id, deal_id, author_id, body, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)",
  );
  const updateNote = db.prepare<never, [string, string, string, number]>("UPDATE deal_notes SET body = ?3, updated_at = ?4 WHERE tenant_id = ?1 AND id = ?2");
  const noteDeal = db.prepare<{ deal_id: string }, [string, string]>("SELECT deal_id FROM deal_notes WHERE tenant_id = ?1 AND id = ?2");
  const deleteNote = db.prepare<never, [string, string]>("DELETE FROM deal_notes WHERE tenant_id = ?1 AND id = ?2");
  // Within the deal's entries (its own key range): a note's entry has the note's id.
  const deleteEntry = db.prepare<never, [string, string, string]>("DELETE FROM deal_activities WHERE tenant_id = ?1 AND deal_id = ?2 AND id = ?3 AND type = 'note'");
  const dealText = db.prepare<{ title: string; notes: string | null; account_name: string; contact_name: string | null; note_text: string }, [string, string]>(
    "SELECT title, notes, account_name, contact_name, note_text FROM deals WHERE tenant_id = ?1 AND id = ?2",
  );
  const setNoteText = db.prepare<never, [string, string, string, string]>("UPDATE deals SET note_text = ?3, search_text = ?4 WHERE tenant_id = ?1 AND id = ?2");

  /**
   * The deal's notes' text and search text again from its notes, in the note write's transaction.
   * Only those two columns: the deal's updated_at, timeline and events are the note's own business.
   */
  function refreshNoteTextInTx(tenantId: string, dealId: string): void {
    const d = dealText.get(tenantId, dealId);
    if (!d) return;
    const text = noteTextOfDeal(db, tenantId, dealId);
    if (text !== d.note_text) setNoteText.run(tenantId, dealId, text, searchTextOf(d.title, d.notes, d.account_name, d.contact_name, text));
  }

  const store = {
    async timeline(tenantId: string, dealId: string, limit: number, offset: number) {
      return { rows: page.all(tenantId, dealId, limit, offset), total: count.get(tenantId, dealId)!.n };
    },
    note: async (tenantId: string, id: string) => noteById.get(tenantId, id),
    async insertNote(n: NoteRow): Promise<boolean> {
      return writeTxAsync(db, () => {
        if (!dealExists.get(n.tenant_id, n.deal_id)) return false;
        insertNote.run(n.tenant_id, n.id, n.deal_id, n.author_id, n.body, n.created_at);
        write(n.tenant_id, n.deal_id, { id: n.id, type: "note", actor_id: n.author_id, created_at: n.created_at, data: "{}" });
        refreshNoteTextInTx(n.tenant_id, n.deal_id);
        keyCreatedInTx(db, n.id);
        return true;
      });
    },
    async updateNote(tenantId: string, id: string, body: string, now: number): Promise<void> {
      await writeTxAsync(db, () => {
        const n = noteDeal.get(tenantId, id);
        if (!n) return;
        updateNote.run(tenantId, id, body, now);
        refreshNoteTextInTx(tenantId, n.deal_id);
      });
    },
    async removeNote(tenantId: string, id: string): Promise<void> {
      await writeTxAsync(db, () => {
        const n = noteDeal.get(tenantId, id);
        if (!n) return;
        deleteEntry.run(tenantId, n.deal_id, id);
        deleteNote.run(tenantId, id);
        refreshNoteTextInTx(tenantId, n.deal_id);
      });
    },
  };
  return store satisfies DealActivityStore;
}
