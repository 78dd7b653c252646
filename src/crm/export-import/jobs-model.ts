import { t, type Static } from "elysia";
import { toIso } from "../../kernel/ids";
import { pageSchema } from "../../http/page-schema";
import type { JobRow } from "./jobs-repo";
import { KINDS, RowError } from "./model";

/** A bulk change of deals (issue 32) and the job that undoes one: job kinds beside the imports'. */
export const BULK_KIND = "deals_bulk";
export const BULK_UNDO_KIND = "deals_bulk_undo";
export const JOB_KINDS = [...KINDS, BULK_KIND, BULK_UNDO_KIND] as const;
export type JobKind = (typeof JOB_KINDS)[number];
/** How long after it ends a bulk change can be undone. */
export const BULK_UNDO_WINDOW_MS = 10 * 60_000;

/** What a bulk job was asked (crm_jobs.detail, JSON). */
export interface BulkDetail {
  action: "change" | "delete" | "undo";
  set?: { stage?: string; assigned_to?: string | null };
  /** An undo job: the bulk change it reverts. */
  undo_of?: string;
  /** A bulk change: the undo job that reverted it. */
  undone_by?: string;
}

const BulkRead = t.Object(
  {
    action: t.Union([t.Literal("change"), t.Literal("delete"), t.Literal("undo")], { description: "change: set stage and/or assignee; delete; undo: reverts the bulk change undo_of" }),
    set: t.Nullable(t.Object({ stage: t.Optional(t.String()), assigned_to: t.Optional(t.Nullable(t.String())) }), { description: "What a change sets (assigned_to null: nobody)" }),
    undo_of: t.Nullable(t.String({ description: "An undo job: the bulk change it reverts" })),
    undone_by: t.Nullable(t.String({ description: "A bulk change: the undo job that reverted it" })),
    undo_until: t.Nullable(t.String({ format: "date-time", description: "Until when POST /api/v1/crm/jobs/{id}/undo accepts this bulk change (while it stays its user's last); null when it cannot be undone" })),
  },
  { title: "BulkJobDetail" },
);

/** Running imports in one server at once (uploads being checked and dry runs included); more answer 429 too_many_jobs. */
export const MAX_RUNNING_IMPORTS = 3;
/** Seconds a refused import is told to wait (Retry-After). */
export const JOB_RETRY_AFTER_S = 10;
/** How long a running job's server is believed alive after its last batch (PostgreSQL: another server rolls it back after). */
export const JOB_LEASE_MS = 60_000;
/**
 * What a batch aims at (adaptive batch size), well inside the 50 ms bound: a batch's rows cost more
 * or less than the last one's. A neighbour's request waits for about one batch per step it takes.
 * SQLite (the write on this thread): 5 ms of the writer. At 10, in the neighbours bench at a million
 * deals, B's /auth/me and create p99s were 36 and 46 ms during the import (targets 27 and 30) and
 * 28 and 37 during the bulk change; at 5, 24 and 36, and 18 and 25, with the jobs as long (import
 * 47.0 s against 50.7, bulk change 36.4 against 35.4: the run-to-run spread). PostgreSQL: 10 ms of
 * this thread's CPU (the transaction's own time is the database server's, and smaller batches there
 * rewrite the counters more often).
 */
export const batchTargetMs = (writesOnThisThread: boolean): number => (writesOnThisThread ? 5 : 10);

export const JobRead = t.Object(
  {
    id: t.String(),
    kind: t.Union(JOB_KINDS.map((k) => t.Literal(k)), { description: "deals, accounts, contacts: an import; deals_bulk: a bulk change of deals; deals_bulk_undo: its undo" }),
    status: t.Union([t.Literal("running"), t.Literal("succeeded"), t.Literal("failed")], { description: "running until the last batch commits; a failed job's rows were removed" }),
    total: t.Integer({ description: "Data rows in the file; a bulk job: the deals it chose (0 until they are counted)" }),
    done: t.Integer({ description: "Rows written so far (bulk: deals)" }),
    added: t.Integer({ description: "Rows that added a record (an undone bulk delete: deals brought back)" }),
    updated: t.Integer({ description: "Rows that changed the record they name (by id or external_id); bulk: deals changed or deleted (undo: put back)" }),
    unchanged: t.Integer({ description: "Rows whose record already held exactly that; bulk: deals already so, or gone (undo: changed by someone since, left alone)" }),
    error_count: t.Integer(),
    errors: t.Array(RowError, { description: "Rows that could not be written (the first 1,000)" }),
    message: t.Nullable(t.String({ description: "Why a job failed, as a sentence" })),
    created_at: t.String({ format: "date-time" }),
    finished_at: t.Nullable(t.String({ format: "date-time" })),
    bulk: t.Nullable(BulkRead, { description: "A bulk job's request and undo; null for imports" }),
  },
  { title: "ImportJob" },
);
export type JobRead = Static<typeof JobRead>;
export const JobPage = pageSchema(JobRead);
export type JobPage = Static<typeof JobPage>;

/** A bulk job's detail as read; undo_until while a finished change may still be undone. */
function bulkOf(j: JobRow): JobRead["bulk"] {
  if (!j.detail) return null;
  const d = JSON.parse(j.detail) as BulkDetail;
  const undoable = j.kind === BULK_KIND && j.status === "succeeded" && !d.undone_by && j.finished_at !== null;
  return {
    action: d.action,
    set: d.set ?? null,
    undo_of: d.undo_of ?? null,
    undone_by: d.undone_by ?? null,
    undo_until: undoable ? toIso(Number(j.finished_at) + BULK_UNDO_WINDOW_MS) : null,
  };
}

export const toJobRead = (j: JobRow): JobRead => ({
  id: j.id,
  kind: j.kind as JobKind,
  status: j.status,
  total: Number(j.total),
  done: Number(j.done),
  added: Number(j.added),
  updated: Number(j.updated),
  unchanged: Number(j.unchanged),
  error_count: Number(j.error_count),
  errors: JSON.parse(j.errors) as RowError[],
  message: j.message,
  created_at: toIso(Number(j.created_at)),
  finished_at: j.finished_at === null ? null : toIso(Number(j.finished_at)),
  bulk: bulkOf(j),
});
