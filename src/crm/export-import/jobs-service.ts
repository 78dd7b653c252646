import type { Principal, RequestInfo } from "../../auth/service";
import { cpuSizedSteps, nextStepSize } from "../../kernel/step-size";
import { newId } from "../../kernel/ids";
import { runAs } from "../../db/stall-monitor";
import { requireAdmin } from "../../kernel/principal";
import { AppError, RequestValidationError } from "../../kernel/errors";
import { type Page, offsetOf, pageOf } from "../../kernel/paging";
import type { Limits, RateLimiter } from "../../security/rate-limit";
import { contactName } from "../model";
import type { CrmStore } from "../repo";
import { fairTurn, nextTurn, receiveUpload, removeStaleUploads, removeUpload, replayUpload, syntaxInto } from "./import-upload";
import { BULK_UNDO_WINDOW_MS, JOB_LEASE_MS, JOB_RETRY_AFTER_S, MAX_RUNNING_IMPORTS, type JobRead, batchTargetMs, toJobRead } from "./jobs-model";
import { ImportRowError, type JobRow, type JobsStore } from "./jobs-repo";
import { type ImportItem, type Known, createRowChecker, nameKey } from "./import-rows";
import type { ImportReport, Kind, RowError } from "./model";
import type { PeopleCursor, PeopleStep, TransferStore } from "./repo";

export interface JobsDeps {
  now: () => number;
  repo: CrmStore;
  transfer: TransferStore;
  jobs: JobsStore;
  limiter: RateLimiter;
  limits: Limits;
  log: (line: Record<string, unknown>) => void;
  /** Told each time a job ends here (the metrics' finished-jobs counter). */
  ended?: (kind: string, status: "succeeded" | "failed") => void;
}

const tooManyJobs = (detail: string) => new AppError(429, "too_many_jobs", detail, { "Retry-After": String(JOB_RETRY_AFTER_S) });
const EXPORT_SLOT_MS = 10_000;
const RESTARTED = "The server stopped during this import, so nothing of it was kept. Upload the file again.";

/**
 * Imports as background jobs (issue 27). An upload is streamed to a temporary file and checked
 * whole as it arrives (a dry run answers there); a valid file becomes a job, answered 202, whose
 * rows are then written in batches of one short transaction each, with an event-loop turn
 * between. A job lands whole or not at all: every batch logs what it changed, and a job that
 * fails, or whose server died, is undone from that log.
 */
