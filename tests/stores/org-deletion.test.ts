import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { TenantDeletionStore } from "../../src/organization/deletion-repo";
import { createPostgresTenantDeletionStore } from "../../src/stores/postgres/tenant-deletion";
import { createSqliteTenantDeletionStore, removedWith } from "../../src/stores/sqlite/tenant-deletion";
import { type Backend, BACKENDS } from "./backends";
import { T0, type OrgBackend, addMember, orgBackend, signup } from "./org-fixture";

/** The store side of deleting an organization (src/organization/deletion-repo.ts), on both backends. */

/** Every table with a tenant_id column and the tables each refers to, from the catalog. */
async function catalog(b: Backend): Promise<{ tables: string[]; refersTo: Map<string, Set<string>> }> {
  const refersTo = new Map<string, Set<string>>();
  if (b.kind === "sqlite") {
    const names = (b.db.query("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all() as Array<{ name: string }>).map((r) => r.name);
    const tables = names.filter((t) => t !== "tenants" && (b.db.query(`SELECT name FROM pragma_table_info('${t}')`).all() as Array<{ name: string }>).some((c) => c.name === "tenant_id"));
    for (const t of tables) refersTo.set(t, new Set((b.db.query(`SELECT "table" AS p FROM pragma_foreign_key_list('${t}')`).all() as Array<{ p: string }>).map((r) => r.p)));
    // Rows a trigger removes with another table's row refer to it (SQLite's timelines: no foreign key).
    for (const [child, parent] of removedWith(b.db)) refersTo.get(child)?.add(parent);
    return { tables, refersTo };
  }
  const tables = (await b.pg.unsafe<{ t: string }>(
    "SELECT c.table_name AS t FROM information_schema.columns c JOIN information_schema.tables x USING (table_schema, table_name) WHERE c.table_schema = current_schema() AND c.column_name = 'tenant_id' AND x.table_type = 'BASE TABLE' AND c.table_name <> 'tenants'",
  )).map((r) => r.t);
  for (const r of await b.pg.unsafe<{ c: string; p: string }>("SELECT cl.relname AS c, pa.relname AS p FROM pg_constraint k JOIN pg_class cl ON cl.oid = k.conrelid JOIN pg_class pa ON pa.oid = k.confrelid WHERE k.contype = 'f'")) {
    if (!refersTo.has(r.c)) refersTo.set(r.c, new Set());
    refersTo.get(r.c)!.add(r.p);
  }
  return { tables, refersTo };
}

for (const backend of BACKENDS) {
  describe(`organization deletion store (${backend.name})`, () => {
    let raw: Backend;
    let b: OrgBackend;
    let store: TenantDeletionStore;
    let acme: Awaited<ReturnType<typeof signup>>;
    let beta: Awaited<ReturnType<typeof signup>>;
    const count = async (table: string, tenantId: string) => Number(await b.value(`SELECT count(*) AS n FROM ${table} WHERE tenant_id = $1`, tenantId));

    beforeAll(async () => {
      raw = await backend.fresh();
      b = orgBackend(raw);
      store = raw.kind === "sqlite" ? createSqliteTenantDeletionStore(raw.db) : createPostgresTenantDeletionStore(raw.pg);
      acme = await signup(b.org, "acme");
      beta = await signup(b.org, "beta");
      for (let i = 0; i < 5; i++) await addMember(b.org, acme, `m${i}@acme.test`);
      await addMember(b.org, beta, "m@beta.test");
    });
    afterAll(() => b.close());

    test("tables: every table with a tenant_id column but tenants, from the catalog; deals first but for what refers to them; each before the tables it refers to", async () => {
      const order = await store.tables();
      const { tables, refersTo } = await catalog(raw);
      expect([...order].sort()).toEqual([...tables].sort());
      // Only what refers to deals (directly or through another such table) goes before them.
      const beforeDeals = order.slice(0, order.indexOf("deals"));
      const refersToDeals = (t: string, seen = new Set<string>()): boolean =>
        [...(refersTo.get(t) ?? [])].some((p) => p === "deals" || (!seen.has(p) && (seen.add(p), refersToDeals(p, seen))));
      expect(order).toContain("deals");
      for (const t of beforeDeals) expect({ t, refersToDeals: refersToDeals(t) }).toEqual({ t, refersToDeals: true });
      // An account's and a contact's timeline go before their records (on SQLite a trigger also removes them with the record).
      for (const [child, parent] of [["account_activities", "accounts"], ["contact_activities", "contacts"]]) {
        expect(order).toContain(child);
        expect(order.indexOf(child)).toBeLessThan(order.indexOf(parent!));
      }
      for (const t of order) {
        for (const parent of refersTo.get(t) ?? []) if (parent !== t && order.includes(parent)) expect({ t, before: order.indexOf(t) < order.indexOf(parent) }).toEqual({ t, before: true });
      }
    });

    test("begin disables the organization and writes its marker; unknown ids are refused; update replaces the state", async () => {
      expect(await store.begin("no-such-tenant", "{}", T0)).toBe(false);
      expect(await store.pending()).toEqual([]);
      expect(await store.begin(acme.tenantId, '{"n":1}', T0 + 5)).toBe(true);
      expect((await b.org.tenants.byId(acme.tenantId))!.disabled_at).toBe(T0 + 5);
      expect((await b.org.tenants.byId(beta.tenantId))!.disabled_at).toBeNull();
      await store.update(acme.tenantId, '{"n":2}');
      expect(await store.pending()).toEqual([{ tenantId: acme.tenantId, state: '{"n":2}' }]);
    });

    test("deleteSome removes at most `limit` rows of the organization a batch, says when none are left, and leaves the others'", async () => {
      expect(await count("users", acme.tenantId)).toBe(6);
      const first = await store.deleteSome(acme.tenantId, "sessions", 0, 100);
      expect(first.next).toBeNull();
      const a = await store.deleteSome(acme.tenantId, "users", 0, 4);
      expect(a).toEqual({ deleted: 4, next: 0 });
      expect(await count("users", acme.tenantId)).toBe(2);
      const c = await store.deleteSome(acme.tenantId, "users", a.next!, 4);
      expect(c).toEqual({ deleted: 2, next: null });
      expect(await count("users", beta.tenantId)).toBe(2);
      // The rest, table by table, as the service walks them.
      for (const t of await store.tables()) {
        let from = 0;
        for (;;) {
          const r = await store.deleteSome(acme.tenantId, t, from, 50);
          if (r.next === null) break;
          from = r.next;
        }
      }
      for (const t of await store.tables()) expect({ t, n: await count(t, acme.tenantId) }).toEqual({ t, n: 0 });
      expect(await count("users", beta.tenantId)).toBe(2);
    });

    test("finish removes the tenants row, the marker and the rate-limit windows that name it", async () => {
      const sql = raw.kind === "sqlite" ? "INSERT INTO rate_limits (key, window_start, window_ms, count) VALUES (?1, 0, 1000, 1)" : "INSERT INTO rate_limits (key, window_start, window_ms, count) VALUES ($1, 0, 1000, 1)";
      for (const key of [`imports:${acme.tenantId}:u1`, `imports:${beta.tenantId}:u1`]) {
        if (raw.kind === "sqlite") raw.db.query(sql).run(key);
        else await raw.pg.unsafe(sql, [key]);
      }
      await store.finish(acme.tenantId);
      expect(await b.org.tenants.byId(acme.tenantId)).toBeNull();
      expect(await store.pending()).toEqual([]);
      expect(Number(await b.value("SELECT count(*) AS n FROM rate_limits WHERE key LIKE $1", `%${acme.tenantId}%`))).toBe(0);
      expect(Number(await b.value("SELECT count(*) AS n FROM rate_limits WHERE key LIKE $1", `%${beta.tenantId}%`))).toBe(1);
      expect(await b.org.tenants.byId(beta.tenantId)).not.toBeNull();
    });
  });
}
