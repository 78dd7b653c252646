import { useEffect, useState } from "preact/hooks";
import { ApiError } from "../api/client";
import type { components } from "../api/schema.gen";
import { ConfirmDialog } from "../shared/dialog";
import { Field } from "../shared/field";
import { formatDateTime } from "../shared/format";
import { Empty, Loading, errorMessage } from "../shared/states";
import { toast } from "../shared/toast";
import { useLoad } from "../shared/use-load";
import { NO_RETRY, api, needsStepUp } from "./call";
import { Failure } from "./failure";
import { useStepUp } from "./step-up";

type Backups = components["schemas"]["ConsoleBackups"];

const bytes = (n: number) => (n < 1024 * 1024 ? `${Math.max(1, Math.round(n / 1024))} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`);

/** The backup being made: the copy's progress, then the integrity check. */
function Running({ run }: { run: NonNullable<Backups["running"]> }) {
  const copying = run.bytes_done < run.bytes_total;
  const percent = run.bytes_total > 0 ? Math.floor((run.bytes_done / run.bytes_total) * 100) : 0;
  return (
    <div class="op-progress" role="status">
      <p>
        Making a backup, started {formatDateTime(run.started_at)} by {run.by === "schedule" ? "the schedule" : run.by}:{" "}
        {copying ? `copying, ${percent} %` : "checking the copy"}.
      </p>
      <progress max={run.bytes_total || 1} value={copying ? run.bytes_done : undefined} aria-label="Backup progress" />
    </div>
  );
}

/** The schedule: daily at a time (UTC), keeping the newest N; the password again after 10 minutes. */
function Schedule({ data, saved }: { data: Backups; saved: (b: Backups) => void }) {
  const s = data.schedule;
  const [enabled, setEnabled] = useState(s.enabled);
  const [at, setAt] = useState(s.at_utc ?? "03:00");
  const [keep, setKeep] = useState(String(s.keep ?? 7));
  const [busy, setBusy] = useState(false);
  const [errors, setErrors] = useState<{ at?: string; keep?: string }>({});
  const stepUp = useStepUp();
  const save = async () => {
    setBusy(true);
    setErrors({});
    try {
      const b = await api.put("/api/v1/operator/backups/schedule", { body: { enabled, at_utc: at, keep: Number(keep) }, ...NO_RETRY });
      toast(enabled ? `Backups will be made daily at ${at} UTC, keeping the newest ${keep}.` : "Scheduled backups are off.");
      saved(b);
    } catch (e) {
      if (needsStepUp(e)) stepUp.ask("change the backup schedule", save);
      else if (e instanceof ApiError && e.items.length) setErrors({ at: e.fieldError("at_utc") ?? undefined, keep: e.fieldError("keep") ?? undefined });
      else toast(errorMessage(e), "error");
    } finally {
      setBusy(false);
    }
  };
  const from =
    s.source === "environment"
      ? `Now set by SUITE_BACKUP_EVERY and SUITE_BACKUP_KEEP: every ${s.every_hours} hours, keeping ${s.keep}. Saving here replaces them.`
      : s.source === "none"
        ? "No backups are scheduled."
        : s.enabled
          ? `Daily at ${s.at_utc} UTC, keeping the newest ${s.keep}.`
          : "Scheduled backups are off.";
  return (
    <form class="op-schedule" onSubmit={(e) => (e.preventDefault(), void save())}>
      <h2>Schedule</h2>
      <p class="hint">{from}{s.next_at && ` The next one is due ${formatDateTime(s.next_at)}.`}</p>
      <label class="check"><input type="checkbox" checked={enabled} onChange={(e) => setEnabled((e.target as HTMLInputElement).checked)} /> Make a backup every day</label>
      <div class="op-schedule-fields">
        <Field label="At (UTC)" type="time" value={at} onValue={setAt} error={errors.at} disabled={!enabled} required />
        <Field label="Backups to keep" type="number" min={1} max={365} value={keep} onValue={setKeep} error={errors.keep} disabled={!enabled} required />
      </div>
      <button type="submit" disabled={busy}>{busy ? "Saving…" : "Save the schedule"}</button>
      {stepUp.dialog}
    </form>
  );
}

