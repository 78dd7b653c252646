/**
 * Bulk changes of the deal list (issue 32): the rows ticked, or every deal matching the list's
 * filters and search, moved to a stage, given an assignee or deleted in one job
 * (POST /crm/deals/bulk). While it runs a progress bar (the import's polling); then what it did,
 * with an Undo button for as long as the server accepts one (the job's undo_until).
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { api, type ImportJob, type Stage, type User } from "../api/client";
import { ConfirmDialog } from "../shared/dialog";
import { errorMessage } from "../shared/states";
import { useJobPolling } from "../import/job-progress";
import { savedQueryOf } from "./saved-views";
import type { DealView } from "./view";

/** The deals a bulk change is about: ticked ids, or all that match the view. */
export interface Selection {
  ids: Set<string>;
  allMatching: boolean;
}

const deals = (n: number) => `${n.toLocaleString()} ${n === 1 ? "deal" : "deals"}`;

/** What a finished job did, as one sentence. */
export function bulkOutcome(job: ImportJob, stageName: (key: string) => string, personName: (id: string | null) => string): string {
  const b = job.bulk;
  if (job.kind === "deals_bulk_undo") {
    const parts = [
      job.updated > 0 && `${deals(job.updated)} put back as they were`,
      job.added > 0 && `${deals(job.added)} brought back`,
      job.unchanged > 0 && `${deals(job.unchanged)} left alone because someone changed them since`,
    ].filter(Boolean) as string[];
    return parts.length ? `Undone: ${parts.join(", ")}.` : "Undone. There was nothing left to put back.";
  }
  const what =
    b?.action === "delete"
      ? `Deleted ${deals(job.updated)}`
      : b?.set?.stage !== undefined && b.set.assigned_to !== undefined
        ? `Moved ${deals(job.updated)} to ${stageName(b.set.stage)} and assigned them to ${personName(b.set.assigned_to)}`
        : b?.set?.stage !== undefined
          ? `Moved ${deals(job.updated)} to ${stageName(b.set.stage)}`
          : `Assigned ${deals(job.updated)} to ${personName(b?.set?.assigned_to ?? null)}`;
  return `${what}${job.unchanged > 0 ? ` (${deals(job.unchanged)} already so, or gone)` : ""}.`;
}

export interface BulkBarProps {
  view: DealView;
  selection: Selection;
  /** Deals on the page shown, and all matching the view. */
  pageCount: number;
  total: number;
  stages: Stage[];
  people: User[] | null;
  me: User;
  onSelection: (s: Selection) => void;
  /** The job's deals were written: the list reloads. */
  onDone: () => void;
}

