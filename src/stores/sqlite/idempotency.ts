import type { Statement } from "bun:sqlite";
import { type Db, writeTx, writeTxAsync } from "../../db/database";
import type { IdempotencyHold, IdempotencyKeyRef, IdempotencyRow, IdempotencyStore } from "../../idempotency/repo";
import { IdempotencyKeyLost, heldKey, keyMarked } from "../../idempotency/scope";

const MARK_CREATED = `UPDATE idempotency_keys SET state = 'created', resource_id = ?5
  WHERE tenant_id = ?1 AND user_id = ?2 AND key = ?3 AND claim = ?4 AND state = 'running'`;

// One prepared statement per connection (the stores' functions call keyCreatedInTx with their db).
const marks = new WeakMap<Db, Statement<never, [string, string, string, string, string]>>();

/**
 * Inside a create's transaction: when the request holds an Idempotency-Key, marks it 'created' with
 * the new record's id, so the record and its key commit together. Throws (rolling the create back)
 * when the key is no longer this request's. Without a held key it does nothing.
 */
export function keyCreatedInTx(db: Db, resourceId: string): void {
  const h = heldKey();
  if (!h) return;
  let mark = marks.get(db);
  if (!mark) marks.set(db, (mark = db.prepare(MARK_CREATED)));
  if (mark.run(h.tenantId, h.userId, h.key, h.claim, resourceId).changes === 0) throw new IdempotencyKeyLost();
  keyMarked();
}

/**
 * A create's single write, in a transaction with its key's mark when the request holds a key; as
 * before (one autocommit statement) when it does not.
 */
export function withKeyMark<T>(db: Db, resourceId: string, write: () => T): T {
  if (!heldKey()) return write();
  return writeTx(db, () => {
    const r = write();
    keyCreatedInTx(db, resourceId);
    return r;
  });
}

/** SQL of Idempotency-Keys (src/idempotency/repo.ts). Every statement names the tenant first. */
export function createSqliteIdempotencyStore(db: Db) {
  const claim = db.prepare<never, [string, string, string, string, string, number, number, number]>(
    `INSERT INTO idempotency_keys (tenant_id, user_id, key, request_hash, claim, state, created_at, expires_at)
     VALUES (?1, ?2, ?3, ?4, ?5, 'running', ?6, ?7)
     ON CONFLICT (tenant_id, user_id, key) DO UPDATE SET request_hash = excluded.request_hash, claim = excluded.claim, state = 'running',
       resource_id = NULL, status = NULL, answer = NULL, created_at = excluded.created_at, expires_at = excluded.expires_at
     WHERE idempotency_keys.expires_at <= excluded.created_at
        OR (idempotency_keys.state = 'running' AND idempotency_keys.created_at <= ?8 AND idempotency_keys.request_hash = excluded.request_hash)`,
  );
  const row = db.prepare<IdempotencyRow, [string, string, string]>(
    `SELECT request_hash, claim, state, resource_id, status, answer, created_at, expires_at FROM idempotency_keys
      WHERE tenant_id = ?1 AND user_id = ?2 AND key = ?3`,
  );
  const finish = db.prepare<never, [string, string, string, string | null, number, string]>(
    `UPDATE idempotency_keys SET state = 'done', status = ?5, answer = ?6
      WHERE tenant_id = ?1 AND user_id = ?2 AND key = ?3 AND (claim = ?4 OR (?4 IS NULL AND state = 'created'))`,
  );
  const release = db.prepare<never, [string, string, string, string]>(
    "DELETE FROM idempotency_keys WHERE tenant_id = ?1 AND user_id = ?2 AND key = ?3 AND claim = ?4 AND state = 'running'",
  );
  const tenantsAfter = db.prepare<{ id: string }, [string, number]>("SELECT id FROM tenants WHERE id > ?1 ORDER BY id LIMIT ?2");
  const purge = db.prepare<never, [string, number, number]>(
    `DELETE FROM idempotency_keys WHERE tenant_id = ?1 AND (user_id, key) IN (
       SELECT user_id, key FROM idempotency_keys WHERE tenant_id = ?1 AND expires_at <= ?2 LIMIT ?3)`,
  );

  const store = {
    async claim(h: IdempotencyHold, requestHash: string, now: number, expiresAt: number, staleBefore: number): Promise<IdempotencyRow | null> {
      return writeTxAsync(db, () => {
        claim.run(h.tenantId, h.userId, h.key, requestHash, h.claim, now, expiresAt, staleBefore);
        const r = row.get(h.tenantId, h.userId, h.key)!;
        return r.claim === h.claim ? null : r;
      });
    },
    async finish(k: IdempotencyKeyRef, claimed: string | null, status: number, answer: string): Promise<void> {
      finish.run(k.tenantId, k.userId, k.key, claimed, status, answer);
    },
    async release(h: IdempotencyHold): Promise<void> {
      release.run(h.tenantId, h.userId, h.key, h.claim);
    },
    async purgeExpiredStep(now: number, afterTenant: string, tenants: number, maxRows: number): Promise<{ deleted: number; next: string | null }> {
      return writeTxAsync(db, () => {
        const window = tenantsAfter.all(afterTenant, tenants);
        let deleted = 0;
        for (const t of window) {
          const n = purge.run(t.id, now, maxRows - deleted).changes;
          deleted += n;
          // Budget spent: the next step starts again at this organization (it may hold more).
          if (deleted >= maxRows) return { deleted, next: t.id === window[0]!.id ? afterTenant : window[window.indexOf(t) - 1]!.id };
        }
        return { deleted, next: window.length < tenants ? null : window.at(-1)!.id };
      });
    },
  };
  return store satisfies IdempotencyStore;
}
