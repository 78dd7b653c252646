import type { Principal, RequestInfo } from "../auth/service";
import { nextStepSize } from "../kernel/step-size";
import { userActor } from "../events/repo";
import { AppError, RequestValidationError, errors } from "../kernel/errors";
import { newId } from "../kernel/ids";
import { fairTurn, nextTurn } from "./export-import/import-upload";
import { BULK_KIND, BULK_UNDO_KIND, BULK_UNDO_WINDOW_MS, type BulkDetail, JOB_LEASE_MS, JOB_RETRY_AFTER_S, type JobRead, batchTargetMs, toJobRead } from "./export-import/jobs-model";
import type { JobRow, JobsStore } from "./export-import/jobs-repo";
import { type BulkChange, type BulkDealsStore, type BulkFilter, type BulkTarget, BulkTargetGone } from "./bulk-repo";
import type { AssigneeFilter } from "./deals-service";
import type { CrmStore } from "./repo";

export interface BulkDeps {
  now: () => number;
  repo: CrmStore;
  bulk: BulkDealsStore;
  jobs: JobsStore;
  /** The imports' job service: marks this server's running jobs for recovery, and takes recovery of these kinds. */
  tracker: {
    track(jobId: string, done: Promise<unknown>): void;
    recoverKind(kind: string, recover: (job: { tenant_id: string; id: string; kind: string; status: string }) => Promise<void>): void;
  };
  log: (line: Record<string, unknown>) => void;
  ended?: (kind: string, status: "succeeded" | "failed") => void;
}

/** The deal list's filters and search, as the list's own reader read them from the body's `filter`. */
export type BulkFilterQuery = { search: string | null; stages: string[] | null } & AssigneeFilter;

/** A bulk request once its body is read: the deals (ids or the list's filters) and the change. */
export interface BulkOrder {
  ids: string[] | null;
  filter: BulkFilterQuery | null;
  change: BulkChange;
}

const tooManyJobs = () =>
  new AppError(429, "too_many_jobs", "This organization already has an import or bulk change running. Try again when it has finished.", { "Retry-After": String(JOB_RETRY_AFTER_S) });
const RESTARTED = "The server stopped during this bulk change, so nothing of it was kept. Make the change again.";
const RESTARTED_UNDO_LEFT = "The server stopped during this undo and finished it when it started again.";
/** The first window of deal numbers a snapshot page reads; then sized by its time, like the batches. */
const FIRST_WINDOW = 8_192;
/** The smallest window: it reads at most this many deals, and a slow moment cannot shrink it to a crawl. */
const MIN_WINDOW = 1_024;
const MAX_WINDOW = 1 << 20;

/**
 * Bulk changes of deals (issue 32): change the stage or assignee of, or delete, up to every deal
 * of the organization, as a background job of the imports' kind (GET /api/v1/crm/jobs/{id}). The
 * deals are chosen at the job's start (ids, or the list's filters walked in bounded windows of
 * deal numbers), then written in batches of one short transaction each with an event-loop turn
 * between. The job's undo log keeps each deal's values before, so a failed job is reverted, and
 * its user can undo it for ten minutes after it ends while it stays their last bulk change.
 */
