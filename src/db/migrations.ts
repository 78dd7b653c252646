import v2 from "./migrations/0002-second-factor-invitations-mail.sql" with { type: "text" };
import v3 from "./migrations/0003-crm.sql" with { type: "text" };
import v4 from "./migrations/0004-session-proofs.sql" with { type: "text" };
import v5 from "./migrations/0005-deal-search.sql" with { type: "text" };
import v6 from "./migrations/0006-email-verification-password-reset.sql" with { type: "text" };
import v7 from "./migrations/0007-audit-log-reading.sql" with { type: "text" };
import v8 from "./migrations/0008-identity-providers.sql" with { type: "text" };
import v9 from "./migrations/0009-tenant-disabled.sql" with { type: "text" };
import v10 from "./migrations/0010-deal-search-unassigned.sql" with { type: "text" };
import v11 from "./migrations/0011-deal-gram-counts.sql" with { type: "text" };
import v12 from "./migrations/0012-deal-gram-counts-3.sql" with { type: "text" };
import v13 from "./migrations/0013-deal-key-grams.sql" with { type: "text" };
import v14 from "./migrations/0014-provider-verified-addresses.sql" with { type: "text" };
import v15 from "./migrations/0015-deal-search-pending.sql" with { type: "text" };
import v16 from "./migrations/0016-sealed-outbox.sql" with { type: "text" };
import v17 from "./migrations/0017-idempotency-keys.sql" with { type: "text" };
import v18 from "./migrations/0018-import-jobs.sql" with { type: "text" };
import v19 from "./migrations/0019-new-device-notices.sql" with { type: "text" };
import v20 from "./migrations/0020-passkeys.sql" with { type: "text" };
import v21 from "./migrations/0021-sign-in-policy.sql" with { type: "text" };
import v22 from "./migrations/0022-events.sql" with { type: "text" };
import v23 from "./migrations/0023-deal-activities.sql" with { type: "text" };
import v24 from "./migrations/0024-operators.sql" with { type: "text" };
import v25 from "./migrations/0025-deal-sorts-walked-backwards.sql" with { type: "text" };
import v26 from "./migrations/0026-deal-sums.sql" with { type: "text" };
import v27 from "./migrations/0027-saved-views.sql" with { type: "text" };
import v28 from "./migrations/0028-webhooks.sql" with { type: "text" };
import v29 from "./migrations/0029-bulk-deal-changes.sql" with { type: "text" };
import v30 from "./migrations/0030-operator-backup-codes.sql" with { type: "text" };
import v31 from "./migrations/0031-record-activities.sql" with { type: "text" };
import v32 from "./migrations/0032-search-index-merged-in-background.sql" with { type: "text" };
import v33 from "./migrations/0033-deal-notes-searched.sql" with { type: "text" };
import v34 from "./migrations/0034-deal-search-sweeps.sql" with { type: "text" };
import v35 from "./migrations/0035-deal-search-holds.sql" with { type: "text" };
import type { Db } from "./database";
import { recountDealGrams } from "./deal-grams";
import { recountDealKeyGrams } from "./deal-key-grams";
import { backfillNoteText } from "./deal-note-text";

/**
 * Upgrades for databases made by an older release. schema.sql is always the whole current
 * schema and is what a new database gets; a database at version N-1 runs the migration with
 * `version: N`. Version 1 is schema.sql as first released, so the list starts at 2.
 *
 * To change the schema: edit schema.sql, put the same change in migrations/NNNN-name.sql, list it here, and
 * tests/db/migrate.test.ts checks that the oldest snapshot plus every migration equals schema.sql.
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
  /** Data work after the SQL, in the same transaction: what SQL alone would do far slower (a backfill counted in memory). */
  after?: (db: Db) => void;
}

