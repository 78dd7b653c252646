import { AsyncLocalStorage } from "node:async_hooks";
import type { IdempotencyHold } from "./repo";

/**
 * The key a create request holds, carried from the route (create-once.ts) to the store function
 * that writes the record, through the service, which does not know about keys. The store marks the
 * key inside its own transaction (keyCreatedInTx of each backend); outside a keyed create there is
 * no held key and the stores write as before.
 */
const held = new AsyncLocalStorage<IdempotencyHold>();

export const heldKey = (): IdempotencyHold | undefined => held.getStore();

export const withHeldKey = <T>(hold: IdempotencyHold, fn: () => Promise<T>): Promise<T> => held.run(hold, fn);

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
