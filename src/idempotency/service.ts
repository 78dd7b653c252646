import { createHash, randomBytes } from "node:crypto";
import { AppError } from "../kernel/errors";
import type { IdempotencyHold, IdempotencyKeyRef, IdempotencyStore } from "./repo";

/** How long a key answers retries. */
export const KEY_TTL_MS = 24 * 3_600_000;
/** A key 'running' this long belongs to a request that died (or hangs): a retry with the same body takes it over. */
export const KEY_LEASE_MS = 60_000;
/** The expiry sweep's step: organizations probed, keys deleted (one short transaction each; measured in tests/stores/idempotency.test.ts). */
export const PURGE_TENANTS_PER_STEP = 50;
export const PURGE_ROWS_PER_STEP = 500;

export const idempotencyErrors = {
  reused: () =>
    new AppError(409, "idempotency_key_reused", "This Idempotency-Key was already used for a different request: send a new key with each new request."),
  inProgress: () =>
    new AppError(409, "idempotency_key_in_progress", "A request with this Idempotency-Key is still being processed: retry in a moment.", { "Retry-After": "1" }),
};

/** JSON with every object's members in code-point order: two bodies that mean the same hash the same. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map((x) => canonicalJson(x === undefined ? null : x)).join(",")}]`;
  if (v !== null && typeof v === "object") {
    const entries = Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonicalJson(x)}`).join(",")}}`;
  }
  return JSON.stringify(v ?? null);
}

/** What a key is compared by: SHA-256 of the method, the path and the canonical body. */
export const requestHash = (method: string, path: string, body: unknown): string =>
  createHash("sha256").update(`${method.toUpperCase()} ${path}\n${canonicalJson(body)}`).digest("hex");

/** What to do with a keyed create: run it holding the key, answer what the first answered, or rebuild that answer from the record. */
export type Begun =
  | { kind: "run"; hold: IdempotencyHold }
  | { kind: "replay"; status: number; answer: string }
  | { kind: "created"; resourceId: string };

export interface IdempotencyDeps {
  now: () => number;
  store: IdempotencyStore;
}

/** Idempotency-Keys of creates: claim, replay, finish, release, and the expiry sweep. */
export function createIdempotencyService(d: IdempotencyDeps) {
  async function begin(ref: IdempotencyKeyRef, hash: string): Promise<Begun> {
    const hold: IdempotencyHold = { ...ref, claim: randomBytes(16).toString("base64url") };
    const now = d.now();
    const row = await d.store.claim(hold, hash, now, now + KEY_TTL_MS, now - KEY_LEASE_MS);
    if (row === null) return { kind: "run", hold };
    if (row.request_hash !== hash) throw idempotencyErrors.reused();
    if (row.state === "done") return { kind: "replay", status: row.status!, answer: row.answer! };
    if (row.state === "created") return { kind: "created", resourceId: row.resource_id! };
    throw idempotencyErrors.inProgress();
  }

  /** Every expired key, in steps of one short transaction each, yielding to other work between steps. */
  async function purgeExpired(now = d.now()): Promise<number> {
    let deleted = 0;
    let after: string | null = "";
    while (after !== null) {
      const step: { deleted: number; next: string | null } = await d.store.purgeExpiredStep(now, after, PURGE_TENANTS_PER_STEP, PURGE_ROWS_PER_STEP);
      deleted += step.deleted;
      after = step.next;
      if (after !== null) await new Promise((r) => setImmediate(r));
    }
    return deleted;
  }

  return {
    begin,
    finish: (ref: IdempotencyKeyRef, claim: string | null, status: number, answer: string) => d.store.finish(ref, claim, status, answer),
    release: (hold: IdempotencyHold) => d.store.release(hold),
    purgeExpired,
  };
}

export type IdempotencyService = ReturnType<typeof createIdempotencyService>;