export const MIGRATIONS: Migration[] = [
  { version: 2, name: "second factor, magic links, invitations, mail outbox", sql: v2 },
  { version: 3, name: "CRM: accounts, contacts, deals, deal search and counts", sql: v3 },
  { version: 4, name: "sessions keep a hash of their secret id and their last proof; sign-in challenges spent once", sql: v4 },
  { version: 5, name: "deal search: search text in the by-rowid filter index", sql: v5 },
  { version: 6, name: "users carry when their address was verified; password-reset and verification tokens", sql: v6 },
  { version: 7, name: "audit log read newest first by tenant, time and user", sql: v7 },
  { version: 8, name: "identity providers, linked identities and authorization requests under way", sql: v8 },
  { version: 9, name: "organizations can be disabled by the operator", sql: v9 },
  { version: 10, name: "deal search: a token for unassigned deals in the search index", sql: v10 },
  { version: 11, name: "deal search: per-stage and per-assignee counts of each 1-2 character piece of search text", sql: v11 },
  { version: 12, name: "deal search: the gram counts also count each 3-character piece of search text", sql: v12, after: recountDealGrams },
  { version: 13, name: "deal search: counts of each 3-character piece per bucket of the title, account and contact sort keys", sql: v13, after: afterVersion13 },
  { version: 14, name: "users record when an identity provider vouched for their address, apart from mailed proof", sql: v14 },
  { version: 15, name: "deal search: deal writes append to a pending table that a background step folds into the gram counters", sql: v15 },
  { version: 16, name: "mail outbox: links are sealed (a clear one is refused)", sql: v16 },
  { version: 17, name: "Idempotency-Key: creates answered once per key, organization and user", sql: v17 },
  { version: 18, name: "imports are background jobs with an undo log; accounts, contacts and deals carry an external id", sql: v18 },
  { version: 19, name: "known devices per user, and the new-device mail's \"this wasn't me\" links", sql: v19 },
  { version: 20, name: "passkeys (WebAuthn credentials) and their single-use challenges", sql: v20 },
  { version: 21, name: "the organization's sign-in policy: members must use a passkey or 2FA, admins a passkey", sql: v21 },
  { version: 22, name: "the organization's event log and its counters", sql: v22 },
  { version: 23, name: "deals: when the stage last changed; the activity timeline and notes", sql: v23 },
  { version: 24, name: "the server's operators: accounts, sign-in challenges, sessions and their audit log", sql: v24 },
  { version: 25, name: "deal list: a descending page of a nullable sort walks the ascending index backwards; the four descending indexes go", sql: v25 },
  { version: 26, name: "the deal board: deal counts and value sums per assignee, stage and currency", sql: v26 },
  { version: 27, name: "saved views of the deal list, personal and shared, and each member's default view", sql: v27 },
  { version: 28, name: "signed webhooks: endpoints and their deliveries", sql: v28 },
  { version: 29, name: "bulk changes of deals: a job's detail (what it was asked, its undo)", sql: v29 },
  { version: 30, name: "operators' backup codes, stored as keyed hashes", sql: v30 },
  { version: 31, name: "an account's and a contact's activity timeline", sql: v31 },
  { version: 32, name: "deal search: the full-text index is merged in background steps, never inside a deal write", sql: v32 },
  { version: 33, name: "deal search: a deal's notes (their newest 20,000 characters) are part of its search text", sql: v33, after: backfillNoteText },
  { version: 34, name: "deal search: a burst of pending counter rows swept through in key order", sql: v34 },
  { version: 35, name: "deal search: a seed beside the server holds the counters' fold off its organization until it ends", sql: v35 },
];

/**
 * Migration 13's data work: deal_key_grams counted from the deals, and statistics for the order
 * indexes it rebuilt (DROP INDEX took theirs). Left without while the others keep theirs, the
 * planner took an index it knew nothing of for a walk in creation order and sorted the tenant:
 * 2 s instead of 1 ms. Sampled as the bulk seed samples (analysis_limit 2000): 75 ms at 1.9M deals.
 */
export function afterVersion13(db: Db): void {
  recountDealKeyGrams(db);
  const analyzed = db.query("SELECT 1 AS x FROM sqlite_schema WHERE name = 'sqlite_stat1'").get() !== null && db.query("SELECT 1 AS x FROM sqlite_stat1 WHERE tbl = 'deals' LIMIT 1").get() !== null;
  if (!analyzed) return;
  const limit = (db.query("PRAGMA analysis_limit").get() as { analysis_limit: number }).analysis_limit;
  db.run("PRAGMA analysis_limit = 2000");
  for (const [, name] of v13.matchAll(/CREATE INDEX (\w+)/g)) db.run(`ANALYZE ${name}`);
  db.run(`PRAGMA analysis_limit = ${limit}`);
}
