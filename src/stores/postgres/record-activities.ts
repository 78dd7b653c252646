import type { RecordActivityJoined, RecordActivityStore } from "../../crm/activities-repo";
import type { NewActivity } from "../../crm/deal-activity";
import type { RecordKind } from "../../crm/record-activity";
import type { Pg, PgTx } from "./database";

const TABLE: Record<RecordKind, { table: string; column: string }> = {
  account: { table: "account_activities", column: "account_id" },
  contact: { table: "contact_activities", column: "contact_id" },
};

/**
 * Appends an account's or a contact's timeline entries inside the caller's transaction, which
 * has locked the record's row (its update, or its insert): the next `n` is the writer's alone.
 */
export async function addRecordActivitiesInTx(tx: PgTx, kind: RecordKind, tenantId: string, recordId: string, list: NewActivity[]): Promise<void> {
  const { table, column } = TABLE[kind];
  for (const a of list) {
    await tx.unsafe(
      `INSERT INTO ${table} (tenant_id, ${column}, n, id, type, actor_id, created_at, data)
       VALUES ($1, $2, (SELECT coalesce(max(n), 0) + 1 FROM ${table} WHERE tenant_id = $1 AND ${column} = $2), $3, $4, $5, $6, $7)`,
      [tenantId, recordId, a.id, a.type, a.actor_id, a.created_at, a.data],
    );
  }
}

/** PostgreSQL twin of src/stores/sqlite/record-activities.ts. */
export function createPostgresRecordActivityStore(pg: Pg) {
  const store = {
    async timeline(kind: RecordKind, tenantId: string, recordId: string, limit: number, offset: number) {
      const { table, column } = TABLE[kind];
      const [rows, count] = await Promise.all([
        pg.unsafe<RecordActivityJoined>(
          `SELECT a.id, a.type, a.actor_id, coalesce(u.full_name, u.email) AS actor_name, a.created_at, a.data
             FROM ${table} a LEFT JOIN users u ON u.tenant_id = a.tenant_id AND u.id = a.actor_id
            WHERE a.tenant_id = $1 AND a.${column} = $2 ORDER BY a.n DESC LIMIT $3 OFFSET $4`,
          [tenantId, recordId, limit, offset],
        ),
        pg.unsafe<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE tenant_id = $1 AND ${column} = $2`, [tenantId, recordId]),
      ]);
      return { rows: [...rows], total: Number(count[0]!.n) };
    },
  };
  return store satisfies RecordActivityStore;
}
