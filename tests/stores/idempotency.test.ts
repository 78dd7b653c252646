/**
 * Contract of the Idempotency-Key store on every backend (issue 28 item 6): claims, takeovers,
 * answers, releases, the mark written inside the create's own transaction, and the bounded expiry
 * sweep. The same calls give the same results on SQLite and PostgreSQL.
 */
import { createSqliteEventsStore } from "../../src/stores/sqlite/events";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { CrmStore } from "../../src/crm/repo";
import type { IdempotencyHold, IdempotencyStore } from "../../src/idempotency/repo";
import { IdempotencyKeyLost, withHeldKey } from "../../src/idempotency/scope";
import { PURGE_ROWS_PER_STEP, PURGE_TENANTS_PER_STEP } from "../../src/idempotency/service";
import { createPostgresCrmStore } from "../../src/stores/postgres/crm";
import { createPostgresIdempotencyStore } from "../../src/stores/postgres/idempotency";
import { createSqliteCrmStore } from "../../src/stores/sqlite/crm";
import { createSqliteIdempotencyStore } from "../../src/stores/sqlite/idempotency";
import { BACKENDS, type Backend } from "./backends";

const DAY = 86_400_000;
const hold = (key: string, claim: string, tenantId = "t1", userId = "u1"): IdempotencyHold => ({ tenantId, userId, key, claim });
const account = (tenant_id: string, id: string) => ({ id, tenant_id, name: id, domain: null, industry: null, created_at: 1, updated_at: 1 });

