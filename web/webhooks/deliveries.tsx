/**
 * A webhook's delivery log: each event sent (or still to send), its status, the receiver's last
 * answer and how long it took, the attempts, when it is tried next, and a Retry button.
 */
import { useState } from "preact/hooks";
import { api, type Webhook, type WebhookDelivery } from "../api/client";
import { formatDateTime } from "../shared/format";
import { Pager } from "../shared/pager";
import { Empty, ErrorBox, Loading, errorMessage } from "../shared/states";
import { toast } from "../shared/toast";
import { useLoad } from "../shared/use-load";

const ERRORS: Record<string, string> = {
  timeout: "No answer within 10 seconds",
  unreachable: "Could not connect",
  refused_address: "Address not allowed",
  tls: "Certificate problem",
  redirect: "Redirected (not followed)",
  too_large: "Too large",
  event_expired: "Event no longer kept",
};

const statusTag = (d: WebhookDelivery) =>
  d.status === "delivered" ? <span class="tag ok">Delivered</span> : d.status === "failed" ? <span class="tag danger">Failed</span> : d.attempts > 0 ? <span class="tag warn">Retrying</span> : <span class="tag">Waiting</span>;

const answer = (d: WebhookDelivery) =>
  d.last_response_status !== null ? `HTTP ${d.last_response_status}` : d.last_error ? (ERRORS[d.last_error] ?? d.last_error) : "—";

export function Deliveries({ webhook, version }: { webhook: Webhook; version: number }) {
  const [page, setPage] = useState(1);
  const [again, setAgain] = useState(0);
  const list = useLoad(() => api.get("/api/v1/webhooks/{id}/deliveries", { path: { id: webhook.id }, query: { page, size: 20 } }), [webhook.id, page, again, version]);
  const [busy, setBusy] = useState<string | null>(null);

  const retry = async (d: WebhookDelivery) => {
    setBusy(d.id);
    try {
      await api.post("/api/v1/webhooks/{id}/deliveries/{delivery_id}/retry", { path: { id: webhook.id, delivery_id: d.id } });
      toast(`Sending the ${d.event_type} event again.`);
      setAgain((n) => n + 1);
    } catch (e) {
      toast(errorMessage(e), "error");
    } finally {
      setBusy(null);
    }
  };

  const data = list.data;
  return (
    <section class="panel deliveries" aria-labelledby="deliveries-title">
      <div class="screen-head">
        <h2 id="deliveries-title">Deliveries to {webhook.url}</h2>
        <button type="button" class="small" onClick={() => setAgain((n) => n + 1)}>
          Refresh
        </button>
      </div>
      {list.error ? (
        <ErrorBox error={list.error} retry={list.reload} />
      ) : !data ? (
        <Loading label="Loading deliveries…" />
      ) : data.items.length === 0 ? (
        <Empty>
          <p>Nothing sent yet. Events appear here as they happen; use Send test to try the address now.</p>
        </Empty>
      ) : (
        <>
          <div class="table-wrap" tabIndex={0} role="region" aria-label="Deliveries">
            <table>
              <thead>
                <tr>
                  <th scope="col">Event</th>
                  <th scope="col">Status</th>
                  <th scope="col" class="hide-narrow">Answer</th>
                  <th scope="col" class="hide-narrow">Attempts</th>
                  <th scope="col" class="hide-narrow">Next attempt</th>
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {data.items.map((d) => (
                  <tr key={d.id}>
                    <td>
                      <strong class="mono">{d.event_type}</strong>
                      <span class="hint">{formatDateTime(d.created_at)}</span>
                    </td>
                    <td>
                      {statusTag(d)}
                      <span class="show-narrow">{answer(d)}</span>
                    </td>
                    <td class="hide-narrow">
                      {answer(d)}
                      {d.last_duration_ms !== null && <span class="hint">{d.last_duration_ms} ms</span>}
                    </td>
                    <td class="hide-narrow">{d.attempts}</td>
                    <td class="hide-narrow">{d.next_attempt_at ? formatDateTime(d.next_attempt_at) : "—"}</td>
                    <td class="row-actions">
                      <button type="button" class="small" disabled={busy === d.id || !webhook.enabled} onClick={() => void retry(d)}>
                        Retry<span class="visually-hidden"> the {d.event_type} delivery</span>
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager page={data.page} pages={data.pages} total={data.total} size={data.size} noun="deliveries" onPage={setPage} />
        </>
      )}
    </section>
  );
}
