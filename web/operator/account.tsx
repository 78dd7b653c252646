import { device, formatDateTime } from "../shared/format";
import { Loading, errorMessage } from "../shared/states";
import { toast } from "../shared/toast";
import { useLoad } from "../shared/use-load";
import { NO_RETRY, api, needsStepUp } from "./call";
import { useContext, useState } from "preact/hooks";
import { Failure, SessionOver } from "./failure";
import { useStepUp } from "./step-up";

/** Backup codes: how many are left, and ten new ones (shown once) after the password again. */
function BackupCodes() {
  const { data, error, reload } = useLoad(() => api.get("/api/v1/operator/auth/me", NO_RETRY), []);
  const [codes, setCodes] = useState<string[] | null>(null);
  const [busy, setBusy] = useState(false);
  const stepUp = useStepUp();
  const make = async () => {
    setBusy(true);
    try {
      const r = await api.post("/api/v1/operator/auth/backup-codes", NO_RETRY);
      setCodes(r.codes);
      reload();
    } catch (e) {
      if (needsStepUp(e)) stepUp.ask("make new backup codes", make);
      else toast(errorMessage(e), "error");
    } finally {
      setBusy(false);
    }
  };
  if (error) return <Failure error={error} retry={reload} />;
  return (
    <div class="op-codes">
      <h2>Backup codes</h2>
      <p class="hint">
        When your authenticator app is not at hand, type a backup code in place of its six digits. Each works once.{" "}
        {data && (data.backup_codes_left === 0 ? "You have none left: make new ones now." : `You have ${data.backup_codes_left} left.`)}
      </p>
      {codes ? (
        <div role="status">
          <p>Your new backup codes. Save them somewhere safe, apart from your password: they are not shown again, and the earlier ones no longer work.</p>
          <ul class="op-code-list">{codes.map((c) => <li key={c}><code>{c}</code></li>)}</ul>
          <button type="button" onClick={() => setCodes(null)}>I have saved them</button>
        </div>
      ) : (
        <button type="button" disabled={busy} onClick={() => void make()}>{busy ? "Making codes…" : "Make new backup codes"}</button>
      )}
      {stepUp.dialog}
    </div>
  );
}

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
      <p class="hint">Each sign-in to the console lasts 8 hours at most, and ends after 30 minutes unused. End any you do not recognise.</p>
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
      <BackupCodes />
    </section>
  );
}
