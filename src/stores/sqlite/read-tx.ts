import type { Db } from "../../db/database";

/**
 * One read transaction around several reads: in WAL mode each autocommit statement opens and
 * ends its own read transaction (about 2 µs each, issue 15), and one snapshot also makes the
 * reads agree with each other. `fn` must be synchronous, like writeTx's: no `await` inside. Inside
 * a caller's transaction `fn` simply joins it.
 */
export function readTx(db: Db): <T>(fn: () => T) => T {
  const begin = db.prepare("BEGIN DEFERRED");
  const commit = db.prepare("COMMIT");
  const rollback = db.prepare("ROLLBACK");
  return <T>(fn: () => T): T => {
    if (db.inTransaction) return fn();
    begin.run();
    let result: T;
    try {
      result = fn();
    } catch (e) {
      if (db.inTransaction) rollback.run();
      throw e;
    }
    commit.run();
    return result;
  };
}