export function BulkBar({ view, selection, pageCount, total, stages, people, me, onSelection, onDone }: BulkBarProps) {
  const [job, setJob] = useState<ImportJob | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [now, setNow] = useState(Date.now());
  // The bar goes as the change starts (its control had focus): focus moves to the job's message, so a keyboard or screen reader user follows it.
  const result = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (job) result.current?.focus();
  }, [job?.id]);
  useJobPolling(job, (next) => {
    setJob(next);
    if (next.status !== "running") onDone();
  });
  // The Undo button goes when the server would refuse it (ten minutes after the change ended).
  const until = job?.bulk?.undo_until ? Date.parse(job.bulk.undo_until) : null;
  useEffect(() => {
    if (until === null) return;
    const timer = setTimeout(() => setNow(Date.now()), Math.max(0, until - Date.now()) + 50);
    return () => clearTimeout(timer);
  }, [until]);

  const count = selection.allMatching ? total : selection.ids.size;
  const stageName = (key: string) => stages.find((s) => s.key === key)?.name ?? key;
  const personName = (id: string | null) => (id === null ? "nobody" : id === me.id ? "you" : (people?.find((p) => p.id === id)?.full_name ?? people?.find((p) => p.id === id)?.email ?? "them"));

  async function send(change: { set: { stage?: string; assigned_to?: string | null } } | { delete: true }) {
    setBusy(true);
    setError(null);
    try {
      const { sort_by: _b, sort_dir: _d, size: _s, ...filter } = savedQueryOf(view);
      const target = selection.allMatching ? { filter } : { ids: [...selection.ids] };
      setJob(await api.post("/api/v1/crm/deals/bulk", { body: { ...target, ...change } }));
      onSelection({ ids: new Set(), allMatching: false });
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
      setConfirming(false);
    }
  }
  async function undo() {
    if (!job) return;
    setBusy(true);
    setError(null);
    try {
      setJob(await api.post("/api/v1/crm/jobs/{id}/undo", { path: { id: job.id } }));
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  }

  const running = job?.status === "running";
  return (
    <>
      {count > 0 && !running ? (
        <div class="bulk-bar" role="region" aria-label="Change the selected deals">
          <p class="bulk-count" aria-live="polite">
            <strong>{selection.allMatching ? `All ${deals(total)} matching` : `${count.toLocaleString()} selected`}</strong>
            {!selection.allMatching && count >= pageCount && total > count ? (
              <>
                {" · "}
                <button type="button" class="link" onClick={() => onSelection({ ids: selection.ids, allMatching: true })}>
                  Select all {total.toLocaleString()} matching
                </button>
              </>
            ) : null}
            {" · "}
            <button type="button" class="link" onClick={() => onSelection({ ids: new Set(), allMatching: false })}>
              Clear
            </button>
          </p>
          <label class="bulk-control">
            <span>Change stage</span>
            <select disabled={busy} value="" onChange={(e) => void send({ set: { stage: (e.target as HTMLSelectElement).value } })}>
              <option value="" disabled>
                Move to…
              </option>
              {stages.map((s) => (
                <option key={s.key} value={s.key}>
                  {s.name}
                </option>
              ))}
            </select>
          </label>
          <label class="bulk-control">
            <span>Change assignee</span>
            <select
              disabled={busy}
              value=""
              onChange={(e) => {
                const v = (e.target as HTMLSelectElement).value;
                void send({ set: { assigned_to: v === "-" ? null : v } });
              }}
            >
              <option value="" disabled>
                Assign to…
              </option>
              <option value={me.id}>Me</option>
              {(people ?? [])
                .filter((p) => p.id !== me.id)
                .map((p) => (
                  <option key={p.id} value={p.id}>
                    {p.full_name ?? p.email}
                  </option>
                ))}
              <option value="-">Nobody (unassigned)</option>
            </select>
          </label>
          <button type="button" class="danger small" disabled={busy} onClick={() => setConfirming(true)}>
            Delete
          </button>
        </div>
      ) : null}
      {job ? (
        <div class="bulk-result" role="status" tabIndex={-1} ref={result}>
          {running ? (
            <label>
              {job.kind === "deals_bulk_undo" ? "Undoing" : "Changing"}: {job.done.toLocaleString()} of {deals(job.total)} done.
              <progress max={job.total || 1} value={job.done} />
            </label>
          ) : job.status === "succeeded" ? (
            <p class="ok">
              {bulkOutcome(job, stageName, personName)}{" "}
              {until !== null && now < until ? (
                <button type="button" class="small" disabled={busy} onClick={() => void undo()}>
                  Undo
                </button>
              ) : null}{" "}
              <button type="button" class="link" onClick={() => setJob(null)}>
                Dismiss
              </button>
            </p>
          ) : (
            <p class="error" role="alert">
              {job.message ?? "The change failed, so nothing of it was kept. Try again."}{" "}
              <button type="button" class="link" onClick={() => setJob(null)}>
                Dismiss
              </button>
            </p>
          )}
        </div>
      ) : null}
      {error ? (
        <p class="error" role="alert">
          {error}
        </p>
      ) : null}
      <ConfirmDialog
        open={confirming}
        title={`Delete ${deals(count)}?`}
        confirmLabel={`Delete ${deals(count)}`}
        danger
        busy={busy}
        onConfirm={() => void send({ delete: true })}
        onCancel={() => setConfirming(false)}
      >
        <p>They will be deleted for everyone in your organization. You can undo this for 10 minutes afterwards.</p>
      </ConfirmDialog>
    </>
  );
}
