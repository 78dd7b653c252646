import { type Db, writeTxAsync } from "../../db/database";
import { type DeletionMarker, type TenantDeletionStore, deletionOrder } from "../../organization/deletion-repo";

/** The marker's key in settings: one per organization being deleted. */
const MARKER = "tenant_deletion:";
/** Rowids a batch looks at in a table with no index starting with tenant_id (the mail outbox): one window a batch. */
const ROWID_WINDOW = 20_000;

interface TablePlan {
  /** Deletes a batch; answers how many went and where the next starts. */
  deleteSome(tenantId: string, from: number, limit: number): { deleted: number; next: number | null };
}

const q = (name: string) => `"${name.replaceAll('"', '""')}"`;

/**
 * Tables whose rows a trigger removes with another table's row (`AFTER DELETE ON parent ...
 * DELETE FROM child`), as [child, parent]: SQLite keeps a deal's, an account's and a contact's
 * timeline by trigger, not by foreign key (a cascade would look the rows up outside any
 * tenant-first index), and such a child is deleted before its parent as a referring table is.
 */
export function removedWith(db: Db): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const { sql } of db.query("SELECT sql FROM sqlite_schema WHERE type = 'trigger'").all() as Array<{ sql: string }>) {
    const parent = /AFTER\s+DELETE\s+ON\s+"?(\w+)"?/i.exec(sql)?.[1];
    if (!parent) continue;
    for (const m of sql.matchAll(/DELETE\s+FROM\s+"?(\w+)"?/gi)) out.push([m[1]!, parent]);
  }
  return out;
}

/**
 * Deleting an organization on SQLite, in batches that each hold the writer a few milliseconds.
 * The tables come from sqlite_schema: every table with a tenant_id column. A table with an index
 * (or key) that starts with tenant_id is walked through it (`LIMIT n` of the organization's rows
 * a batch); one without (the mail outbox, a system queue) by rowid windows.
 */
export function createSqliteTenantDeletionStore(db: Db): TenantDeletionStore {
  const plans = new Map<string, TablePlan>();

  function columns(table: string): Array<{ name: string; pk: number }> {
    return db.query(`PRAGMA table_info(${q(table)})`).all() as Array<{ name: string; pk: number }>;
  }

  function tenantTables(): string[] {
    const names = (db.query("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as Array<{ name: string }>).map((r) => r.name);
    return names.filter((t) => t !== "tenants" && columns(t).some((c) => c.name === "tenant_id"));
  }

  function hasTenantIndex(table: string): boolean {
    const indexes = db.query(`PRAGMA index_list(${q(table)})`).all() as Array<{ name: string }>;
    return indexes.some((i) => (db.query(`PRAGMA index_info(${q(i.name)})`).all() as Array<{ seqno: number; name: string }>).some((c) => c.seqno === 0 && c.name === "tenant_id"));
  }

  function planOf(table: string): TablePlan {
    const known = plans.get(table);
    if (known) return known;
    const withoutRowid = /WITHOUT\s+ROWID/i.test((db.query("SELECT sql FROM sqlite_schema WHERE name = ?1").get(table) as { sql: string }).sql);
    const key = withoutRowid
      ? columns(table).filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk).map((c) => q(c.name))
      : ["rowid"];
    let plan: TablePlan;
    if (withoutRowid || hasTenantIndex(table)) {
      const keyList = key.length === 1 ? key[0]! : `(${key.join(", ")})`;
      const stmt = db.prepare(`DELETE FROM ${q(table)} WHERE ${keyList} IN (SELECT ${key.join(", ")} FROM ${q(table)} WHERE tenant_id = ?1 LIMIT ?2)`);
      plan = {
        deleteSome: (tenantId, _from, limit) => {
          const deleted = stmt.run(tenantId, limit).changes;
          return { deleted, next: deleted < limit ? null : 0 };
        },
      };
    } else {
      // No index serves tenant_id: each batch looks at one window of rowids (a bounded scan).
      const stmt = db.prepare(`DELETE FROM ${q(table)} WHERE rowid > ?1 AND rowid <= ?2 AND tenant_id = ?3`);
      const last = db.prepare(`SELECT coalesce(max(rowid), 0) AS m FROM ${q(table)}`);
      plan = {
        deleteSome: (tenantId, from, limit) => {
          const to = from + Math.max(limit * 10, ROWID_WINDOW);
          const deleted = stmt.run(from, to, tenantId).changes;
          return { deleted, next: to >= (last.get() as { m: number }).m ? null : to };
        },
      };
    }
    plans.set(table, plan);
    return plan;
  }

  const getMarker = db.prepare<{ value: string }, [string]>("SELECT value FROM settings WHERE key = ?1");
  const putMarker = db.prepare<never, [string, string]>("INSERT INTO settings (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value");

  return {
    async begin(tenantId, state, now) {
      return writeTxAsync(db, () => {
        const changed = db.prepare("UPDATE tenants SET disabled_at = coalesce(disabled_at, ?2) WHERE id = ?1").run(tenantId, now).changes;
        if (changed === 0) return false;
        putMarker.run(MARKER + tenantId, state);
        return true;
      });
    },
    async update(tenantId, state) {
      await writeTxAsync(db, () => {
        if (getMarker.get(MARKER + tenantId)) putMarker.run(MARKER + tenantId, state);
      });
    },
    async pending(): Promise<DeletionMarker[]> {
      const rows = db.query("SELECT key, value FROM settings WHERE key >= ?1 AND key < ?2 ORDER BY key").all(MARKER, `${MARKER}\uffff`) as Array<{ key: string; value: string }>;
      return rows.map((r) => ({ tenantId: r.key.slice(MARKER.length), state: r.value }));
    },
    async tables() {
      const tables = tenantTables();
      const refersTo = new Map(tables.map((t) => [
        t,
        new Set((db.query(`PRAGMA foreign_key_list(${q(t)})`).all() as Array<{ table: string }>).map((f) => f.table).filter((p) => p !== t && tables.includes(p))),
      ]));
      for (const [child, parent] of removedWith(db)) if (child !== parent && tables.includes(child) && tables.includes(parent)) refersTo.get(child)!.add(parent);
      return deletionOrder(tables, refersTo);
    },
    async deleteSome(tenantId, table, from, limit) {
      const plan = planOf(table);
      return writeTxAsync(db, () => plan.deleteSome(tenantId, from, limit));
    },
    async finish(tenantId) {
      await writeTxAsync(db, () => {
        // Rate-limit windows keyed by the organization (e.g. imports per admin: tenant:user).
        db.prepare("DELETE FROM rate_limits WHERE instr(key, ?1) > 0").run(tenantId);
        db.prepare("DELETE FROM tenants WHERE id = ?1").run(tenantId);
        db.prepare("DELETE FROM settings WHERE key = ?1").run(MARKER + tenantId);
      });
    },
  };
}
