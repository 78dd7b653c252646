import type { EventActor } from "../events/repo";

/** The fields of a deal a client writes, as stored (value in cents, custom_data as JSON text). */
export interface DealFields {
  title: string;
  account_id: string;
  contact_id: string | null;
  assigned_to: string | null;
  stage: string;
  value_cents: number;
  currency: string;
  close_date: string | null;
  probability: number | null;
  notes: string | null;
  custom_data: string | null;
}

export interface DealRow extends DealFields {
  seq: number;
  id: string;
  tenant_id: string;
  created_at: number;
  updated_at: number;
  /** NULL on a deal not written since stage times were kept: read as updated_at. */
  stage_changed_at: number | null;
}

/** A deal with the names it shows (copied, kept current) and its stage's data (joined). */
export interface DealJoined extends DealRow {
  account_name: string;
  contact_name: string | null;
  assignee_name: string | null;
  assignee_email: string | null;
  stage_id: string | null;
  stage_name: string | null;
  stage_color: string | null;
  is_won: number | null;
  is_lost: number | null;
}

/** Which referenced row a write named but its tenant does not have. */
export type Missing = "account_id" | "contact_id" | "assigned_to" | "stage";

export type WriteResult = {
  ok: true;
} | {
  ok: false;
  missing: Missing;
} | {
  ok: false;
  notFound: true;
};

/** The store of single deals: create, read, change, delete, and keeping the copied names current. */
export interface DealsStore {
  byId(tenantId: string, id: string): Promise<DealJoined | null>;
  /** Rows the deal list read directly (its first pages), with their stage's name, color and won/lost flags. */
  withStages: (tenantId: string, rows: DealJoined[]) => Promise<DealJoined[]>;
  /** The rows of one page, in the order of `seqs`. */
  bySeqs(tenantId: string, seqs: number[]): Promise<DealJoined[]>;
  /** Each write appends its event (deal.created, deal.updated or deal.stage_changed, deal.deleted) and the deal's timeline entries in its transaction; `actor` defaults to the system. */
  insert(tenantId: string, id: string, f: DealFields, now: number, actor?: EventActor): Promise<WriteResult>;
  /**
   * `change` gets the stored fields and answers the new ones, inside the transaction, which also
   * writes the timeline's entries of what changed and, on a new stage, stage_changed_at.
   */
  update(tenantId: string, id: string, change: (current: DealFields) => DealFields, now: number, actor?: EventActor): Promise<WriteResult>;
  remove(tenantId: string, id: string, now?: number, actor?: EventActor): Promise<boolean>;
}
