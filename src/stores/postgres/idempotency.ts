import type { IdempotencyHold, IdempotencyKeyRef, IdempotencyRow, IdempotencyStore } from "../../idempotency/repo";
import { IdempotencyKeyLost, heldKey, keyMarked } from "../../idempotency/scope";
import type { Pg, PgQueries, PgTx } from "./database";

/**
 * Inside a create's transaction: when the request holds an Idempotency-Key, marks it 'created' with
 * the new record's id, so the record and its key commit together. Throws (rolling the create back)
 * when the key is no longer this request's. The UPDATE locks the key's row until COMMIT: a retry's
 * takeover or a release waits for this transaction and then sees what it did.
 */
export async function keyCreatedInTx(tx: PgTx, resourceId: string): Promise<void> {
  const h = heldKey();
  if (!h) return;
  const n = await tx.run`UPDATE idempotency_keys SET state = 'created', resource_id = ${resourceId}
    WHERE tenant_id = ${h.tenantId} AND user_id = ${h.userId} AND key = ${h.key} AND claim = ${h.claim} AND state = 'running'`;
  if (n === 0) throw new IdempotencyKeyLost();
  keyMarked();
}

/**
 * A create's single write, in a transaction with its key's mark when the request holds a key; as
 * before (one autocommit statement, no BEGIN/COMMIT round trips) when it does not.
 */
export async function withKeyMark<T>(pg: Pg, resourceId: string, write: (q: PgQueries) => Promise<T>): Promise<T> {
  if (!heldKey()) return write(pg);
  return pg.begin(async (tx) => {
    const r = await write(tx);
    await keyCreatedInTx(tx, resourceId);
    return r;
  });
}

/** PostgreSQL twin of sqlite/idempotency.ts. */
export function createPostgresIdempotencyStore(pg: Pg) {
  const store = {
    async claim(h: IdempotencyHold, requestHash: string, now: number, expiresAt: number, staleBefore: number): Promise<IdempotencyRow | null> {
      // A key released between the upsert and the read of its holder is free again: claim anew.
      for (let attempt = 0; attempt < 3; attempt++) {
        // The upsert locks the key's row: of two claims at once one inserts, the other finds it held.
        await pg.run`INSERT INTO idempotency_keys (tenant_id, user_id, key, request_hash, claim, state, created_at, expires_at)
          VALUES (${h.tenantId}, ${h.userId}, ${h.key}, ${requestHash}, ${h.claim}, 'running', ${now}::bigint, ${expiresAt}::bigint)
          ON CONFLICT (tenant_id, user_id, key) DO UPDATE SET request_hash = excluded.request_hash, claim = excluded.claim, state = 'running',
            resource_id = NULL, status = NULL, answer = NULL, created_at = excluded.created_at, expires_at = excluded.expires_at
          WHERE idempotency_keys.expires_at <= excluded.created_at
             OR (idempotency_keys.state = 'running' AND idempotency_keys.created_at <= ${staleBefore}::bigint
                 AND idempotency_keys.request_hash = excluded.request_hash)`;
        const r = await pg.one<IdempotencyRow>`
          SELECT request_hash, claim, state, resource_id, status, answer, created_at, expires_at FROM idempotency_keys
           WHERE tenant_id = ${h.tenantId} AND user_id = ${h.userId} AND key = ${h.key}`;
        if (r !== null) return r.claim === h.claim ? null : r;
      }
      throw new Error("an Idempotency-Key was released three times while being claimed");
    },
    async finish(k: IdempotencyKeyRef, claimed: string | null, status: number, answer: string): Promise<void> {
      await pg.run`UPDATE idempotency_keys SET state = 'done', status = ${status}::integer, answer = ${answer}
        WHERE tenant_id = ${k.tenantId} AND user_id = ${k.userId} AND key = ${k.key}
          AND (claim = ${claimed}::text OR (${claimed}::text IS NULL AND state = 'created'))`;
    },
    async release(h: IdempotencyHold): Promise<void> {
      await pg.run`DELETE FROM idempotency_keys
        WHERE tenant_id = ${h.tenantId} AND user_id = ${h.userId} AND key = ${h.key} AND claim = ${h.claim} AND state = 'running'`;
    },
    async purgeExpiredStep(now: number, afterTenant: string, tenants: number, maxRows: number): Promise<{ deleted: number; next: string | null }> {
      const window = await pg.all<{ id: string }>`SELECT id FROM tenants WHERE id > ${afterTenant} ORDER BY id LIMIT ${tenants}`;
      if (window.length === 0) return { deleted: 0, next: null };
      const ids = window.map((t) => t.id);
      // One probe of the (tenant_id, expires_at) index per organization; COLLATE "default": tenants.id
      // is "C", and compared as "C" the index could not be probed by tenant (see inEveryTenant).
      const doomed = await pg.all<{ tenant_id: string }>`
        WITH doomed AS (
          SELECT k.tenant_id, k.user_id, k.key FROM unnest(${pg.sql.array(ids, "text")}::text[]) WITH ORDINALITY AS w(id, n)
            CROSS JOIN LATERAL (SELECT tenant_id, user_id, key FROM idempotency_keys
                                 WHERE tenant_id = w.id COLLATE "default" AND expires_at <= ${now}::bigint LIMIT ${maxRows}) k
           ORDER BY w.n LIMIT ${maxRows})
        DELETE FROM idempotency_keys i USING doomed d
         WHERE i.tenant_id = d.tenant_id AND i.user_id = d.user_id AND i.key = d.key
        RETURNING i.tenant_id`;
      if (doomed.length >= maxRows) {
        // Budget spent: the next step starts again at the last organization reached (it may hold more).
        const last = Math.max(...doomed.map((d) => ids.indexOf(d.tenant_id)));
        return { deleted: doomed.length, next: last > 0 ? ids[last - 1]! : afterTenant };
      }
      return { deleted: doomed.length, next: window.length < tenants ? null : ids.at(-1)! };
    },
  };
  return store satisfies IdempotencyStore;
}
