import { type SortField, noteTextOf, searchTextOf, sortKey } from "./model";

/**
 * What both storage backends agree on about the deals table, so that neither imports the other:
 * the numbering, the columns a listed deal is read with, and each sort's key column.
 */

/** A tenant's deals are one rowid range: [tenant_no * 2^32, (tenant_no + 1) * 2^32). */
export const TENANT_SPAN = 2 ** 32;

/** The columns a listed deal is read with (DealJoined without its stage's data). */
export const DEAL_COLUMNS = `seq, id, tenant_id, title, account_id, contact_id, assigned_to, stage, value_cents, currency, close_date,
  probability, notes, custom_data, created_at, updated_at, account_name, contact_name, assignee_name, assignee_email, stage_changed_at`;

/**
 * Sort key column of each sortable field; the nullable ones sort nulls last both ways. The CSV
 * export walks the same orders as the list, so the two can never sort differently.
 */
export const SORT_COLUMN: Record<SortField, { column: string; nullable: boolean }> = {
  title: { column: "title_key", nullable: false },
  value: { column: "value_cents", nullable: false },
  stage: { column: "stage", nullable: false },
  probability: { column: "probability", nullable: true },
  close_date: { column: "close_date", nullable: true },
  created_at: { column: "created_at", nullable: false },
  updated_at: { column: "updated_at", nullable: false },
  account_name: { column: "account_key", nullable: false },
  contact_name: { column: "contact_key", nullable: true },
  assignee_name: { column: "assignee_key", nullable: true },
};

/** The names a deal copies (see DEAL_COLUMNS), in its columns' order from account_key to assignee_email. */
export type DealCopies = [string, string | null, string | null, string, string, string | null, string | null, string | null];

/**
 * A deal's copied names and their sort keys and search text, from the rows it names: the same on
 * both backends. `noteText`: the deal's notes' text as stored (deals.note_text; "" for a new deal).
 */
export function dealCopies(
  f: { title: string; notes: string | null },
  accountName: string,
  contact: string | null,
  user: { full_name: string | null; email: string } | null,
  noteText: string,
): DealCopies {
  const assignee = user?.full_name ?? null;
  return [
    sortKey(accountName),
    contact === null ? null : sortKey(contact),
    assignee === null ? null : sortKey(assignee),
    searchTextOf(f.title, f.notes, accountName, contact, noteText),
    accountName,
    contact,
    assignee,
    user?.email ?? null,
  ];
}

/**
 * A deal's row with its notes' text and search text from `notes` (rows of deal_notes): a deleted
 * deal put back with its notes (a bulk change's undo) is found by them again, whatever release
 * kept the row.
 */
export function withNoteText<R extends Record<string, unknown>>(row: R, notes: ReadonlyArray<Record<string, unknown>>): R {
  const newestFirst = [...notes].sort((a, b) => Number(b.created_at) - Number(a.created_at) || (String(b.id) < String(a.id) ? -1 : String(b.id) > String(a.id) ? 1 : 0));
  const noteText = noteTextOf(newestFirst.map((n) => n.body as string));
  const search = searchTextOf(row.title as string, row.notes as string | null, row.account_name as string, row.contact_name as string | null, noteText);
  return { ...row, note_text: noteText, search_text: search };
}
