import { device, formatDateTime } from "../shared/format";
import { Loading, errorMessage } from "../shared/states";
import { toast } from "../shared/toast";
import { useLoad } from "../shared/use-load";
import { NO_RETRY, api } from "./call";
import { useContext, useState } from "preact/hooks";
import { Failure, SessionOver } from "./failure";

/** The signed-in operator's own sessions: where they are signed in, ending one, or every other. */
export function Account() {
  const { data, error, reload } = useLoad(() => api.get("/api/v1/operator/auth/sessions", NO_RETRY), []);
  const [busy, setBusy] = useState(false);
  const over = useContext(SessionOver);
  if (error) return <Failure error={error} retry={reload} />;
  if (!data) return <Loading />;

  const end = async (id: string, current: boolean) => {
    setBusy(true);
    try {
      const r = await api.delete("/api/v1/operator/auth/sessions/{id}", { path: { id }, ...NO_RETRY });
      toast(r.detail);
      if (current) over();
      else reload();
    } catch (e) {
      toast(errorMessage(e), "error");
    } finally {
      setBusy(false);
    }
  };
  const endOthers = async () => {
    setBusy(true);
    try {
      const r = await api.post("/api/v1/operator/auth/sessions/revoke-others", NO_RETRY);
      toast(r.detail);
      reload();
    } catch (e) {
      toast(errorMessage(e), "error");
    } finally {
      setBusy(false);
    }
  };
  const others = data.items.filter((s) => !s.current).length;
  return (
    <section>
      <h1>Your account</h1>
      <h2>Where you are signed in</h2>
      <p class="hint">Each sign-in to the console lasts 8 hours at most, and ends after 30 minutes unused. End any you do not recognise, then change your password with <code>suite operator</code> on the server.</p>
      <div class="table-wrap">
        <table class="op-table">
          <thead><tr><th>Device</th><th>Address</th><th>Signed in</th><th>Last used</th><th><span class="visually-hidden">Actions</span></th></tr></thead>
          <tbody>
            {data.items.map((s) => (
              <tr key={s.id}>
                <td data-label="Device">{device(s.user_agent)}{s.current && <strong> (this one)</strong>}</td>
                <td data-label="Address">{s.ip ?? "Not known"}</td>
                <td data-label="Signed in">{formatDateTime(s.created_at)}</td>
                <td data-label="Last used">{formatDateTime(s.last_used_at)}</td>
                <td class="op-actions">
                  <button type="button" class={s.current ? undefined : "danger"} disabled={busy} onClick={() => void end(s.id, s.current)}>{s.current ? "Sign out here" : "End session"}</button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <p><button type="button" disabled={busy || others === 0} onClick={() => void endOthers()}>{others === 0 ? "No other sessions" : `Sign out everywhere else (${others})`}</button></p>
    </section>
  );
}