export function createJobsService(d: JobsDeps) {
  /** Imports and exports running in this server, by "import:" or "export:" and organization, and imports in all. */
  const busy = new Set<string>();
  let importsRunning = 0;
  /** Jobs this server is writing: recovery leaves them alone. */
  const mine = new Set<string>();
  /** Their promises, for settled(). */
  const writing = new Set<Promise<unknown>>();
  /** Other features' job kinds (bulk changes): their own recovery of a job left by a dead server. */
  const recoverers = new Map<string, (job: { tenant_id: string; id: string; kind: string; status: string }) => Promise<void>>();

  function takeSlot(tenantId: string, isImport: boolean): () => void {
    const key = `${isImport ? "import" : "export"}:${tenantId}`;
    if (busy.has(key)) throw tooManyJobs(`This organization already has an ${isImport ? "import" : "export"} running. Try again when it has finished.`);
    if (isImport && importsRunning >= MAX_RUNNING_IMPORTS) throw tooManyJobs("The server is busy with other imports. Try again in a few seconds.");
    busy.add(key);
    if (isImport) importsRunning++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      busy.delete(key);
      if (isImport) importsRunning--;
    };
  }

  /**
   * A download's slot: given back when the stream ends or is cancelled, and in any case after
   * EXPORT_SLOT_MS (an answer nobody reads must not lock the organization's exports for good).
   */
  function exportSlot(tenantId: string): () => void {
    const release = takeSlot(tenantId, false);
    const timer = setTimeout(release, EXPORT_SLOT_MS);
    timer.unref?.();
    return () => {
      clearTimeout(timer);
      release();
    };
  }

  /**
   * The organization's names, read a bounded step at a time with a turn between (one read of them
   * all held the thread 16-31 ms at 15,000 accounts and contacts, and grows with them).
   */
  async function known(tenantId: string): Promise<Known> {
    const accountByName: Known["accountByName"] = new Map();
    const contactByName: Known["contactByName"] = new Map();
    await readAll((after, limit) => d.transfer.accountNamesAfter(tenantId, after, limit), (a) => {
      const key = nameKey(a.name);
      if (!accountByName.has(key)) accountByName.set(key, { id: a.id, name: a.name });
    });
    await readAll((after, limit) => d.transfer.contactNamesAfter(tenantId, after, limit), (c) => {
      const name = contactName(c.first_name, c.last_name);
      if (!contactByName.has(nameKey(name))) contactByName.set(nameKey(name), { id: c.id, name });
    });
    const [users, stages] = await Promise.all([d.transfer.members(tenantId), d.repo.stages(tenantId)]);
    return { accountByName, contactByName, users, stages, contactName };
  }

  /** Every row of a stepped read, each step sized by its cost (with `take`'s) and followed by a turn. */
  async function readAll<R>(read: (after: PeopleCursor | null, limit: number) => Promise<PeopleStep<R>>, take: (r: R) => void): Promise<void> {
    const sizer = cpuSizedSteps({ first: 500, min: 100, max: 20_000, targetMs: 5 });
    let after: PeopleCursor | null = null;
    for (;;) {
      const next = await sizer.step(async (size) => {
        const step = await read(after, size);
        for (const r of step.rows) take(r);
        return step.next;
      });
      if (next === null) return;
      after = next;
      await nextTurn();
    }
  }

  /**
   * POST …/import: checks the whole file as it streams in. A dry run answers its report; a file
   * with errors a 422 (loc ["body", line, column]); a valid one a running job.
   */
  async function upload(auth: Principal, kind: Kind, body: ReadableStream<Uint8Array> | null, opts: { dryRun: boolean; createMissing: boolean; mapping?: string[] | null }, req: RequestInfo): Promise<ImportReport | JobRead> {
    requireAdmin(auth);
    const release = takeSlot(auth.tenantId, true);
    let handedOver = false;
    try {
      const limit = await d.limiter.hit(d.limits.importsPerAdmin, `${auth.tenantId}:${auth.userId}`);
      if (!limit.allowed) throw new AppError(429, "rate_limited", "Too many imports for now. Try again later.", { "Retry-After": String(limit.retryAfterSeconds) });
      const checker = createRowChecker(kind, await known(auth.tenantId), opts.createMissing, opts.mapping ?? null);
      const path = await receiveUpload(body, checker);
      const plan = checker.finish();
      if (opts.dryRun || plan.errorCount > 0) {
        await removeUpload(path);
        const report: ImportReport = {
          kind, dry_run: opts.dryRun, rows: plan.rows, valid_rows: plan.validRows, error_count: plan.errorCount, errors: plan.errors, created: { ...plan.created },
        };
        if (opts.dryRun) return report;
        throw new RequestValidationError(plan.errors.map((e) => ({ loc: ["body", e.line, e.column ?? "row"], msg: e.message, type: "csv_row_invalid" })));
      }
      const now = d.now();
      const job: JobRow = {
        tenant_id: auth.tenantId, id: newId(), kind, status: "running", user_id: auth.userId, total: plan.rows, done: 0, added: 0, updated: 0, unchanged: 0,
        error_count: 0, errors: "[]", message: null, created_at: now, finished_at: null, lease_until: now + JOB_LEASE_MS, detail: null,
      };
      if (!(await d.jobs.create(job))) {
        await removeUpload(path);
        throw tooManyJobs("This organization already has an import running. Try again when it has finished.");
      }
      handedOver = true;
      mine.add(job.id);
      // Named in the stall monitor's warnings as the job, not as the request that started it.
      const run = runAs(`job import ${kind}`, () => write(auth, job, path, opts.createMissing, opts.mapping ?? null, req))
        .finally(() => {
          release();
          void removeUpload(path);
        })
        // A finished job's undo entries go after its slot is free (a client told "succeeded" may start the next import).
        .then(() => forget(auth.tenantId, job.id))
        .catch((e) => d.log({ level: "error", msg: "import job clean-up failed", job: job.id, message: (e as Error).message }))
        .finally(() => {
          mine.delete(job.id);
          writing.delete(run);
        });
      writing.add(run);
      return toJobRead(job);
    } finally {
      if (!handedOver) release();
    }
  }

  /** The job's rows, read again from its file and written batch by batch; on any failure, undone. */
  async function write(auth: Principal, job: JobRow, path: string, createMissing: boolean, mapping: string[] | null, req: RequestInfo): Promise<void> {
    const t = auth.tenantId;
    let checker: ReturnType<typeof createRowChecker>;
    try {
      checker = createRowChecker(job.kind as Kind, await known(t), createMissing, mapping);
    } catch (e) {
      d.log({ level: "error", msg: "import job failed", job: job.id, error: (e as Error).name, message: (e as Error).message });
      await d.jobs.finish(t, job.id, d.now(), "failed", "The import failed on our side, so nothing of it was kept. Try again later.", "[]", 0, null);
      d.ended?.(job.kind, "failed");
      return;
    }
    let batch: ImportItem[] = [];
    let rows = 0;
    let size = 16;
    checker.setSink((item) => void batch.push(item));
    const flush = async () => {
      if (batch.length === 0 && rows === 0) return;
      // SQLite: the wall time the writer is held; PostgreSQL: this thread's CPU (the transaction's
      // own time is the database server's, and small batches there rewrite the counters more often).
      const started = performance.now();
      const cpu = process.threadCpuUsage();
      await d.jobs.applyBatch(t, job.id, d.now(), d.now() + JOB_LEASE_MS, batch, checker.columns(), rows);
      const spent = process.threadCpuUsage(cpu);
      const took = Math.max(1, d.jobs.writesOnThisThread ? performance.now() - started : (spent.user + spent.system) / 1000);
      size = nextStepSize(size, took, { min: 4, max: 2_000, targetMs: batchTargetMs(d.jobs.writesOnThisThread) });
      batch = [];
      rows = 0;
      // Other organizations' requests waiting behind the batch run to their end first.
      await fairTurn();
      await d.jobs.catchUp?.();
    };
    let failure: { message: string; errors: RowError[]; count: number } | null = null;
    try {
      let header = true;
      await replayUpload(path, async (cells) => {
        checker.record(cells);
        if (header) return void (header = false);
        rows++;
        if (checker.plan.errorCount > 0) throw new Error("row invalid now");
        if (rows >= size) await flush();
      }).catch((e) => {
        if (checker.plan.errorCount === 0) syntaxInto(checker, e);
      });
      checker.finish();
      if (checker.plan.errorCount > 0) {
        failure = { message: "Some rows no longer match this organization's data (a name was changed or removed meanwhile), so nothing was kept. Fix them and import again.", errors: checker.plan.errors, count: checker.plan.errorCount };
      } else await flush();
    } catch (e) {
      if (e instanceof ImportRowError) failure = { message: `Line ${e.line} could not be written, so nothing was kept: ${e.message}`, errors: [{ line: e.line, column: e.column, message: e.message }], count: 1 };
      else {
        d.log({ level: "error", msg: "import job failed", job: job.id, error: (e as Error).name, message: (e as Error).message });
        failure = { message: "The import failed on our side, so nothing of it was kept. Try again later.", errors: [], count: 0 };
      }
    }
    if (failure) {
      await undo(t, job.id);
      await d.jobs.finish(t, job.id, d.now(), "failed", failure.message, JSON.stringify(failure.errors), failure.count, null);
      d.ended?.(job.kind, "failed");
      return;
    }
    const p = checker.plan;
    const audit = { tenantId: t, userId: auth.userId, action: "crm.import", ip: req.ip, userAgent: req.userAgent, detail: { kind: job.kind, deals: p.created.deals, accounts: p.created.accounts, contacts: p.created.contacts } };
    await d.jobs.finish(t, job.id, d.now(), "succeeded", null, "[]", 0, audit);
    d.ended?.(job.kind, "succeeded");
  }

  async function undo(tenantId: string, jobId: string): Promise<void> {
    while ((await d.jobs.undoStep(tenantId, jobId, 64)) > 0) await nextTurn();
  }
  async function forget(tenantId: string, jobId: string): Promise<void> {
    while ((await d.jobs.dropUndo(tenantId, jobId, 2_000)) > 0) await nextTurn();
  }

  return {
    upload,
    /** Hands recovery of a job kind to its feature (bulk changes: undo or finish what a dead server left). */
    recoverKind(kind: string, recover: (job: { tenant_id: string; id: string; kind: string; status: string }) => Promise<void>): void {
      recoverers.set(kind, recover);
    },
    /** Marks a job as written by this server (recovery leaves it alone) until `done` settles; for other features' job kinds. */
    track(jobId: string, done: Promise<unknown>): void {
      mine.add(jobId);
      const p = done.finally(() => {
        mine.delete(jobId);
        writing.delete(p);
      });
      writing.add(p);
    },
    /** Resolves once every job this server is writing has finished (tests, and a clean stop). */
    async settled(): Promise<void> {
      while (writing.size > 0) await Promise.allSettled([...writing]);
    },
    /** Holds the organization's one import-or-export slot while a download streams; the answer releases it. */
    exportSlot,
    async get(auth: Principal, id: string): Promise<JobRead> {
      const job = await d.jobs.get(auth.tenantId, id);
      if (!job) throw new AppError(404, "not_found", "No import job has this id in this organization.");
      return toJobRead(job);
    },
    async list(auth: Principal, q: { page: number; size: number }): Promise<Page<JobRead>> {
      const { rows, total } = await d.jobs.list(auth.tenantId, offsetOf(q.page, q.size), q.size);
      return pageOf(rows.map(toJobRead), total, q.page, q.size);
    },
    /**
     * Jobs whose server died (lease ended before `t`; on SQLite at start, every running one: one
     * server owns the file) are undone and marked failed; finished jobs' leftover undo entries go.
     */
    async recover(t: number): Promise<number> {
      let n = 0;
      await removeStaleUploads(Date.now());
      for (const o of await d.jobs.orphans(t, d.now() - BULK_UNDO_WINDOW_MS)) {
        if (mine.has(o.id)) continue;
        const own = recoverers.get(o.kind);
        if (own) {
          await own(o);
          if (o.status === "running") n++;
          continue;
        }
        if (o.status === "running") {
          await undo(o.tenant_id, o.id);
          await d.jobs.finish(o.tenant_id, o.id, d.now(), "failed", RESTARTED, "[]", 0, null);
          d.ended?.(o.kind, "failed");
          d.log({ level: "warn", msg: "import job rolled back after a restart", job: o.id });
          n++;
        } else await forget(o.tenant_id, o.id);
      }
      return n;
    },
  };
}

export type JobsService = ReturnType<typeof createJobsService>;
