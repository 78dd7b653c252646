import type { Principal } from "../kernel/principal";
import { RequestValidationError } from "../kernel/errors";
import type { IdempotencyKeyRef } from "./repo";
import { IdempotencyKeyLost, withHeldKey } from "./scope";
import { type IdempotencyService, idempotencyErrors, requestHash } from "./service";

export const IDEMPOTENCY_HEADER = "Idempotency-Key";
export const MAX_KEY_LENGTH = 255;
// C0 controls, DEL and C1 controls: a key is printed in logs and support tickets as it is.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** The request's Idempotency-Key, null when it sends none; a bad one is a 422 naming the header. */
export function readIdempotencyKey(request: Request): string | null {
  const key = request.headers.get(IDEMPOTENCY_HEADER);
  if (key === null) return null;
  const loc = ["header", IDEMPOTENCY_HEADER.toLowerCase()];
  if (key.length === 0) throw new RequestValidationError([{ loc, msg: "String should have at least 1 character", type: "string_too_short", ctx: { min_length: 1 } }]);
  if (key.length > MAX_KEY_LENGTH) {
    throw new RequestValidationError([{ loc, msg: `String should have at most ${MAX_KEY_LENGTH} characters`, type: "string_too_long", ctx: { max_length: MAX_KEY_LENGTH } }]);
  }
  if (CONTROL.test(key)) throw new RequestValidationError([{ loc, msg: "Value error, an Idempotency-Key must not contain control characters", type: "value_error" }]);
  return key;
}

/** What a create route hands over: the caller, the request and its validated body, and Elysia's `set`. */
export interface CreateRequest {
  auth: Principal;
  request: Request;
  body: unknown;
  set: { status?: number | string; headers: Record<string, string | number> };
}

/**
 * Runs a create at most once per Idempotency-Key (per organization and user). Without the header it
 * just runs. With it: the first request claims the key and runs holding it (the store marks the key
 * inside the create's own transaction), then saves its status and JSON answer; a retry with the
 * same method, path and body gets that answer again (header `Idempotent-Replayed: true`) and writes
 * nothing; another body is 409 `idempotency_key_reused`; a retry while the first still runs is 409
 * `idempotency_key_in_progress`. The route sets its success status before calling (201), and may
 * change it inside `create` (an invitation resent is 200). When the first request's record
 * committed but its answer was never saved (it died in between), `reread` rebuilds the answer from
 * the record, answered with the status the route set first.
 */
export async function createOnce<T>(keys: IdempotencyService, c: CreateRequest, create: () => Promise<T>, reread: (id: string) => Promise<T>): Promise<T> {
  const key = readIdempotencyKey(c.request);
  if (key === null) return create();
  const ref: IdempotencyKeyRef = { tenantId: c.auth.tenantId, userId: c.auth.userId, key };
  const begun = await keys.begin(ref, requestHash(c.request.method, new URL(c.request.url).pathname, c.body));
  if (begun.kind === "replay") {
    c.set.status = begun.status;
    c.set.headers["idempotent-replayed"] = "true";
    return JSON.parse(begun.answer) as T;
  }
  if (begun.kind === "created") {
    const answer = await reread(begun.resourceId);
    await keys.finish(ref, null, Number(c.set.status ?? 201), JSON.stringify(answer));
    c.set.headers["idempotent-replayed"] = "true";
    return answer;
  }
  let answer: T;
  try {
    answer = await withHeldKey(begun.hold, create);
  } catch (e) {
    // Nothing committed (a refusal, or a failure inside the transaction): the key is free for a
    // corrected retry. Were the record committed, its key says 'created' and is not released. If
    // the release fails the key stays 'running' until its lease ends: a retry waits, never duplicates.
    await keys.release(begun.hold).catch(() => {});
    if (e instanceof IdempotencyKeyLost) throw idempotencyErrors.inProgress();
    throw e;
  }
  // The record and its key committed together; if saving the answer fails, a retry rebuilds it
  // from the record ('created'), so the caller still gets the answer it is owed now.
  await keys.finish(ref, begun.hold.claim, Number(c.set.status ?? 200), JSON.stringify(answer)).catch(() => {});
  return answer;
}
