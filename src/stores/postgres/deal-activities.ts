import type { ActivityJoined, DealActivityStore, NoteJoined, NoteRow } from "../../crm/activities-repo";
import { MAX_NOTE_TEXT, noteTextOf, searchTextOf } from "../../crm/model";
import type { Pg, PgTx } from "./database";
import { addActivitiesInTx, lockCrmShared } from "./deals";
import { keyCreatedInTx } from "./idempotency";

/** A deal's notes' bodies newest first, read a few at a time until the search's bound is reached. */
async function* newestBodies(tx: PgTx, tenantId: string, dealId: string): AsyncGenerator<string> {
  let after: { created_at: number; id: string } | null = null;
  for (;;) {
    const rows: Array<{ body: string; created_at: number; id: string }> = after === null
      ? await tx.all`SELECT body, created_at, id FROM deal_notes WHERE tenant_id = ${tenantId} AND deal_id = ${dealId}
          ORDER BY created_at DESC, id DESC LIMIT 16`
      : await tx.all`SELECT body, created_at, id FROM deal_notes WHERE tenant_id = ${tenantId} AND deal_id = ${dealId}
          AND (created_at, id) < (${after.created_at}, ${after.id}) ORDER BY created_at DESC, id DESC LIMIT 16`;
    for (const r of rows) yield r.body;
    if (rows.length < 16) return;
    after = rows[rows.length - 1]!;
  }
}

/**
 * The deal's notes' text and search text again from its notes, in the note write's transaction,
 * which holds the deal's row locked (two note writes of one deal take turns, each reading the
 * other's note). Only those two columns: the deal's updated_at, timeline and events stay as they were.
 *
 * The gram counters follow from the row trigger, which appends the text before and after to
 * deal_search_pending (schema 73) for the fold to count: when it listed and compared the grams of
 * a 20,000-character text itself, in PL/pgSQL, it took 76-83 ms (EXPLAIN ANALYZE).
 */
async function refreshNoteTextInTx(tx: PgTx, tenantId: string, dealId: string): Promise<void> {
  type Current = { title: string; notes: string | null; account_name: string; contact_name: string | null; note_text: string };
  const d = await tx.one<Current>`SELECT title, notes, account_name, contact_name, note_text FROM deals WHERE tenant_id = ${tenantId} AND id = ${dealId}`;
  if (!d) return;
  const bodies: string[] = [];
  let length = 0;
  for await (const b of newestBodies(tx, tenantId, dealId)) {
    bodies.push(b);
    length += b.length + 1;
    if (length > MAX_NOTE_TEXT) break;
  }
  const text = noteTextOf(bodies);
  if (text === d.note_text) return;
  const searchText = searchTextOf(d.title, d.notes, d.account_name, d.contact_name, text);
  await tx.run`UPDATE deals SET note_text = ${text}, search_text = ${searchText} WHERE tenant_id = ${tenantId} AND id = ${dealId}`;
}

/**
 * Schema 72's data step: each deal with notes gets its notes' text, and its search text with it.
 * Run after schema 73 (migrate.ts), whose trigger counts the new texts through pending rows; a
 * database already at 72 finds every text as it is (one read a deal with notes, no write).
 */
export async function backfillNoteTextInTx(tx: PgTx): Promise<void> {
  const deals = await tx.all<{ tenant_id: string; deal_id: string }>`SELECT DISTINCT tenant_id, deal_id FROM deal_notes`;
  for (const d of deals) await refreshNoteTextInTx(tx, d.tenant_id, d.deal_id);
}

/** The note's deal locked for the note's write (after the tenant's CRM lock, as every deal write); null when the note is gone. */
async function lockNoteDeal(tx: PgTx, tenantId: string, id: string): Promise<string | null> {
  await lockCrmShared(tx, tenantId);
  const n = await tx.one<{ deal_id: string }>`SELECT deal_id FROM deal_notes WHERE tenant_id = ${tenantId} AND id = ${id}`;
  if (!n) return null;
  await tx.run`SELECT 1 FROM deals WHERE tenant_id = ${tenantId} AND id = ${n.deal_id} FOR UPDATE`;
  return n.deal_id;
}

