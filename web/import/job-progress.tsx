/**
 * An import job after its upload: a progress bar while its rows are written (the job is read
 * again every half second), then what its rows did, in sentences; or why it failed, with the rows
 * that could not be written.
 */
import { useEffect } from "preact/hooks";
import { api, type ImportJob, type TransferKind } from "../api/client";
import { Link } from "../shared/router";

const POLL_MS = 500;
const SINGULAR: Record<TransferKind, string> = { deals: "deal", accounts: "account", contacts: "contact" };

/** "1 deal" / "3 deals". */
const count = (n: number, kind: TransferKind) => `${n.toLocaleString()} ${n === 1 ? SINGULAR[kind] : kind}`;

/** What a finished job's rows did, as one sentence. */
export function outcome(job: ImportJob & { kind: TransferKind }): string {
  const parts = [
    job.added > 0 && `${count(job.added, job.kind)} added`,
    job.updated > 0 && `${count(job.updated, job.kind)} updated`,
    job.unchanged > 0 && `${count(job.unchanged, job.kind)} already up to date, so left as they were`,
  ].filter(Boolean) as string[];
  if (parts.length === 0) return "The import is done. The file had no rows, so nothing changed.";
  const list = parts.length === 1 ? parts[0] : `${parts.slice(0, -1).join(", ")} and ${parts.at(-1)}`;
  return `The import is done: ${list}.`;
}

/** While a job runs, it is read again every half second and handed to `onChange` (imports, and bulk changes of deals). */
export function useJobPolling(job: ImportJob | null, onChange: (job: ImportJob) => void): void {
  useEffect(() => {
    if (!job) return;
    if (job.status !== "running") return;
    let live = true;
    const timer = setTimeout(async () => {
      try {
        const next = await api.get("/api/v1/crm/jobs/{id}", { path: { id: job.id } });
        if (live) onChange(next);
      } catch {
        // A failed poll is tried again with the next render's timer.
        if (live) onChange({ ...job });
      }
    }, POLL_MS);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [job]);
}

export function JobProgress({ job: shown, onChange }: { job: ImportJob; onChange: (job: ImportJob) => void }) {
  useJobPolling(shown, onChange);
  // The import screen shows imports only.
  const job = shown as ImportJob & { kind: TransferKind };
  if (job.status === "running") {
    const share = job.total === 0 ? 0 : Math.round((job.done / job.total) * 100);
    return (
      <div class="report job" role="status">
        <label for="import-progress">
          Importing: {job.done.toLocaleString()} of {count(job.total, job.kind)} written ({share}%). You can leave this page; the import goes on.
        </label>
        <progress id="import-progress" max={job.total || 1} value={job.done} />
      </div>
    );
  }
  if (job.status === "succeeded") {
    return (
      <div class="report job" role="status">
        <p class="ok">{outcome(job)}</p>
        <Link class="button" href={`/${job.kind}`}>
          See the {job.kind}
        </Link>
      </div>
    );
  }
  return (
    <div class="report job">
      <p role="alert">{job.message ?? "The import failed, so nothing of it was kept. Try again."}</p>
      {job.errors.length > 0 ? (
        <ul class="job-errors">
          {job.errors.map((e, i) => (
            <li key={i}>
              Line {e.line}
              {e.column ? `, column ${e.column}` : ""}: {e.message}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
