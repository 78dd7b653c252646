import type { Database } from "bun:sqlite";

/**
 * Takes a current SQLite database back to before migration 20 (passkeys), for tests that put a
 * database back to an older version and migrate it forward again: what 20 made must not be there
 * when it runs again.
 */
export function undoPasskeys(db: Database): void {
  db.run("DROP TABLE passkey_challenges");
  db.run("DROP TABLE passkeys");
}
