import type { Database } from "bun:sqlite";
import { undoSignInPolicy } from "./before-sign-in-policy";

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
