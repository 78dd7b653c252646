import type { ActivityJoined, DealActivityStore, NoteJoined, NoteRow } from "../../crm/activities-repo";
import type { Pg } from "./database";
import { addActivitiesInTx, lockCrmShared } from "./deals";
import { keyCreatedInTx } from "./idempotency";

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
        await keyCreatedInTx(tx, n.id);
        return true;
      });
    },
    async updateNote(tenantId: string, id: string, body: string, now: number): Promise<void> {
      await pg.run`UPDATE deal_notes SET body = ${body}, updated_at = ${now} WHERE tenant_id = ${tenantId} AND id = ${id}`;
    },
    async removeNote(tenantId: string, id: string): Promise<void> {
      await pg.begin(async (tx) => {
        const n = await tx.one<{ deal_id: string }>`DELETE FROM deal_notes WHERE tenant_id = ${tenantId} AND id = ${id} RETURNING deal_id`;
        if (n) await tx.run`DELETE FROM deal_activities WHERE tenant_id = ${tenantId} AND deal_id = ${n.deal_id} AND id = ${id} AND type = 'note'`;
      });
    },
  };
  return store satisfies DealActivityStore;
}
