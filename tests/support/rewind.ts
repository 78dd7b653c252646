import type { Database } from "bun:sqlite";
import { MIGRATIONS } from "../../src/db/migrations";
import migration20 from "../../src/db/migrations/0020-passkeys.sql" with { type: "text" };
import migration21 from "../../src/db/migrations/0021-sign-in-policy.sql" with { type: "text" };
import migration22 from "../../src/db/migrations/0022-events.sql" with { type: "text" };
import migration23 from "../../src/db/migrations/0023-deal-activities.sql" with { type: "text" };
import migration28 from "../../src/db/migrations/0028-webhooks.sql" with { type: "text" };
import migration31 from "../../src/db/migrations/0031-record-activities.sql" with { type: "text" };
import migration33 from "../../src/db/migrations/0033-deal-notes-searched.sql" with { type: "text" };
import migration34 from "../../src/db/migrations/0034-deal-search-sweeps.sql" with { type: "text" };

/**
 * Tests that put a SQLite database back to an older schema version and migrate it forward again
 * (an upgrade from an earlier release) need what every later migration made gone first, or the
 * migration meets its own tables. One undo per migration, newest first, in one place: a new
 * migration adds its undo here (the check below fails until it does).
 *
 * Versions 12, 13 and 15 (the deal search's counters) have no undo here: their rewind means
 * folding or recounting the data, which the search tests that go back that far do themselves.
 */
const UNDO: Record<number, (db: Database) => void> = {
  22: (db) => {
    db.run("DROP TABLE event_counters");
    db.run("DROP TABLE events");
  },
  23: (db) => {
    db.run("DROP TRIGGER deal_activities_with_deal");
    db.run("DROP TABLE deal_notes");
    db.run("DROP TABLE deal_activities");
    db.run("ALTER TABLE deals DROP COLUMN stage_changed_at");
  },
  24: (db) => {
    for (const table of ["operator_audit", "operator_sessions", "operator_challenges", "operators"]) db.run(`DROP TABLE ${table}`);
  },
  25: (db) => {
    db.run("CREATE INDEX deals_by_close_desc ON deals (tenant_id, close_date IS NULL, close_date DESC, id DESC, stage, assigned_to)");
    db.run("CREATE INDEX deals_by_probability_desc ON deals (tenant_id, probability IS NULL, probability DESC, id DESC, stage, assigned_to)");
    db.run("CREATE INDEX deals_by_contact_desc ON deals (tenant_id, contact_key IS NULL, contact_key DESC, id DESC, stage, assigned_to)");
    db.run("CREATE INDEX deals_by_assignee_desc ON deals (tenant_id, assignee_key IS NULL, assignee_key DESC, id DESC, stage, assigned_to)");
  },
  26: (db) => {
    for (const t of ["insert", "delete", "update"]) db.run(`DROP TRIGGER deal_sums_${t}`);
    db.run("DROP TABLE deal_sums");
  },
  27: (db) => {
    db.run("DROP TABLE saved_view_defaults");
    db.run("DROP TABLE saved_views");
  },
  28: (db) => {
    db.run("DROP TABLE webhook_deliveries");
    db.run("DROP TABLE webhook_endpoints");
  },
  29: (db) => {
    db.run("ALTER TABLE crm_jobs DROP COLUMN detail");
    db.run("DROP TRIGGER deals_fts_update");
    db.run(`CREATE TRIGGER deals_fts_update AFTER UPDATE OF search_text, stage, assigned_to ON deals BEGIN
  INSERT INTO deals_fts (deals_fts, rowid, search_text, stage_token, unassigned_token) VALUES ('delete', old.seq, old.search_text, old.stage_token, old.unassigned_token);
  INSERT INTO deals_fts (rowid, search_text, stage_token, unassigned_token) VALUES (new.seq, new.search_text, new.stage_token, new.unassigned_token);
END`);
  },
  30: (db) => {
    db.run("DROP TABLE operator_backup_codes");
  },
  31: (db) => {
    db.run("DROP TRIGGER contact_activities_with_contact");
    db.run("DROP TRIGGER account_activities_with_account");
    db.run("DROP TABLE contact_activities");
    db.run("DROP TABLE account_activities");
  },
  // FTS5's defaults again (its commands, so the connection's cached settings follow).
  32: (db) => {
    db.run("INSERT INTO deals_fts (deals_fts, rank) VALUES ('automerge', 4)");
    db.run("INSERT INTO deals_fts (deals_fts, rank) VALUES ('crisismerge', 16)");
  },
  // The notes' text leaves search_text as the column goes (the part after the contact's name).
  33: (db) => {
    db.run("DROP INDEX deal_notes_newest");
    db.run("CREATE INDEX deal_notes_by_deal ON deal_notes (tenant_id, deal_id)");
    db.run("UPDATE deals SET search_text = substr(search_text, 1, length(search_text) - length(note_text) - 1) WHERE note_text <> ''");
    db.run("ALTER TABLE deals DROP COLUMN note_text");
  },
  34: (db) => {
    db.run("DROP TABLE deal_search_sweeps");
  },
  35: (db) => {
    db.run("DROP TABLE deal_search_holds");
  },
  21: (db) => {
    db.run("ALTER TABLE tenants DROP COLUMN require_passkey_for_admins");
    db.run("ALTER TABLE tenants DROP COLUMN require_passkey_or_2fa");
  },
  20: (db) => {
    db.run("DROP TABLE passkey_challenges");
    db.run("DROP TABLE passkeys");
  },
  19: (db) => {
    db.run("DROP TABLE sign_in_notices");
    db.run("DROP TABLE known_devices");
  },
  18: (db) => {
    db.run("DROP TABLE crm_job_undo");
    db.run("DROP TABLE crm_jobs");
    for (const table of ["accounts", "contacts", "deals"]) {
      db.run(`DROP INDEX ${table}_by_external_id`);
      db.run(`ALTER TABLE ${table} DROP COLUMN external_id`);
    }
  },
  17: (db) => db.run("DROP TABLE idempotency_keys"),
  16: (db) => {
    db.run("DROP TRIGGER mail_outbox_link_sealed_insert");
    db.run("DROP TRIGGER mail_outbox_link_sealed_update");
  },
  14: (db) => db.run("ALTER TABLE users DROP COLUMN provider_verified_at"),
};

