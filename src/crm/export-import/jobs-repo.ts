import type { AuditEntry } from "../../security/repo";
import type { ImportItem } from "./import-rows";
import type { Outcome } from "./upsert";

/** A job as stored (crm_jobs). */
export interface JobRow {
  tenant_id: string;
  id: string;
  kind: string;
  status: "running" | "succeeded" | "failed";
  user_id: string | null;
  total: number;
  done: number;
  added: number;
  updated: number;
  unchanged: number;
  error_count: number;
  /** JSON array of RowError. */
  errors: string;
  message: string | null;
  created_at: number;
  finished_at: number | null;
  lease_until: number;
  /** A bulk job's BulkDetail as JSON (jobs-model.ts); null for imports. */
  detail?: string | null;
}

/** A row the store could not write (a record named by it changed since the file was checked). */
export class ImportRowError extends Error {
  constructor(
    readonly line: number,
    readonly column: string | null,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The store of import jobs. A job's rows are written batch by batch, each batch one short
 * transaction that also records what it changed (the undo log) and the job's progress; a job
 * that fails, or whose server died (its lease ran out), is undone from the log, newest first.
 */
export interface JobsStore {
  /**
   * Whether a batch's transaction runs on this thread (SQLite): then its wall time is what holds
   * the writer, and sizes the batches; otherwise (PostgreSQL) the thread's CPU time does.
   */
  readonly writesOnThisThread: boolean;
  /** Between batches: lets the database catch up with what the batches wrote (SQLite: the WAL copied, db/checkpointer.ts). */
  catchUp?(): Promise<void>;
  /** Inserts a running job; false when the organization already has one running. */
  create(job: JobRow): Promise<boolean>;
  get(tenantId: string, id: string): Promise<JobRow | null>;
  /** The organization's jobs, newest first. */
  list(tenantId: string, offset: number, limit: number): Promise<{ rows: JobRow[]; total: number }>;
  /**
   * One batch, in one transaction: each item inserted, updated or left (upsert by id, then
   * external_id), its undo entry, and the job's progress (`rows` file rows more done, lease to
   * `leaseUntil`). Throws ImportRowError when a row cannot be written.
   */
  applyBatch(tenantId: string, jobId: string, now: number, leaseUntil: number, items: ImportItem[], present: ReadonlySet<string>, rows: number): Promise<Outcome>;
  /** Undoes the job's newest `limit` undo entries (one transaction); how many there were. */
  undoStep(tenantId: string, jobId: string, limit: number): Promise<number>;
  /** Deletes up to `limit` undo entries of a finished job; how many. */
  dropUndo(tenantId: string, jobId: string, limit: number): Promise<number>;
  /** Ends a job: succeeded (with its audit row, same transaction) or failed. */
  finish(tenantId: string, jobId: string, now: number, status: "succeeded" | "failed", message: string | null, errors: string, errorCount: number, audit: AuditEntry | null): Promise<void>;
  /**
   * Running jobs whose lease ended before `t` (their server died), and finished ones with undo
   * entries left, but bulk changes that ended at or after `keepSince` (they may still be undone).
   */
  orphans(t: number, keepSince: number): Promise<Array<{ tenant_id: string; id: string; kind: string; status: string }>>;
  /** Running jobs in every organization, by kind (the metrics; read through the running-only index). */
  runningByKind(): Promise<Array<{ kind: string; n: number }>>;
}