/** PostgreSQL twin of src/stores/sqlite/deal-activities.ts. */
export function createPostgresDealActivityStore(pg: Pg) {
  const store = {
    async timeline(tenantId: string, dealId: string, limit: number, offset: number) {
      const rows = await pg.all<ActivityJoined>`
        SELECT a.id, a.type, a.actor_id, coalesce(u.full_name, u.email) AS actor_name, a.created_at, a.data,
               nt.body AS note_body, nt.updated_at AS note_updated_at
          FROM deal_activities a
          LEFT JOIN users u ON u.tenant_id = a.tenant_id AND u.id = a.actor_id
          LEFT JOIN deal_notes nt ON a.type = 'note' AND nt.tenant_id = a.tenant_id AND nt.id = a.id
         WHERE a.tenant_id = ${tenantId} AND a.deal_id = ${dealId} ORDER BY a.n DESC LIMIT ${limit} OFFSET ${offset}`;
      const total = await pg.one<{ n: number }>`SELECT count(*) AS n FROM deal_activities WHERE tenant_id = ${tenantId} AND deal_id = ${dealId}`;
      return { rows, total: total!.n };
    },
    note: (tenantId: string, id: string) =>
      pg.one<NoteJoined>`
        SELECT nt.*, coalesce(u.full_name, u.email) AS author_name FROM deal_notes nt
          LEFT JOIN users u ON u.tenant_id = nt.tenant_id AND u.id = nt.author_id WHERE nt.tenant_id = ${tenantId} AND nt.id = ${id}`,
    async insertNote(n: NoteRow): Promise<boolean> {
      return pg.begin(async (tx) => {
        // The deal's row locked: its next entry number is ours alone (as a deal write's).
        await lockCrmShared(tx, n.tenant_id);
        const deal = await tx.one`SELECT 1 AS one FROM deals WHERE tenant_id = ${n.tenant_id} AND id = ${n.deal_id} FOR UPDATE`;
        if (!deal) return false;
        await tx.run`
          INSERT INTO deal_notes (tenant_id, id, deal_id, author_id, body, created_at, updated_at)
          VALUES (${n.tenant_id}, ${n.id}, ${n.deal_id}, ${n.author_id}, ${n.body}, ${n.created_at}, ${n.created_at})`;
        await addActivitiesInTx(tx, n.tenant_id, n.deal_id, [{ id: n.id, type: "note", actor_id: n.author_id, created_at: n.created_at, data: "{}" }]);
        await refreshNoteTextInTx(tx, n.tenant_id, n.deal_id);
        await keyCreatedInTx(tx, n.id);
        return true;
      });
    },
    async updateNote(tenantId: string, id: string, body: string, now: number): Promise<void> {
      await pg.begin(async (tx) => {
        const dealId = await lockNoteDeal(tx, tenantId, id);
        if (dealId === null) return;
        await tx.run`UPDATE deal_notes SET body = ${body}, updated_at = ${now} WHERE tenant_id = ${tenantId} AND id = ${id}`;
        await refreshNoteTextInTx(tx, tenantId, dealId);
      });
    },
    async removeNote(tenantId: string, id: string): Promise<void> {
      await pg.begin(async (tx) => {
        if ((await lockNoteDeal(tx, tenantId, id)) === null) return;
        const n = await tx.one<{ deal_id: string }>`DELETE FROM deal_notes WHERE tenant_id = ${tenantId} AND id = ${id} RETURNING deal_id`;
        if (!n) return;
        await tx.run`DELETE FROM deal_activities WHERE tenant_id = ${tenantId} AND deal_id = ${n.deal_id} AND id = ${id} AND type = 'note'`;
        await refreshNoteTextInTx(tx, tenantId, n.deal_id);
      });
    },
  };
  return store satisfies DealActivityStore;
}
