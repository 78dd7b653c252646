import type { Database } from "bun:sqlite";
import { undoPasskeys } from "./before-passkeys";

/**
 * Takes a current SQLite database back to before migration 18 (import jobs, external ids), for
 * tests that put a database back to an older version and migrate it forward again: what 18 made
 * must not be there when it runs again. What later migrations made goes first (20: passkeys, 19: known devices).
 */
export function undoImportJobs(db: Database): void {
  undoPasskeys(db);
  undoNewDeviceNotices(db);
  db.run("DROP TABLE crm_job_undo");
  db.run("DROP TABLE crm_jobs");
  for (const table of ["accounts", "contacts", "deals"]) {
    db.run(`DROP INDEX ${table}_by_external_id`);
    db.run(`ALTER TABLE ${table} DROP COLUMN external_id`);
  }
}

/** Takes a current SQLite database back to before migration 19 (known devices, sign-in notices). */
export function undoNewDeviceNotices(db: Database): void {
  db.run("DROP TABLE sign_in_notices");
  db.run("DROP TABLE known_devices");
}
