import { type DeletionMarker, type TenantDeletionStore, deletionOrder } from "../../organization/deletion-repo";
import type { Pg } from "./database";
import { directoryDeleteTenantInTx } from "./user-directory";

const MARKER = "tenant_deletion:";
const q = (name: string) => `"${name.replaceAll('"', '""')}"`;

/**
 * Deleting an organization on PostgreSQL, in batches of short transactions like SQLite's (a long
 * one would hold row locks and bloat the WAL of a replica). The tables come from the catalog:
 * every table of the schema with a tenant_id column; a batch deletes by the table's primary key
 * (ctid when it has none), so it also works where ctid means nothing across nodes.
 */
export function createPostgresTenantDeletionStore(pg: Pg): TenantDeletionStore {
  const statements = new Map<string, string>();

  async function statementOf(table: string): Promise<string> {
    const known = statements.get(table);
    if (known) return known;
    const pk = await pg.unsafe<{ name: string }>(
      `SELECT a.attname AS name FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
        WHERE i.indrelid = to_regclass($1) AND i.indisprimary ORDER BY array_position(i.indkey, a.attnum)`,
      [q(table)],
    );
    const key = pk.length > 0 ? pk.map((c) => q(c.name)) : ["ctid"];
    const keyList = key.length === 1 ? key[0]! : `(${key.join(", ")})`;
    const sql = `DELETE FROM ${q(table)} WHERE ${keyList} IN (SELECT ${key.join(", ")} FROM ${q(table)} WHERE tenant_id = $1 LIMIT $2)`;
    statements.set(table, sql);
    return sql;
  }

  return {
    async begin(tenantId, state, now) {
      return pg.begin(async (tx) => {
        const changed = await tx.run`UPDATE tenants SET disabled_at = coalesce(disabled_at, ${now}) WHERE id = ${tenantId}`;
        if (changed === 0) return false;
        await tx.run`INSERT INTO settings (key, value) VALUES (${MARKER + tenantId}, ${state}) ON CONFLICT (key) DO UPDATE SET value = excluded.value`;
        return true;
      });
    },
    async update(tenantId, state) {
      await pg.run`UPDATE settings SET value = ${state} WHERE key = ${MARKER + tenantId}`;
    },
    async pending(): Promise<DeletionMarker[]> {
      const rows = await pg.all<{ key: string; value: string }>`SELECT key, value FROM settings WHERE starts_with(key, ${MARKER}) ORDER BY key COLLATE "C"`;
      return rows.map((r) => ({ tenantId: r.key.slice(MARKER.length), state: r.value }));
    },
    async tables() {
      const tables = (await pg.all<{ name: string }>`
        SELECT c.table_name AS name FROM information_schema.columns c
          JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
         WHERE c.table_schema = current_schema() AND c.column_name = 'tenant_id' AND t.table_type = 'BASE TABLE' AND c.table_name <> 'tenants'
         ORDER BY c.table_name COLLATE "C"`).map((r) => r.name);
      const fks = await pg.all<{ child: string; parent: string }>`
        SELECT cl.relname AS child, pa.relname AS parent FROM pg_constraint k
          JOIN pg_class cl ON cl.oid = k.conrelid JOIN pg_class pa ON pa.oid = k.confrelid
         WHERE k.contype = 'f' AND cl.relnamespace = to_regnamespace(current_schema())`;
      const refersTo = new Map(tables.map((t) => [t, new Set<string>()]));
      for (const f of fks) if (f.child !== f.parent && tables.includes(f.parent)) refersTo.get(f.child)?.add(f.parent);
      return deletionOrder(tables, refersTo);
    },
    async deleteSome(tenantId, table, _from, limit) {
      const sql = await statementOf(table);
      const deleted = await pg.begin(async (tx) => (await tx.sql.unsafe(sql, [tenantId, limit]) as unknown as { count: number }).count);
      return { deleted, next: deleted < limit ? null : 0 };
    },
    async finish(tenantId) {
      await pg.begin(async (tx) => {
        await tx.run`DELETE FROM rate_limits WHERE strpos(key, ${tenantId}) > 0`;
        // The batches emptied user_directory with every other table; said again here, with the
        // tenants row, so the directory's rule holds in this file too (every account's removal files it).
        await directoryDeleteTenantInTx(tx, tenantId);
        await tx.run`DELETE FROM tenants WHERE id = ${tenantId}`;
        await tx.run`DELETE FROM settings WHERE key = ${MARKER + tenantId}`;
      });
    },
  };
}
