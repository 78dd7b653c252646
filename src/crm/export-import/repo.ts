import type { DealFields } from "../deals-repo";
import type { SortDir, SortField } from "../model";
import type { AccountRow, ContactRow } from "../repo";

export interface ExportFilter {
  /** Stage keys the tenant has (null: any). */
  stages: string[] | null;
  /** A user id; "" for unassigned; null for anyone. */
  assignee: string | null;
  /** Lower-cased search term, or null. */
  search: string | null;
  sortBy: SortField;
  sortDir: SortDir;
}

/** Where a walk stands: the last row's sort key and id, and whether the nulls (walked last) have begun. */
export interface DealCursor {
  key: string | number | null;
  id: string;
  inNulls: boolean;
}

/** Where an accounts or contacts export's walk stands: its last record's (created_at, id). */
export interface PeopleCursor {
  created_at: number;
  id: string;
}

/** One step of an accounts or contacts export: the matching records walked, and where to go on. */
export interface PeopleStep<R> {
  rows: R[];
  next: PeopleCursor | null;
}

export type ExportedContact = ContactRow & {
  account_name: string | null;
};

/** A deal as the import writes it, with its copied names already resolved. */
export interface ImportDeal extends DealFields {
  id: string;
  account_name: string;
  contact_name: string | null;
  assignee_name: string | null;
  assignee_email: string | null;
}

/**
 * The store of CSV export and import. Exports walk an index by key (WHERE (key, id) > last) in chunks,
 * never by offset, so each chunk costs the same however deep the walk is. Imports are written by
 * the jobs store (jobs-repo.ts).
 */
export interface TransferStore {
  /** The next chunk of the deals export as CSV lines (null: none matched in it), and where the next one starts (null: the end). */
  dealsCsvAfter: (tenantId: string, f: ExportFilter, after: DealCursor | null, limit: number) => Promise<{
    csv: Uint8Array | null;
    next: DealCursor | null;
  }>;
  /**
   * Accounts newest first after `after` (null: from the newest): at most `limit` of them walked, those
   * the search pattern matches, and where the walk stopped (null: the end). As the deals' steps, the
   * walk is bounded, not the matches.
   */
  accountsAfter(tenantId: string, pattern: string | null, after: PeopleCursor | null, limit: number): Promise<PeopleStep<AccountRow>>;
  contactsAfter(tenantId: string, pattern: string | null, after: PeopleCursor | null, limit: number): Promise<PeopleStep<ExportedContact>>;
  /**
   * What an import matches names against, a bounded step at a time (an organization may hold
   * hundreds of thousands): accounts and contacts oldest first after `after` (the first of a name
   * wins), and where to go on (null: the end).
   */
  accountNamesAfter(tenantId: string, after: PeopleCursor | null, limit: number): Promise<PeopleStep<{ id: string; name: string; created_at: number }>>;
  contactNamesAfter(tenantId: string, after: PeopleCursor | null, limit: number): Promise<PeopleStep<{
    id: string;
    first_name: string;
    last_name: string | null;
    account_id: string | null;
    created_at: number;
  }>>;
  /** The members an import's assignee_email names. */
  members(tenantId: string): Promise<Array<{ id: string; email: string; full_name: string | null }>>;
}