export function createBulkService(d: BulkDeps) {
  const target = batchTargetMs(d.bulk.writesOnThisThread);
  /** Times a step for sizing: SQLite holds the writer for its wall time, PostgreSQL this thread for its CPU. */
  async function timed<T>(step: () => Promise<T>): Promise<[T, number]> {
    const started = performance.now();
    const cpu = process.threadCpuUsage();
    const out = await step();
    const spent = process.threadCpuUsage(cpu);
    return [out, d.bulk.writesOnThisThread ? performance.now() - started : (spent.user + spent.system) / 1000];
  }

  /** The stores' filter: stages the tenant has (others match nothing), the assignee as a user id or "" for nobody. */
  async function storeFilter(auth: Principal, f: BulkFilterQuery): Promise<BulkFilter> {
    let stages: string[] | null = null;
    if (f.stages !== null) {
      const known = new Set((await d.repo.stages(auth.tenantId)).map((s) => s.key));
      stages = [...new Set(f.stages)].filter((s) => known.has(s)).sort();
    }
    return { search: f.search, stages, assignee: f.mine ? auth.userId : f.unassigned ? "" : f.assigned_to };
  }

  /** The matching deals, walked in windows of deal numbers: each window one bounded read, a turn between. */
  async function snapshot(tenantId: string, f: BulkFilter): Promise<BulkTarget[]> {
    if (f.stages !== null && f.stages.length === 0) return [];
    const { lo, hi } = await d.bulk.seqRange(tenantId);
    const out: BulkTarget[] = [];
    let window = FIRST_WINDOW;
    for (let from = lo; from < hi; ) {
      const to = Math.min(hi, from + window);
      const started = performance.now();
      for (const t of await d.bulk.matching(tenantId, f, from, to)) out.push(t);
      window = nextStepSize(window, performance.now() - started, { min: MIN_WINDOW, max: MAX_WINDOW, targetMs: target });
      from = to;
      await nextTurn();
    }
    return out;
  }

  /** Refuses a stage or assignee the organization does not have (422, naming the body's field). */
  async function checkChange(auth: Principal, change: BulkChange): Promise<void> {
    if (!("set" in change)) return;
    const { stage, assigned_to } = change.set;
    if (stage !== undefined && !(await d.repo.stage(auth.tenantId, stage))) {
      const keys = (await d.repo.stages(auth.tenantId)).map((s) => `'${s.key}'`);
      const expected = keys.join(", ").replace(/, ([^,]*)$/, " or $1");
      throw new RequestValidationError([{ loc: ["body", "set", "stage"], msg: `Input should be ${expected}`, type: "literal_error", input: stage, ctx: { expected } }]);
    }
    if (typeof assigned_to === "string" && !(await d.bulk.memberExists(auth.tenantId, assigned_to))) {
      throw new RequestValidationError([{ loc: ["body", "set", "assigned_to"], msg: "Value error, no member of this organization has this id", type: "value_error", input: assigned_to }]);
    }
  }

  const newJob = (auth: Principal, kind: string, total: number, detail: BulkDetail): JobRow => {
    const now = d.now();
    return {
      tenant_id: auth.tenantId, id: newId(), kind, status: "running", user_id: auth.userId, total, done: 0, added: 0, updated: 0, unchanged: 0,
      error_count: 0, errors: "[]", message: null, created_at: now, finished_at: null, lease_until: now + JOB_LEASE_MS, detail: JSON.stringify(detail),
    };
  };

  /** POST /crm/deals/bulk: checks the request, starts the job (202 with it); its deals are chosen and written after the answer. */
  async function start(auth: Principal, order: BulkOrder, req: RequestInfo): Promise<JobRead> {
    await checkChange(auth, order.change);
    const filter = order.filter ? await storeFilter(auth, order.filter) : null;
    const detail: BulkDetail = "set" in order.change ? { action: "change", set: order.change.set } : { action: "delete" };
    const job = newJob(auth, BULK_KIND, order.ids ? new Set(order.ids).size : 0, detail);
    if (!(await d.jobs.create(job))) throw tooManyJobs();
    d.tracker.track(job.id, run(auth, job, order, filter, req));
    return toJobRead(job);
  }

  async function run(auth: Principal, job: JobRow, order: BulkOrder, filter: BulkFilter | null, req: RequestInfo): Promise<void> {
    const t = auth.tenantId;
    const actor = userActor(auth);
    let updated = 0;
    try {
      const targets = order.ids ? await d.bulk.byIds(t, [...new Set(order.ids)]) : await snapshot(t, filter!);
      await d.bulk.setTotal(t, job.id, targets.length, d.now() + JOB_LEASE_MS);
      let size = 16;
      for (let i = 0; i < targets.length; ) {
        const slice = targets.slice(i, i + size);
        const [r, took] = await timed(() => d.bulk.apply(t, job.id, d.now(), d.now() + JOB_LEASE_MS, slice, order.change, actor));
        updated += r.updated;
        size = nextStepSize(size, took, { min: 4, max: 2_000, targetMs: target });
        i += slice.length;
        // As an import's batches: other organizations' requests finish their steps between ours.
        await fairTurn();
        await d.bulk.catchUp?.();
      }
    } catch (e) {
      const gone = e instanceof BulkTargetGone;
      if (!gone) d.log({ level: "error", msg: "bulk change failed", job: job.id, error: (e as Error).name, message: (e as Error).message });
      const message = gone
        ? `The ${e.field === "stage" ? "stage" : "assignee"} of this change was removed while it ran, so nothing of it was kept. Choose another and try again.`
        : "The bulk change failed on our side, so nothing of it was kept. Try again later.";
      await settle(t, job.id, null, actor);
      await d.jobs.finish(t, job.id, d.now(), "failed", message, "[]", 0, null);
      d.ended?.(job.kind, "failed");
      return;
    }
    const set = "set" in order.change ? order.change.set : null;
    const audit = { tenantId: t, userId: auth.userId, action: "crm.deals_bulk", ip: req.ip, userAgent: req.userAgent, detail: { job_id: job.id, action: set ? "change" : "delete", ...(set ?? {}), deals: updated } };
    await d.jobs.finish(t, job.id, d.now(), "succeeded", null, "[]", 0, audit);
    d.ended?.(job.kind, "succeeded");
    forgetLater(t, job.id);
  }

  /** Reverts every undo entry left of bulk job `jobId`, step by step (counted on `undoJobId` when given). */
  async function settle(tenantId: string, jobId: string, undoJobId: string | null, actor: ReturnType<typeof userActor>): Promise<void> {
    let size = 16;
    for (;;) {
      const [r, took] = await timed(() => d.bulk.revert(tenantId, jobId, undoJobId, d.now(), d.now() + JOB_LEASE_MS, size, actor));
      if (r.entries === 0) return;
      size = nextStepSize(size, took, { min: 4, max: 2_000, targetMs: target });
      await fairTurn();
      await d.bulk.catchUp?.();
    }
  }

  /** A bulk change's log is kept while it may be undone, then dropped in bounded steps. */
  function forgetLater(tenantId: string, jobId: string): void {
    const timer = setTimeout(() => void forget(tenantId, jobId).catch((e) => d.log({ level: "warn", msg: "bulk change log clean-up failed", job: jobId, message: (e as Error).message })), BULK_UNDO_WINDOW_MS + 1_000);
    timer.unref?.();
  }
  async function forget(tenantId: string, jobId: string): Promise<void> {
    // A deleted deal's entry holds its row, timeline and notes: smaller steps than an import's.
    while ((await d.jobs.dropUndo(tenantId, jobId, 500)) > 0) await nextTurn();
  }

  /** POST /crm/jobs/{id}/undo: the caller's last bulk change, within ten minutes of its end; the undo is a job too. */
  async function undo(auth: Principal, id: string, req: RequestInfo): Promise<JobRead> {
    const job = await d.jobs.get(auth.tenantId, id);
    if (!job || job.kind !== BULK_KIND) throw errors.notFound("No bulk change has this id in this organization.");
    if (job.user_id !== auth.userId) throw errors.forbidden("Only the member who made a bulk change can undo it.");
    const detail = JSON.parse(job.detail ?? "{}") as BulkDetail;
    if (job.status === "running") throw errors.conflict("bulk_change_running", "This bulk change is still running. Undo it once it has finished.");
    if (job.status === "failed") throw errors.conflict("nothing_to_undo", "This bulk change failed and nothing of it was kept, so there is nothing to undo.");
    if (detail.undone_by) throw errors.conflict("already_undone", "This bulk change has already been undone.");
    const last = await d.bulk.lastOf(auth.tenantId, auth.userId);
    if (last?.id !== job.id) throw errors.conflict("not_last_bulk_change", "Only your last bulk change can be undone, and you have made another since.");
    if (d.now() > Number(job.finished_at) + BULK_UNDO_WINDOW_MS) throw errors.conflict("undo_expired", "A bulk change can be undone for 10 minutes after it ends, and this one ended longer ago.");
    const undoJob = newJob(auth, BULK_UNDO_KIND, Number(job.updated), { action: "undo", undo_of: job.id });
    if (!(await d.jobs.create(undoJob))) throw tooManyJobs();
    await d.bulk.setDetail(auth.tenantId, job.id, JSON.stringify({ ...detail, undone_by: undoJob.id }));
    d.tracker.track(undoJob.id, runUndo(auth.tenantId, auth.userId, undoJob.id, job.id, req));
    return toJobRead(undoJob);
  }

  async function runUndo(tenantId: string, userId: string, undoJobId: string, jobId: string, req: RequestInfo | null, message: string | null = null): Promise<void> {
    try {
      await settle(tenantId, jobId, undoJobId, { type: "user", id: userId });
    } catch (e) {
      d.log({ level: "error", msg: "bulk change undo failed", job: undoJobId, error: (e as Error).name, message: (e as Error).message });
      // What was put back stays put back; the rest can be undone again (the change is still the user's last).
      const job = await d.jobs.get(tenantId, jobId);
      const { undone_by: _, ...detail } = JSON.parse(job?.detail ?? "{}") as BulkDetail;
      await d.bulk.setDetail(tenantId, jobId, JSON.stringify(detail));
      await d.jobs.finish(tenantId, undoJobId, d.now(), "failed", "The undo stopped part-way on our side. Try Undo again to put back the rest.", "[]", 0, null);
      d.ended?.(BULK_UNDO_KIND, "failed");
      return;
    }
    const audit = { tenantId, userId, action: "crm.deals_bulk_undone", ip: req?.ip ?? null, userAgent: req?.userAgent ?? null, detail: { job_id: undoJobId, undo_of: jobId } };
    await d.jobs.finish(tenantId, undoJobId, d.now(), "succeeded", message, "[]", 0, audit);
    d.ended?.(BULK_UNDO_KIND, "succeeded");
  }

  // A bulk change a dead server left running is reverted (it lands whole or not at all); one
  // whose undo window has passed loses its log; an undo left running is finished (forward).
  d.tracker.recoverKind(BULK_KIND, async (o) => {
    if (o.status !== "running") return forget(o.tenant_id, o.id);
    const job = await d.jobs.get(o.tenant_id, o.id);
    await settle(o.tenant_id, o.id, null, job?.user_id ? { type: "user", id: job.user_id } : { type: "system", id: null });
    await d.jobs.finish(o.tenant_id, o.id, d.now(), "failed", RESTARTED, "[]", 0, null);
    d.ended?.(BULK_KIND, "failed");
    d.log({ level: "warn", msg: "bulk change rolled back after a restart", job: o.id });
  });
  d.tracker.recoverKind(BULK_UNDO_KIND, async (o) => {
    if (o.status !== "running") return forget(o.tenant_id, o.id);
    const job = await d.jobs.get(o.tenant_id, o.id);
    const of = (JSON.parse(job?.detail ?? "{}") as BulkDetail).undo_of;
    if (!job?.user_id || !of) {
      await d.jobs.finish(o.tenant_id, o.id, d.now(), "failed", RESTARTED, "[]", 0, null);
      return;
    }
    await runUndo(o.tenant_id, job.user_id, o.id, of, null, RESTARTED_UNDO_LEFT);
    d.log({ level: "warn", msg: "bulk change undo finished after a restart", job: o.id });
  });

  return { start, undo };
}

export type BulkService = ReturnType<typeof createBulkService>;