/** Backups of a SQLite server: the files, "Back up now", download (a one-time link), delete, the schedule. */
export function Backups() {
  const { data: loaded, error, reload } = useLoad(() => api.get("/api/v1/operator/backups", NO_RETRY), []);
  const [fresh, setFresh] = useState<Backups | null>(null);
  const data = fresh ?? loaded;
  const [deleting, setDeleting] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const stepUp = useStepUp();
  const refresh = () => {
    setFresh(null);
    reload();
  };

  // While a backup is being made, its progress every second; also while the schedule's next one is
  // due (a schedule just saved starts one at once, and the page follows it).
  const due = data?.schedule.next_at ? Date.parse(data.schedule.next_at) <= Date.now() + 2000 : false;
  useEffect(() => {
    if (!data?.running && !due) return;
    const timer = setTimeout(refresh, 1000);
    return () => clearTimeout(timer);
  }, [data]);

  if (error) return <Failure error={error} retry={refresh} />;
  if (!data) return <Loading />;

  const backUpNow = async () => {
    setBusy(true);
    try {
      await api.post("/api/v1/operator/backups", NO_RETRY);
      toast("The backup is being made. This page shows its progress.");
      refresh();
    } catch (e) {
      toast(errorMessage(e), "error");
    } finally {
      setBusy(false);
    }
  };
  const download = async (name: string) => {
    try {
      const link = await api.post("/api/v1/operator/backups/{name}/link", { path: { name }, ...NO_RETRY });
      const a = document.createElement("a");
      a.href = link.url;
      a.download = name;
      document.body.append(a);
      a.click();
      a.remove();
    } catch (e) {
      if (needsStepUp(e)) stepUp.ask("download this backup", () => download(name));
      else toast(errorMessage(e), "error");
    }
  };
  const remove = async (name: string) => {
    try {
      await api.delete("/api/v1/operator/backups/{name}", { path: { name }, ...NO_RETRY });
      setDeleting(null);
      toast("The backup was deleted.");
      refresh();
    } catch (e) {
      setDeleting(null);
      if (needsStepUp(e)) stepUp.ask("delete this backup", () => remove(name));
      else toast(errorMessage(e), "error");
    }
  };

  if (!data.available) {
    return (
      <section>
        <h1>Backups</h1>
        <p class="op-note">{data.note}</p>
      </section>
    );
  }
  return (
    <section>
      <h1>Backups</h1>
      <p class="hint">Backups are written to <code>{data.folder}</code>, each checked before it is kept. {data.note}</p>
      <p><button type="button" class="primary" disabled={busy || data.running !== null} onClick={() => void backUpNow()}>{data.running ? "A backup is being made…" : "Back up now"}</button></p>
      {data.running && <Running run={data.running} />}
      {!data.running && data.last && (
        <p class={data.last.ok ? "op-last" : "error"} role={data.last.ok ? undefined : "alert"}>
          {data.last.ok
            ? `The last backup, ${data.last.name}, was written ${formatDateTime(data.last.finished_at)} (${bytes(data.last.bytes ?? 0)}).`
            : `The last backup failed ${formatDateTime(data.last.finished_at)}: ${data.last.error}. Check the server's log and the free space in the backup folder, then try again.`}
        </p>
      )}
      {data.backups.length === 0 ? (
        <Empty>No backups in the folder. Press "Back up now", or set a schedule below.</Empty>
      ) : (
        <div class="table-wrap">
          <table class="op-table">
            <thead><tr><th>Made</th><th>File</th><th>Size</th><th><span class="visually-hidden">Actions</span></th></tr></thead>
            <tbody>
              {data.backups.map((b) => (
                <tr key={b.name}>
                  <td data-label="Made">{formatDateTime(b.created_at)}</td>
                  <td data-label="File"><code>{b.name}</code></td>
                  <td data-label="Size">{bytes(b.bytes)}</td>
                  <td class="op-actions">
                    <button type="button" onClick={() => void download(b.name)}>Download</button>
                    <button type="button" class="danger" onClick={() => setDeleting(b.name)}>Delete</button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Schedule key={`${data.schedule.source} ${data.schedule.enabled} ${data.schedule.at_utc} ${data.schedule.keep}`} data={data} saved={(b) => setFresh(b)} />
      <ConfirmDialog open={deleting !== null} title="Delete this backup?" confirmLabel="Delete backup" danger onCancel={() => setDeleting(null)} onConfirm={() => deleting && void remove(deleting)}>
        <p>The file {deleting} is removed from the server for good. Keep a downloaded copy if you may need it.</p>
      </ConfirmDialog>
      {stepUp.dialog}
    </section>
  );
}
