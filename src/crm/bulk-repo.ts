import type { EventActor } from "../events/repo";
import type { JobRow } from "./export-import/jobs-repo";

/** A deal a bulk change chose: its number (the store's own key) and id. */
export interface BulkTarget {
  seq: number;
  id: string;
}

/** The deal list's filters and search as the stores read them (deals-service.ts: stages the tenant has; assignee a user id, "" for nobody). */
export interface BulkFilter {
  search: string | null;
  stages: string[] | null;
  assignee: string | null;
}

/** What a bulk change does to each deal: set its stage and/or assignee (null: nobody), or delete it. */
export type BulkChange = { set: { stage?: string; assigned_to?: string | null } } | { delete: true };

/** A stage or assignee the change names was removed while it ran. */
export class BulkTargetGone extends Error {
  constructor(readonly field: "stage" | "assigned_to") {
    super(`the ${field} of the bulk change no longer exists`);
  }
}

/** What one revert step did: entries read, deals put back as they were, deals brought back, deals left alone (changed since, or what they name gone). */
export interface Reverted {
  entries: number;
  reverted: number;
  restored: number;
  skipped: number;
}

/**
 * Bulk changes of deals (issue 32), written in bounded batches of one short transaction each.
 * Every batch writes, per deal, what a single edit or delete writes (its timeline entries, its
 * event) and an entry in the job's undo log (crm_job_undo): the values before (entity
 * "deal_set"), or a deleted deal's row with its timeline and notes ("deal_deleted"). A revert
 * reads that log newest first: a failed job's rollback and a person's undo are the same steps.
 */
export interface BulkDealsStore {
  /** Whether a batch's transaction runs on this thread (SQLite): then its wall time sizes the batches; otherwise this thread's CPU does. */
  readonly writesOnThisThread: boolean;
  /** Between batches: lets the database catch up with what the batches wrote (SQLite: the WAL copied, db/checkpointer.ts). */
  catchUp?(): Promise<void>;
  /** The tenant's deal numbers lie in [lo, hi): the snapshot walks that range in windows. */
  seqRange(tenantId: string): Promise<{ lo: number; hi: number }>;
  /** The deals within the filter numbered in [from, to), in number order. */
  matching(tenantId: string, f: BulkFilter, from: number, to: number): Promise<BulkTarget[]>;
  /** Of these ids, the tenant's deals, in number order. */
  byIds(tenantId: string, ids: string[]): Promise<BulkTarget[]>;
  memberExists(tenantId: string, userId: string): Promise<boolean>;
  setTotal(tenantId: string, jobId: string, total: number, leaseUntil: number): Promise<void>;
  /**
   * One batch in one transaction: each target changed or deleted (a deal already so, or gone
   * since, is unchanged), with its timeline entries, events and undo entries, and the job's
   * progress. Throws BulkTargetGone when the stage or assignee was removed meanwhile.
   */
  apply(tenantId: string, jobId: string, now: number, leaseUntil: number, targets: BulkTarget[], change: BulkChange, actor: EventActor): Promise<{ updated: number; unchanged: number }>;
  /**
   * One revert step in one transaction: the newest `limit` undo entries of bulk job `jobId` put
   * back (a value someone changed since is left alone), with timeline entries and events, then
   * removed; counted on the undo job `undoJobId` when given (else the lease of `jobId` renewed).
   */
  revert(tenantId: string, jobId: string, undoJobId: string | null, now: number, leaseUntil: number, limit: number, actor: EventActor): Promise<Reverted>;
  /** Undo entries the bulk job still has. */
  undoLeft(tenantId: string, jobId: string): Promise<number>;
  /** The newest bulk change (kind deals_bulk, not failed) the user started in the organization. */
  lastOf(tenantId: string, userId: string): Promise<JobRow | null>;
  setDetail(tenantId: string, jobId: string, detail: string): Promise<void>;
}
