/** One Idempotency-Key of one user of one organization. */
export interface IdempotencyKeyRef {
  tenantId: string;
  userId: string;
  key: string;
}

/** A key held by the request that claimed it: `claim` is that request's random token. */
export interface IdempotencyHold extends IdempotencyKeyRef {
  claim: string;
}

/** What a key holds: 'running' while its first request works, 'created' once the record committed, 'done' with the answer. */
export interface IdempotencyRow {
  request_hash: string;
  claim: string;
  state: "running" | "created" | "done";
  resource_id: string | null;
  status: number | null;
  answer: string | null;
  created_at: number;
  expires_at: number;
}

/**
 * The store of Idempotency-Keys. Every statement names the tenant first. The create's own store
 * function marks the key 'created' inside the create's transaction (keyCreatedInTx beside each
 * backend's store), so a committed record always has its key, and a key never claims a record that
 * was rolled back.
 */
export interface IdempotencyStore {
  /**
   * Claims the key for `hold.claim`: a new key, an expired one, or one still 'running' since
   * before `staleBefore` with the same request hash (its request died). Answers null when claimed,
   * else the row that holds the key.
   */
  claim(hold: IdempotencyHold, requestHash: string, now: number, expiresAt: number, staleBefore: number): Promise<IdempotencyRow | null>;
  /**
   * Saves the answer ('done'): the holder's (`claim`), or with claim null the answer rebuilt for a
   * key left 'created' by a request that ended before saving its own.
   */
  finish(ref: IdempotencyKeyRef, claim: string | null, status: number, answer: string): Promise<void>;
  /** The create failed before committing: the key is free again (only while 'running' under this claim). */
  release(hold: IdempotencyHold): Promise<void>;
  /**
   * One bounded step of the expiry sweep: the organizations after `afterTenant` (at most
   * `tenants` of them, in id order), at most `maxRows` expired keys deleted. `next` is where the
   * following step starts, or null when this one reached the last organization.
   */
  purgeExpiredStep(now: number, afterTenant: string, tenants: number, maxRows: number): Promise<{ deleted: number; next: string | null }>;
}
