import { t, type Static } from "elysia";
import { AccountCreate, ContactCreate, DealCreate } from "../model";

/** An import's body: at most 50 MB of CSV (the 1 MiB bound of JSON bodies does not apply: http/body.ts). */
export const MAX_IMPORT_ROWS = 100_000;
/** A dry run lists at most this many row errors (the counts cover them all). */
export const MAX_REPORTED_ERRORS = 1_000;
/** The header row: at most this many columns and characters, checked while it is read (a longer one is refused at once). */
export const MAX_HEADER_COLUMNS = 64;
export const MAX_HEADER_CHARS = 16_384;
/** Any later row: at most this many characters. */
export const MAX_ROW_CHARS = 1_048_576;
/**
 * An export's steps: the deals (accounts, contacts) one step reads, sized by what the last step
 * cost this thread, aiming at the jobs' 5 ms (a neighbour's request waits for about one step: with
 * 1,000 rows a step, 13 ms at a million deals, B's /auth/me p99 in the neighbours bench was 38-42 ms
 * during the export). A fixed 400 cost 8-24 ms alone and 62 ms on a loaded CI run.
 */
export const EXPORT_STEP = { first: 100, min: 20, max: 2_000, targetMs: 5 } as const;

export const KINDS = ["deals", "accounts", "contacts"] as const;
export type Kind = (typeof KINDS)[number];

/** The columns each export writes, in order. */
export const EXPORT_COLUMNS: Record<Kind, readonly string[]> = {
  deals: [
    "id", "title", "value", "currency", "stage", "stage_name", "probability", "close_date", "account_name", "contact_name",
    "assignee_name", "assignee_email", "notes", "custom_data", "created_at", "updated_at", "external_id",
  ],
  accounts: ["id", "name", "domain", "industry", "created_at", "updated_at", "external_id"],
  contacts: ["id", "first_name", "last_name", "email", "phone", "account_name", "created_at", "updated_at", "external_id"],
};

/**
 * Columns an import reads; the export's other columns (times, names derived from others) are
 * skipped. `id` and `external_id` name the record a row updates (upsert).
 */
export const IMPORT_COLUMNS: Record<Kind, readonly string[]> = {
  deals: ["id", "external_id", "title", "value", "currency", "stage", "probability", "close_date", "account_name", "contact_name", "assignee_email", "notes", "custom_data"],
  accounts: ["id", "external_id", "name", "domain", "industry"],
  contacts: ["id", "external_id", "first_name", "last_name", "email", "phone", "account_name"],
};
export const IGNORED_COLUMNS: Record<Kind, readonly string[]> = {
  deals: ["stage_name", "assignee_name", "created_at", "updated_at"],
  accounts: ["created_at", "updated_at"],
  contacts: ["name", "created_at", "updated_at"],
};

/** A deal row's own fields, checked by the JSON create endpoint's rules (references are by name here). */
export const DealRowSchema = t.Omit(DealCreate, ["account_id", "contact_id", "assigned_to", "custom_data"]);
export const AccountRowSchema = AccountCreate;
export const ContactRowSchema = t.Omit(ContactCreate, ["account_id"]);

/** A row that could not be written: its spreadsheet line (the header is line 1), its column's header (null: the whole row or file), and why. */
export const RowError = t.Object({ line: t.Integer(), column: t.Nullable(t.String()), message: t.String() }, { title: "ImportRowError" });
export type RowError = Static<typeof RowError>;

export const ImportReport = t.Object(
  {
    kind: t.Union(KINDS.map((k) => t.Literal(k))),
    dry_run: t.Boolean(),
    rows: t.Integer({ description: "Data rows read (the header is not one)" }),
    valid_rows: t.Integer(),
    error_count: t.Integer({ description: "Every error found; `errors` lists the first 1,000" }),
    errors: t.Array(RowError),
    // Written (or, in a dry run, that would be written).
    created: t.Object({ deals: t.Integer(), accounts: t.Integer(), contacts: t.Integer() }),
  },
  { title: "ImportReport" },
);
export type ImportReport = Static<typeof ImportReport>;
