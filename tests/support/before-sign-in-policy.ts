import type { Database } from "bun:sqlite";

/**
 * Takes a current SQLite database back to before migration 21 (the organization's sign-in
 * policy), for tests that put a database back to an older version and migrate it forward again.
 */
export function undoSignInPolicy(db: Database): void {
  db.run("ALTER TABLE tenants DROP COLUMN require_passkey_for_admins");
  db.run("ALTER TABLE tenants DROP COLUMN require_passkey_or_2fa");
}