for (const backend of BACKENDS) {
  describe(`Idempotency-Key store (${backend.name})`, () => {
    let b: Backend;
    let keys: IdempotencyStore;
    let crm: CrmStore;
    let rows: <T>(sql: string, ...params: unknown[]) => Promise<T[]>;
    beforeAll(async () => {
      b = await backend.fresh();
      if (b.kind === "sqlite") {
        const db = b.db;
        keys = createSqliteIdempotencyStore(db);
        crm = createSqliteCrmStore(db, createSqliteEventsStore(db).appendInTx);
        rows = async <T>(sql: string, ...params: unknown[]) => db.query(sql.replace(/\$(\d+)/g, "?$1")).all(...(params as [])) as T[];
      } else {
        const pg = b.pg;
        keys = createPostgresIdempotencyStore(pg);
        crm = createPostgresCrmStore(pg);
        rows = async <T>(sql: string, ...params: unknown[]) => [...(await pg.unsafe<T>(sql, params))];
      }
      for (const t of ["t1", "t2"]) await rows(`INSERT INTO tenants (id, name, subdomain, created_at) VALUES ($1, $1, $1, 1)`, t);
    });
    afterAll(() => b.close());

    test("the first claim holds the key; another claim sees it running; the answer is then kept", async () => {
      expect(await keys.claim(hold("k1", "c1"), "h1", 1_000, 1_000 + DAY, 0)).toBeNull();
      expect(await keys.claim(hold("k1", "c2"), "h1", 1_001, 1_001 + DAY, 0)).toMatchObject({ state: "running", claim: "c1", request_hash: "h1" });
      await keys.finish(hold("k1", "c1"), "c1", 201, '{"id":"x"}');
      expect(await keys.claim(hold("k1", "c3"), "h1", 1_002, 1_002 + DAY, 0)).toMatchObject({ state: "done", status: 201, answer: '{"id":"x"}' });
      // Another hash is answered the row too: the service refuses it (409 idempotency_key_reused).
      expect(await keys.claim(hold("k1", "c4"), "h2", 1_003, 1_003 + DAY, 0)).toMatchObject({ state: "done", request_hash: "h1" });
    });

    test("keys are per organization and per user", async () => {
      expect(await keys.claim(hold("k1", "d1", "t1", "u2"), "h1", 1_000, 1_000 + DAY, 0)).toBeNull();
      expect(await keys.claim(hold("k1", "d2", "t2", "u1"), "h1", 1_000, 1_000 + DAY, 0)).toBeNull();
    });

    test("an expired key is claimed anew, whatever it held", async () => {
      expect(await keys.claim(hold("k1", "e1"), "other", 1_000 + DAY, 1_000 + 2 * DAY, 0)).toBeNull();
      expect(await rows(`SELECT state, request_hash, answer FROM idempotency_keys WHERE tenant_id = 't1' AND user_id = 'u1' AND key = 'k1'`)).toEqual([
        { state: "running", request_hash: "other", answer: null },
      ]);
    });

    test("a key running since before the lease is taken over by the same request only", async () => {
      await keys.claim(hold("k2", "f1"), "h", 5_000, 5_000 + DAY, 0);
      expect(await keys.claim(hold("k2", "f2"), "h", 6_000, 6_000 + DAY, 4_999)).toMatchObject({ claim: "f1" }); // lease not over
      expect(await keys.claim(hold("k2", "f3"), "changed", 70_000, 70_000 + DAY, 10_000)).toMatchObject({ claim: "f1" }); // another body
      expect(await keys.claim(hold("k2", "f4"), "h", 70_000, 70_000 + DAY, 10_000)).toBeNull();
      // The old holder's answer no longer lands, and its release frees nothing.
      await keys.finish(hold("k2", "f1"), "f1", 201, "{}");
      await keys.release(hold("k2", "f1"));
      expect(await keys.claim(hold("k2", "f5"), "h", 70_001, 70_001 + DAY, 0)).toMatchObject({ claim: "f4", state: "running" });
      await keys.release(hold("k2", "f4"));
      expect(await keys.claim(hold("k2", "f6"), "h", 70_002, 70_002 + DAY, 0)).toBeNull();
    });

    test("the create's own transaction marks the key: record and key commit together", async () => {
      const h = hold("k3", "g1");
      await keys.claim(h, "h", 1_000, 1_000 + DAY, 0);
      await withHeldKey(h, () => crm.insertAccount(account("t1", "acc-1")));
      expect(await rows(`SELECT state, resource_id FROM idempotency_keys WHERE tenant_id = 't1' AND key = 'k3'`)).toEqual([{ state: "created", resource_id: "acc-1" }]);
      // A key no longer this request's (taken over, or purged) rolls the create back.
      const lost = hold("k4", "g2");
      await keys.claim(lost, "h", 1_000, 1_000 + DAY, 0);
      await rows(`UPDATE idempotency_keys SET claim = 'someone-else' WHERE tenant_id = 't1' AND key = 'k4'`);
      await expect(withHeldKey(lost, () => crm.insertAccount(account("t1", "acc-2")))).rejects.toBeInstanceOf(IdempotencyKeyLost);
      expect(await rows(`SELECT id FROM accounts WHERE tenant_id = 't1' AND id = 'acc-2'`)).toEqual([]);
      const stage = { id: "st-1", tenant_id: "t1", key: "demo", name: "Demo", color: "#000000", position: null, probability: 0, is_won: 0, is_lost: 0, created_at: 1 };
      await expect(withHeldKey(lost, () => crm.insertStage(stage))).rejects.toBeInstanceOf(IdempotencyKeyLost);
      expect(await rows(`SELECT id FROM pipeline_stages WHERE tenant_id = 't1' AND id = 'st-1'`)).toEqual([]);
      // A create that fails leaves its key running (released by the caller), never 'created'.
      const dup = hold("k5", "g3");
      await keys.claim(dup, "h", 1_000, 1_000 + DAY, 0);
      await expect(withHeldKey(dup, () => crm.insertAccount(account("t1", "acc-1")))).rejects.toThrow();
      expect(await rows(`SELECT state, resource_id FROM idempotency_keys WHERE tenant_id = 't1' AND key = 'k5'`)).toEqual([{ state: "running", resource_id: null }]);
      // One keyed create writes one record: a second create in the same scope leaves the key naming the first.
      const once = hold("k6", "g4");
      await keys.claim(once, "h", 1_000, 1_000 + DAY, 0);
      await withHeldKey(once, async () => {
        await crm.insertAccount(account("t1", "acc-4"));
        await crm.insertAccount(account("t1", "acc-5"));
      });
      expect(await rows(`SELECT state, resource_id FROM idempotency_keys WHERE tenant_id = 't1' AND key = 'k6'`)).toEqual([{ state: "created", resource_id: "acc-4" }]);
      expect(await rows(`SELECT id FROM accounts WHERE tenant_id = 't1' AND id IN ('acc-4', 'acc-5') ORDER BY id`)).toEqual([{ id: "acc-4" }, { id: "acc-5" }]);
      // Without a held key the store writes as before.
      await crm.insertAccount(account("t1", "acc-3"));
      expect(await rows(`SELECT id FROM accounts WHERE tenant_id = 't1' AND id = 'acc-3'`)).toEqual([{ id: "acc-3" }]);
    });

    test("an answer lost after the commit is saved by a later request without the claim, once the key says 'created'", async () => {
      await keys.finish(hold("k5", ""), null, 201, "{}"); // still running: not saved
      expect(await rows(`SELECT state FROM idempotency_keys WHERE tenant_id = 't1' AND key = 'k5'`)).toEqual([{ state: "running" }]);
      await keys.finish(hold("k3", ""), null, 201, '{"id":"acc-1"}');
      expect(await rows(`SELECT state, status, answer FROM idempotency_keys WHERE tenant_id = 't1' AND key = 'k3'`)).toEqual([
        { state: "done", status: 201, answer: '{"id":"acc-1"}' },
      ]);
    });

    test("the expiry sweep deletes expired keys only, in bounded steps across organizations", async () => {
      const tenants = Array.from({ length: 12 }, (_, i) => `p${String(i).padStart(2, "0")}`);
      for (const t of tenants) await rows(`INSERT INTO tenants (id, name, subdomain, created_at) VALUES ($1, $1, $1, 1)`, t);
      for (const t of tenants) {
        for (let i = 0; i < 30; i++) await keys.claim(hold(`old-${i}`, `c${i}`, t), "h", 10, 10 + DAY, 0);
        await keys.claim(hold("young", "c", t), "h", 10 * DAY, 11 * DAY, 0);
      }
      const now = 5 * DAY;
      let after: string | null = "";
      let deleted = 0;
      let steps = 0;
      while (after !== null) {
        const step: { deleted: number; next: string | null } = await keys.purgeExpiredStep(now, after, 5, 40);
        expect(step.deleted).toBeLessThanOrEqual(40);
        deleted += step.deleted;
        after = step.next;
        if (++steps > 100) throw new Error("the sweep does not end");
      }
      // t1/t2's expired keys (from the tests above) went too.
      expect(deleted).toBeGreaterThanOrEqual(12 * 30);
      expect(steps).toBeGreaterThanOrEqual(10);
      const left = await rows<{ tenant_id: string; key: string; expires_at: number }>(`SELECT tenant_id, key, expires_at FROM idempotency_keys`);
      expect(left.filter((r) => Number(r.expires_at) <= now)).toEqual([]);
      expect(left.filter((r) => r.key === "young").length).toBe(12);
    });

    test("one step of the service's size (500 keys) stays well inside 50 ms", async () => {
      const values = Array.from({ length: 600 }, (_, i) => `('t2', 'u7', 'bulk-${i}', 'h', 'c', 'done', 201, '{}', 1, 2)`).join(", ");
      await rows(`INSERT INTO idempotency_keys (tenant_id, user_id, key, request_hash, claim, state, status, answer, created_at, expires_at) VALUES ${values}`);
      // This thread's CPU time, not wall time: the machine is shared. On SQLite the step holds the thread and the
      // writer for all of it; on PostgreSQL the work is the server's (bounded by the same row count).
      const cpu = process.threadCpuUsage();
      const step = await keys.purgeExpiredStep(DAY, "", PURGE_TENANTS_PER_STEP, PURGE_ROWS_PER_STEP);
      const used = process.threadCpuUsage(cpu);
      expect(step.deleted).toBe(PURGE_ROWS_PER_STEP);
      expect(step.next).toBe("t1"); // budget spent in t2: the next step starts again at t2 (after t1)
      if (b.kind === "sqlite") expect((used.user + used.system) / 1000).toBeLessThan(50);
      expect((await keys.purgeExpiredStep(DAY, "", PURGE_TENANTS_PER_STEP, PURGE_ROWS_PER_STEP)).deleted).toBe(100);
    });
  });
}
