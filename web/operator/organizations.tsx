import { useState } from "preact/hooks";
import { Pager } from "../shared/pager";
import { setQuery, useLocation } from "../shared/router";
import { formatDateTime } from "../shared/format";
import { Empty, Loading, errorMessage } from "../shared/states";
import { toast } from "../shared/toast";
import { useDebounced, useLoad } from "../shared/use-load";
import { NO_RETRY, api, needsStepUp } from "./call";
import { DeleteOrganizationDialog, type ToDelete } from "./delete-organization";
import { Failure } from "./failure";
import { useStepUp } from "./step-up";

/** Every organization, newest first; search by name or subdomain; disable and enable (the password again after 10 minutes). */
/** An estimate, so rounded: KB below a megabyte, MB below a gigabyte, else GB. */
const storage = (n: number) => (n < 1 << 20 ? `${Math.max(1, Math.round(n / 1024))} KB` : n < 1 << 30 ? `${(n / (1 << 20)).toFixed(1)} MB` : `${(n / (1 << 30)).toFixed(2)} GB`);

export function Organizations() {
  const { query } = useLocation();
  const page = Math.max(1, Number(query.get("page")) || 1);
  const [text, setText] = useState(query.get("q") ?? "");
  const q = useDebounced(text.trim(), 250);
  const { data, error, reload } = useLoad(() => api.get("/api/v1/operator/organizations", { query: { q: q || undefined, page, size: 20 }, ...NO_RETRY }), [q, page]);
  const stepUp = useStepUp();
  const [busy, setBusy] = useState<string | null>(null);
  const [toDelete, setToDelete] = useState<ToDelete | null>(null);

  const toggle = async (subdomain: string, disable: boolean) => {
    const run = async () => {
      setBusy(subdomain);
      try {
        const path = disable ? "/api/v1/operator/organizations/{subdomain}/disable" : "/api/v1/operator/organizations/{subdomain}/enable";
        await api.post(path, { path: { subdomain }, ...NO_RETRY });
        toast(disable ? `${subdomain} is disabled: its members cannot sign in or use it until you enable it again.` : `${subdomain} is enabled again: its members can sign in.`);
        reload();
      } catch (e) {
        if (needsStepUp(e)) stepUp.ask(`${disable ? "disable" : "enable"} ${subdomain}`, run);
        else toast(errorMessage(e), "error");
      } finally {
        setBusy(null);
      }
    };
    await run();
  };

  return (
    <section>
      <h1>Organizations</h1>
      <div class="field op-search">
        <label for="op-org-search">Search by name or subdomain</label>
        <input id="op-org-search" type="search" value={text} onInput={(e) => { setText((e.target as HTMLInputElement).value); setQuery({ page: null }, true); }} />
      </div>
      {error ? <Failure error={error} retry={reload} /> : !data ? <Loading /> : data.items.length === 0 ? (
        <Empty>{q ? "No organization's name or subdomain contains this text." : "No organizations yet. They appear here once someone signs up or you run suite tenant create."}</Empty>
      ) : (
        <>
          <div class="table-wrap">
            <table class="op-table">
              <thead><tr><th>Organization</th><th>Members</th><th>Deals</th><th>Storage (estimate)</th><th>Created</th><th>Last activity</th><th>Status</th><th><span class="visually-hidden">Actions</span></th></tr></thead>
              <tbody>
                {data.items.map((o) => (
                  <tr key={o.id}>
                    <td data-label="Organization"><strong>{o.name}</strong><br /><span class="muted">{o.subdomain}</span></td>
                    <td data-label="Members">{o.members.toLocaleString()}</td>
                    <td data-label="Deals">{o.deals.toLocaleString()}</td>
                    <td data-label="Storage (estimate)">{storage(o.storage_estimate_bytes)}</td>
                    <td data-label="Created">{formatDateTime(o.created_at)}</td>
                    <td data-label="Last activity">{o.last_activity_at ? formatDateTime(o.last_activity_at) : "Never"}</td>
                    <td data-label="Status">{o.being_deleted ? "Being deleted" : o.disabled_at ? `Disabled ${formatDateTime(o.disabled_at)}` : "In service"}</td>
                    <td class="op-actions">
                      {!o.being_deleted && (
                        <>
                          <button type="button" class={o.disabled_at ? "" : "danger"} disabled={busy === o.subdomain} onClick={() => void toggle(o.subdomain, !o.disabled_at)}>
                            {o.disabled_at ? "Enable" : "Disable"}
                          </button>{" "}
                          <button type="button" class="danger" onClick={() => setToDelete({ id: o.id, name: o.name, subdomain: o.subdomain })}>Delete</button>
                        </>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager page={data.page} pages={data.pages} total={data.total} size={data.size} noun="organizations" onPage={(p) => setQuery({ page: p })} />
        </>
      )}
      <DeleteOrganizationDialog org={toDelete} askStepUp={stepUp.ask} onClose={() => { setToDelete(null); reload(); }} onStarted={reload} />
      {stepUp.dialog}
    </section>
  );
}
