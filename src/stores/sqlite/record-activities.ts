import type { RecordActivityJoined, RecordActivityStore } from "../../crm/activities-repo";
import type { NewActivity } from "../../crm/deal-activity";
import type { RecordKind } from "../../crm/record-activity";
import type { Db } from "../../db/database";

const TABLE: Record<RecordKind, { table: string; column: string }> = {
  account: { table: "account_activities", column: "account_id" },
  contact: { table: "contact_activities", column: "contact_id" },
};

/**
 * Appends an account's or a contact's timeline entries inside the caller's transaction: `n` is
 * the record's next number (one index seek at its last entry), as for a deal (deal-activities.ts).
 */
export function recordActivityWriter(db: Db): (kind: RecordKind, tenantId: string, recordId: string, list: NewActivity[]) => void {
  const add = (Object.keys(TABLE) as RecordKind[]).map((kind) => {
    const { table, column } = TABLE[kind];
    return [kind, db.prepare<never, [string, string, string, string, string | null, number, string]>(
      `INSERT INTO ${table} (tenant_id, ${column}, n, id, type, actor_id, created_at, data)
       VALUES (?1, ?2, (SELECT coalesce(max(n), 0) + 1 FROM ${table} WHERE tenant_id = ?1 AND ${column} = ?2), ?3, ?4, ?5, ?6, ?7)`,
    )] as const;
  });
  const byKind = new Map(add);
  return (kind, tenantId, recordId, list) => {
    for (const a of list) byKind.get(kind)!.run(tenantId, recordId, a.id, a.type, a.actor_id, a.created_at, a.data);
  };
}

/** SQL of an account's and a contact's timelines (src/crm/activities-repo.ts). Every statement names the tenant first. */
export function createSqliteRecordActivityStore(db: Db) {
  const reads = new Map(
    (Object.keys(TABLE) as RecordKind[]).map((kind) => {
      const { table, column } = TABLE[kind];
      const page = db.prepare<RecordActivityJoined, [string, string, number, number]>(
        `SELECT a.id, a.type, a.actor_id, coalesce(u.full_name, u.email) AS actor_name, a.created_at, a.data
           FROM ${table} a LEFT JOIN users u ON u.tenant_id = a.tenant_id AND u.id = a.actor_id
          WHERE a.tenant_id = ?1 AND a.${column} = ?2 ORDER BY a.n DESC LIMIT ?3 OFFSET ?4`,
      );
      const count = db.prepare<{ n: number }, [string, string]>(`SELECT count(*) AS n FROM ${table} WHERE tenant_id = ?1 AND ${column} = ?2`);
      return [kind, { page, count }] as const;
    }),
  );
  const store = {
    async timeline(kind: RecordKind, tenantId: string, recordId: string, limit: number, offset: number) {
      const r = reads.get(kind)!;
      return { rows: r.page.all(tenantId, recordId, limit, offset), total: r.count.get(tenantId, recordId)!.n };
    },
  };
  return store satisfies RecordActivityStore;
}
