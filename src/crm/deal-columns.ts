import type { SortField } from "./model";

/**
 * What both storage backends agree on about the deals table, so that neither imports the other:
 * the numbering, the columns a listed deal is read with, and each sort's key column.
 */

/** A tenant's deals are one rowid range: [tenant_no * 2^32, (tenant_no + 1) * 2^32). */
export const TENANT_SPAN = 2 ** 32;

/** The columns a listed deal is read with (DealJoined without its stage's data). */
export const DEAL_COLUMNS = `seq, id, tenant_id, title, account_id, contact_id, assigned_to, stage, value_cents, currency, close_date,
  probability, notes, custom_data, created_at, updated_at, account_name, contact_name, assignee_name, assignee_email`;

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
