import { AsyncLocalStorage } from "node:async_hooks";
import type { IdempotencyHold } from "./repo";

/**
 * The key a create request holds, carried from the route (create-once.ts) to the store function
 * that writes the record, through the service, which does not know about keys. The store marks the
 * key inside its own transaction (keyCreatedInTx of each backend); outside a keyed create there is
 * no held key and the stores write as before. A keyed create writes one record: the first mark
 * names it, and any later create store call in the same scope (or in work the request started
 * that outlives it, such as a mail sender's loop, which inherits the scope) leaves the key alone.
 */
interface Held {
  hold: IdempotencyHold;
  marked: boolean;
}
const held = new AsyncLocalStorage<Held>();

/** The key this create holds and has not yet marked, or undefined. */
export function heldKey(): IdempotencyHold | undefined {
  const h = held.getStore();
  return h && !h.marked ? h.hold : undefined;
}

/** After a successful mark: the key names its record; later writes in the scope leave it alone. */
export function keyMarked(): void {
  const h = held.getStore();
  if (h) h.marked = true;
}

export const withHeldKey = <T>(hold: IdempotencyHold, fn: () => Promise<T>): Promise<T> => held.run({ hold, marked: false }, fn);

/**
 * Thrown inside the create's transaction (so it rolls back) when the key is no longer this
 * request's: it ran past the lease and a retry took the key over, or the key was purged.
 */
export class IdempotencyKeyLost extends Error {
  constructor() {
    super("the Idempotency-Key is no longer held by this request");
    this.name = "IdempotencyKeyLost";
  }
}
