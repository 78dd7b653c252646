import { useState } from "preact/hooks";
import { ApiError } from "../api/client";
import { Field } from "../shared/field";
import { Pager } from "../shared/pager";
import { setQuery, useLocation } from "../shared/router";
import { formatDateTime } from "../shared/format";
import { Empty, Loading, errorMessage } from "../shared/states";
import { toast } from "../shared/toast";
import { useLoad } from "../shared/use-load";
import { NO_RETRY, api, needsStepUp } from "./call";
import { Failure } from "./failure";
import { useStepUp } from "./step-up";

/** A plain mail to any address, through the queue: whether the server can send mail at all. */
function TestMail({ sent }: { sent: () => void }) {
  const [to, setTo] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await api.post("/api/v1/operator/mail/test", { body: { to }, ...NO_RETRY });
      toast(`A test mail to ${to.trim()} is in the queue. It shows below until it is sent.`);
      setTo("");
      sent();
    } catch (err) {
      if (err instanceof ApiError && err.items.length) setError(err.fieldError("to") ?? err.detail);
      else toast(errorMessage(err), "error");
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="op-test-mail" onSubmit={submit}>
      <Field label="Send a test mail to" type="email" autoComplete="email" value={to} onValue={setTo} error={error} required />
      <button type="submit" disabled={busy || to.trim() === ""}>{busy ? "Sending…" : "Send a test mail"}</button>
    </form>
  );
}

const STATUS: Record<string, string> = { pending: "Waiting", sending: "Being sent", failed: "Failed" };

/** Mail waiting or failed across the server; recipients masked; send now, or discard (the password again after 10 minutes). */
export function Mail() {
  const { query } = useLocation();
  const status = query.get("status") === "failed" ? "failed" : query.get("status") === "pending" ? "pending" : undefined;
  const page = Math.max(1, Number(query.get("page")) || 1);
  const { data, error, reload } = useLoad(() => api.get("/api/v1/operator/mail", { query: { status, page, size: 20 }, ...NO_RETRY }), [status, page]);
  const stepUp = useStepUp();

  const retry = async (id: string) => {
    try {
      await api.post("/api/v1/operator/mail/{id}/retry", { path: { id }, ...NO_RETRY });
      toast("The mail will be sent now.");
      reload();
    } catch (e) {
      toast(errorMessage(e), "error");
    }
  };
  const discard = async (id: string) => {
    const run = async () => {
      try {
        await api.delete("/api/v1/operator/mail/{id}", { path: { id }, ...NO_RETRY });
        toast("The mail was discarded. Its link will never arrive: the person can ask for a new one.");
        reload();
      } catch (e) {
        if (needsStepUp(e)) stepUp.ask("discard this mail", run);
        else toast(errorMessage(e), "error");
      }
    };
    await run();
  };

  return (
    <section>
      <h1>Mail queue</h1>
      <div class="op-filter" role="group" aria-label="Show">
        {([[undefined, "All waiting and failed"], ["pending", "Waiting"], ["failed", "Failed"]] as const).map(([s, label]) => (
          <button key={label} type="button" aria-pressed={status === s} onClick={() => setQuery({ status: s ?? null, page: null })}>{label}</button>
        ))}
      </div>
      <p class="hint">Recipients are shortened to their first letter and domain. A failed mail has lost its text (it held a sign-in link), so it cannot be sent again: discard it and ask the person to request a new link.</p>
      <TestMail sent={reload} />
      {error ? <Failure error={error} retry={reload} /> : !data ? <Loading /> : data.items.length === 0 ? (
        <Empty>No mail is waiting or failed. Everything has been sent.</Empty>
      ) : (
        <>
          <div class="table-wrap">
            <table class="op-table">
              <thead><tr><th>Created</th><th>Organization</th><th>To</th><th>Subject</th><th>Status</th><th><span class="visually-hidden">Actions</span></th></tr></thead>
              <tbody>
                {data.items.map((m) => (
                  <tr key={m.id}>
                    <td data-label="Created">{formatDateTime(m.created_at)}</td>
                    <td data-label="Organization">{m.organization ?? "None"}</td>
                    <td data-label="To">{m.recipient}</td>
                    <td data-label="Subject">{m.subject}</td>
                    <td data-label="Status">
                      {STATUS[m.status] ?? m.status}
                      {m.attempts > 0 && <span class="muted"> after {m.attempts} {m.attempts === 1 ? "try" : "tries"}</span>}
                      {m.last_error && <><br /><span class="muted">{m.last_error}</span></>}
                    </td>
                    <td class="op-actions">
                      {m.status === "pending" && <button type="button" onClick={() => void retry(m.id)}>Send now</button>}
                      {m.status !== "sending" && <button type="button" class="danger" onClick={() => void discard(m.id)}>Discard</button>}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager page={data.page} pages={data.pages} total={data.total} size={data.size} noun="mails" onPage={(p) => setQuery({ page: p })} />
        </>
      )}
      {stepUp.dialog}
    </section>
  );
}
