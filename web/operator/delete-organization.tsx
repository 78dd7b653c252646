/** Deleting an organization: its subdomain typed again, the password when asked, then its export's link, shown once. */
import { useEffect, useState } from "preact/hooks";
import { ApiError } from "../api/client";
import { Modal } from "../shared/dialog";
import { Field } from "../shared/field";
import { errorMessage } from "../shared/states";
import { NO_RETRY, api, needsStepUp } from "./call";

export interface ToDelete {
  id: string;
  name: string;
  subdomain: string;
}

/** Whether the organization is gone from the list (its deletion has ended and the export can be fetched). */
async function gone(subdomain: string): Promise<boolean> {
  const r = await api.get("/api/v1/operator/organizations", { query: { q: subdomain, size: 100 }, ...NO_RETRY });
  return !r.items.some((o) => o.subdomain === subdomain);
}

export function DeleteOrganizationDialog({ org, askStepUp, onClose, onStarted }: {
  org: ToDelete | null;
  askStepUp: (action: string, run: () => Promise<void>) => void;
  onClose: () => void;
  onStarted: () => void;
}) {
  const [typed, setTyped] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [exportUrl, setExportUrl] = useState<string | null>(null);
  const [done, setDone] = useState(false);

  useEffect(() => {
    setTyped("");
    setError(null);
    setExportUrl(null);
    setDone(false);
  }, [org?.id]);

  // While the rows go, look every 2 seconds whether it is gone: the export can be fetched only then.
  useEffect(() => {
    if (!org || !exportUrl || done) return;
    const timer = setInterval(() => {
      gone(org.subdomain).then((g) => { if (g) { setDone(true); onStarted(); } }).catch(() => {});
    }, 2000);
    return () => clearInterval(timer);
  }, [org?.subdomain, exportUrl, done]);

  if (!org) return <Modal open={false} title="Delete an organization" onClose={onClose}><div /></Modal>;

  const run = async () => {
    setBusy(true);
    setError(null);
    try {
      const r = await api.delete("/api/v1/operator/organizations/{id}", { path: { id: org.id }, body: { subdomain: typed }, ...NO_RETRY });
      setExportUrl(r.export_url);
      onStarted();
    } catch (e) {
      if (needsStepUp(e)) askStepUp(`delete ${org.subdomain}`, run);
      else setError(e instanceof ApiError && e.items.length ? (e.fieldError("subdomain") ?? e.detail) : errorMessage(e));
    } finally {
      setBusy(false);
    }
  };
  const submit = (e: Event) => {
    e.preventDefault();
    void run();
  };

  return (
    <Modal open title={done ? `${org.name} is deleted` : exportUrl ? `Deleting ${org.name}` : `Delete ${org.name}?`} onClose={onClose}>
      {exportUrl ? (
        <div>
          <p>{done ? `${org.name} (${org.subdomain}) is deleted.` : `${org.name} (${org.subdomain}) is being deleted. Its members can no longer sign in.`}</p>
          {done ? (
            <p>
              <a href={exportUrl} download>Download its final export</a> (deals, accounts and contacts as CSV files in one tar file).
              The link works once and is not shown again: download it now.
            </p>
          ) : (
            <p class="muted" role="status">Its rows are being deleted. The link to its final export appears here when that is done: keep this window open.</p>
          )}
          <div class="actions"><button type="button" onClick={onClose}>Close</button></div>
        </div>
      ) : (
        <form onSubmit={submit}>
          <p>
            This deletes every member, deal, account, contact and log entry of {org.name} for good. A final export of its deals, accounts and contacts is kept
            for 7 days, and you can download it once.
          </p>
          <Field label={`Type ${org.subdomain} to confirm`} value={typed} onValue={setTyped} autoComplete="off" required autoFocus error={error ?? undefined} />
          <div class="actions">
            <button type="button" onClick={onClose}>Cancel</button>
            <button type="submit" class="danger" disabled={busy || typed.trim().toLowerCase() !== org.subdomain}>{busy ? "Deleting…" : "Delete for good"}</button>
          </div>
        </form>
      )}
    </Modal>
  );
}
