import type { Database } from "bun:sqlite";
import { undoSignInPolicy } from "./before-sign-in-policy";
import migration20 from "../../src/db/migrations/0020-passkeys.sql" with { type: "text" };
import migration21 from "../../src/db/migrations/0021-sign-in-policy.sql" with { type: "text" };

/**
 * Takes a current SQLite database back to before migration 20 (passkeys), for tests that put a
 * database back to an older version and migrate it forward again: what 20 made must not be there
 * when it runs again. What 21 (the sign-in policy) made goes first.
 */
export function undoPasskeys(db: Database): void {
  undoSignInPolicy(db);
  db.run("DROP TABLE passkey_challenges");
  db.run("DROP TABLE passkeys");
}

/**
 * Puts back what 20 and 21 made on a database taken back to an older version, for a test that
 * writes through the app before migrating: today's session check reads the passkeys and the
 * sign-in policy on every request. Call `undoPasskeys` again before the migration.
 */
export function redoPasskeysForRequests(db: Database): void {
  db.exec(migration20);
  db.exec(migration21);
}
