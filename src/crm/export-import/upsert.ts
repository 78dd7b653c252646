import { contactName, searchTextOf, sortKey } from "../model";
import type { ImportItem } from "./import-rows";

/**
 * Upsert on import, the same on both backends: which stored columns an import writes, and what a
 * row of the file does to the record it names (by id, else by external_id): nothing when every
 * column is already so (unchanged), else an update, or an insert when it names none.
 */
export type Entity = ImportItem["entity"];
export const TABLE: Record<Entity, "accounts" | "contacts" | "deals"> = { account: "accounts", contact: "contacts", deal: "deals" };

/** The columns an import writes (besides id, tenant_id, times and a deal's seq). A job's undo entry keeps their old values. */
export const WRITTEN: Record<Entity, readonly string[]> = {
  account: ["name", "domain", "industry", "external_id"],
  contact: ["first_name", "last_name", "email", "phone", "account_id", "external_id"],
  deal: [
    "title", "account_id", "contact_id", "assigned_to", "stage", "value_cents", "currency", "close_date", "probability", "notes", "custom_data",
    "title_key", "account_key", "contact_key", "assignee_key", "search_text", "account_name", "contact_name", "assignee_name", "assignee_email",
    "external_id",
  ],
};

/**
 * The columns an import reads of the record a row names: the written ones, and a deal's notes'
 * text (kept by its notes, never written by an import nor put back by its undo), which its search text holds.
 */
export const READ: Record<Entity, readonly string[]> = { ...WRITTEN, deal: [...WRITTEN.deal, "note_text"] };

/** Which written columns each column of the file sets; a column the file lacks leaves them as they are. */
const SET_BY: Record<Entity, Record<string, readonly string[]>> = {
  account: { name: ["name"], domain: ["domain"], industry: ["industry"] },
  contact: { first_name: ["first_name"], last_name: ["last_name"], email: ["email"], phone: ["phone"], account_name: ["account_id"] },
  deal: {
    title: ["title"], value: ["value_cents"], currency: ["currency"], stage: ["stage"], probability: ["probability"], close_date: ["close_date"],
    account_name: ["account_id", "account_name"], contact_name: ["contact_id", "contact_name"],
    assignee_email: ["assigned_to", "assignee_name", "assignee_email"], notes: ["notes"], custom_data: ["custom_data"],
  },
};

export type Stored = Record<string, unknown> & { id: string };

export type Resolved =
  | { op: "insert"; id: string; values: Record<string, unknown> }
  | { op: "update"; id: string; values: Record<string, unknown>; before: Record<string, unknown> }
  | { op: "same"; id: string };

/** A record's written columns as the row gives them (a deal's keys and search text computed). */
function valuesOf(item: ImportItem): Record<string, unknown> {
  const r = item.row as unknown as Record<string, unknown>;
  const v: Record<string, unknown> = {};
  for (const c of WRITTEN[item.entity]) v[c] = r[c] ?? null;
  v.external_id = item.externalId;
  return v;
}

/**
 * A deal's copies, again from its merged fields (title, notes, the names it copies) and its notes'
 * text (deals.note_text: kept by its notes, never written by an import; "" on a new deal).
 */
function withDealKeys(v: Record<string, unknown>, noteText: string): Record<string, unknown> {
  const contact = v.contact_name as string | null;
  const assignee = v.assignee_name as string | null;
  v.title_key = sortKey(v.title as string);
  v.account_key = sortKey(v.account_name as string);
  v.contact_key = contact === null ? null : sortKey(contact);
  v.assignee_key = assignee === null ? null : sortKey(assignee);
  v.search_text = searchTextOf(v.title as string, v.notes as string | null, v.account_name as string, contact, noteText);
  return v;
}

const same = (a: unknown, b: unknown): boolean =>
  (a ?? null) === (b ?? null) || ((typeof a === "number" || typeof b === "number") && a !== null && b !== null && Number(a) === Number(b));

/** What `item` does, given the record it names (undefined: none). `present`: the file's columns. */
export function resolveItem(item: ImportItem, existing: Stored | undefined, present: ReadonlySet<string>): Resolved {
  const fresh = valuesOf(item);
  if (item.entity === "deal") withDealKeys(fresh, "");
  if (!existing) return { op: "insert", id: item.row.id, values: fresh };
  const merged: Record<string, unknown> = {};
  for (const c of WRITTEN[item.entity]) merged[c] = existing[c] ?? null;
  for (const [column, targets] of Object.entries(SET_BY[item.entity])) {
    if (present.has(column)) for (const c of targets) merged[c] = fresh[c];
  }
  if (item.externalId !== null) merged.external_id = item.externalId;
  if (item.entity === "deal") withDealKeys(merged, (existing.note_text as string | undefined) ?? "");
  const before: Record<string, unknown> = {};
  let changed = false;
  for (const c of WRITTEN[item.entity]) {
    before[c] = existing[c] ?? null;
    if (!same(existing[c], merged[c])) changed = true;
  }
  return changed ? { op: "update", id: existing.id, values: merged, before } : { op: "same", id: existing.id };
}

/**
 * What a job's undo puts back of a deal it changed: its written columns as they were, with its
 * search text again from them and the deal's notes' text now (notes written since stay found).
 */
export function undoneDeal(before: Record<string, unknown>, noteText: string): Record<string, unknown> {
  return withDealKeys({ ...before }, noteText);
}

/** A stored contact's name as deals copy it (for a contact the import renames). */
export const storedContactName = (r: Record<string, unknown>) => contactName(r.first_name as string, (r.last_name as string | null) ?? null);

/** Counts of what a job's rows did. */
export interface Outcome {
  added: number;
  updated: number;
  unchanged: number;
}
