import { t, type Static } from "elysia";
import { toIso } from "../../kernel/ids";
import { pageSchema } from "../../http/page-schema";
import type { JobRow } from "./jobs-repo";
import { KINDS, type Kind, RowError } from "./model";

/** Running imports in one server at once (uploads being checked and dry runs included); more answer 429 too_many_jobs. */
export const MAX_RUNNING_IMPORTS = 3;
/** Seconds a refused import is told to wait (Retry-After). */
export const JOB_RETRY_AFTER_S = 10;
/** How long a running job's server is believed alive after its last batch (PostgreSQL: another server rolls it back after). */
export const JOB_LEASE_MS = 60_000;
/** The write transaction a batch aims at (adaptive batch size), well inside the 50 ms bound: a batch's rows cost more or less than the last one's. A neighbour's request waits for about one batch per step it takes. */
export const BATCH_TARGET_MS = 10;

export const JobRead = t.Object(
  {
    id: t.String(),
    kind: t.Union(KINDS.map((k) => t.Literal(k))),
    status: t.Union([t.Literal("running"), t.Literal("succeeded"), t.Literal("failed")], { description: "running until the last batch commits; a failed job's rows were removed" }),
    total: t.Integer({ description: "Data rows in the file" }),
    done: t.Integer({ description: "Rows written so far" }),
    added: t.Integer({ description: "Rows that added a record" }),
    updated: t.Integer({ description: "Rows that changed the record they name (by id or external_id)" }),
    unchanged: t.Integer({ description: "Rows whose record already held exactly that" }),
    error_count: t.Integer(),
    errors: t.Array(RowError, { description: "Rows that could not be written (the first 1,000)" }),
    message: t.Nullable(t.String({ description: "Why a job failed, as a sentence" })),
    created_at: t.String({ format: "date-time" }),
    finished_at: t.Nullable(t.String({ format: "date-time" })),
  },
  { title: "ImportJob" },
);
export type JobRead = Static<typeof JobRead>;
export const JobPage = pageSchema(JobRead);
export type JobPage = Static<typeof JobPage>;

export const toJobRead = (j: JobRow): JobRead => ({
  id: j.id,
  kind: j.kind as Kind,
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
});