/** The versions whose rewind is the calling test's own work (see above). */
export const REWOUND_BY_THE_TEST = [12, 13, 15];

/** Versions after `version` that have an undo here, newest first. */
function undoable(version: number): number[] {
  return MIGRATIONS.map((m) => m.version).filter((v) => v > version && !REWOUND_BY_THE_TEST.includes(v)).sort((a, b) => b - a);
}

/**
 * Undoes, newest first, what every migration after `version` made (but 12, 13 and 15), and
 * does not set user_version: the caller does, once its own steps are done. Throws, naming it,
 * when a migration has no undo here.
 */
export function undoMigrationsAfter(db: Database, version: number): void {
  for (const v of undoable(version)) {
    const undo = UNDO[v];
    if (!undo) throw new Error(`migration ${v} has no undo in tests/support/rewind.ts: add one`);
    undo(db);
  }
}

/** Every migration a rewinding test may meet has its undo (a new one without it fails here, by name). */
export function missingUndos(): number[] {
  return undoable(11).filter((v) => !UNDO[v]);
}

/**
 * Today's app reads and writes what 20–23, 28, 31, 33 and 34 made on every request or write (passkeys and the
 * sign-in policy in the session check; the event log, the deal, account and contact timelines and the
 * webhooks' endpoints beside each CRM write, a deal's notes' text beside a rename or a note's write, the search counters' sweep in every search): a test that writes through the app on a rewound database puts them back for those
 * writes, then takes them out again (`undoAfterRequests`) before it migrates.
 */
export function redoForRequests(db: Database): void {
  for (const sql of [migration20, migration21, migration22, migration23, migration28, migration31, migration33, migration34]) db.exec(sql);
}

export function undoAfterRequests(db: Database): void {
  for (const v of [34, 33, 31, 28, 23, 22, 21, 20]) UNDO[v]!(db);
}
