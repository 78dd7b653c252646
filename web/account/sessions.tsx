/** Where I am signed in: this device marked; revoke one, revoke the others, sign out everywhere. */
import { useState } from "preact/hooks";
import { api, stopRefresh, type Session } from "../api/client";
import { ConfirmDialog } from "../shared/dialog";
import { device, formatDateTime } from "../shared/format";
import { ErrorBox, Loading, errorMessage } from "../shared/states";
import { toast } from "../shared/toast";
import { useLoad } from "../shared/use-load";

const METHODS: Record<string, string> = {
  password: "Password",
  magic_link: "Sign-in link",
  signup: "Signup",
  invitation: "Invitation",
  password_reset: "Password reset",
  "2fa": "Two-step verification",
  cli: "Command line",
};

/** How a session began, when the server says: "Google", "Password", "Sign-in link"… */
export function signInMethod(s: Session): string | null {
  const m = s.method;
  if (!m) return null;
  // "oidc:Acme ID+2fa", "password+2fa": the first factor, then the code.
  if (m.endsWith("+2fa") && m.length > 4) return `${signInMethod({ ...s, method: m.slice(0, -4) })} + two-step verification`;
  // "oidc:Acme ID": a provider's session, named after the provider.
  const named = /^(?:oauth|oidc):(.+)$/.exec(m);
  if (named) return named[1]!;
  return METHODS[m] ?? m.replace(/_/g, " ").replace(/^./, (c) => c.toUpperCase());
}

type Ask = { kind: "one"; session: Session } | { kind: "others" } | { kind: "all" } | null;

export function Sessions() {
  const list = useLoad(() => api.get("/api/v1/auth/sessions"), []);
  const [ask, setAsk] = useState<Ask>(null);
  const [busy, setBusy] = useState(false);

  const run = async () => {
    if (!ask) return;
    setBusy(true);
    try {
      if (ask.kind === "one") {
        await api.post("/api/v1/auth/sessions/revoke", { body: { session_id: ask.session.id } });
        toast("Session ended.");
      } else if (ask.kind === "others") {
        const r = await api.post("/api/v1/auth/sessions/revoke-others");
        toast(r.revoked === 1 ? "1 other session ended." : `${r.revoked} other sessions ended.`);
      } else {
        await api.post("/api/v1/auth/logout-all");
        stopRefresh();
        location.assign("/sign-in");
        return;
      }
      if (ask.kind === "one" && ask.session.current) {
        stopRefresh();
        location.assign("/sign-in");
        return;
      }
      setAsk(null);
      list.reload();
    } catch (e) {
      toast(errorMessage(e), "error");
    } finally {
      setBusy(false);
    }
  };

  const others = (list.data ?? []).filter((s) => !s.current).length;
  const methods = (list.data ?? []).some((s) => signInMethod(s) !== null);
  return (
    <section class="panel" aria-labelledby="sessions-title">
      <h2 id="sessions-title">Where you're signed in</h2>
      {list.error ? (
        <ErrorBox error={list.error} retry={list.reload} />
      ) : !list.data ? (
        <Loading />
      ) : (
        <>
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Device</th>
                  {methods && <th scope="col" class="hide-narrow">Signed in with</th>}
                  <th scope="col">IP address</th>
                  <th scope="col" class="hide-narrow">Signed in</th>
                  <th scope="col" class="hide-narrow">Last active</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {list.data.map((s) => (
                  <tr key={s.id}>
                    <td>
                      {device(s.user_agent)} {s.current && <span class="tag ok">This device</span>}
                      {methods && signInMethod(s) && <span class="show-narrow">with {signInMethod(s)}</span>}
                    </td>
                    {methods && <td class="hide-narrow">{signInMethod(s) ?? "—"}</td>}
                    <td>{s.ip ?? "—"}</td>
                    <td class="hide-narrow">{formatDateTime(s.created_at)}</td>
                    <td class="hide-narrow">{formatDateTime(s.last_used_at)}</td>
                    <td>
                      <button type="button" class="small" onClick={() => setAsk({ kind: "one", session: s })} aria-label={s.current ? "Sign out this device" : `Revoke the session of ${device(s.user_agent)} from ${s.ip ?? "an unknown address"}`}>
                        {s.current ? "Sign out" : "Revoke"}
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <div class="actions">
            <button type="button" disabled={others === 0} onClick={() => setAsk({ kind: "others" })}>
              Sign out other sessions
            </button>
            <button type="button" class="danger" onClick={() => setAsk({ kind: "all" })}>
              Sign out everywhere
            </button>
          </div>
        </>
      )}
      <ConfirmDialog
        open={ask !== null}
        title={ask?.kind === "all" ? "Sign out everywhere?" : ask?.kind === "others" ? "Sign out your other sessions?" : "End this session?"}
        confirmLabel={ask?.kind === "all" ? "Sign out everywhere" : ask?.kind === "others" ? "Sign out others" : "End session"}
        danger
        busy={busy}
        onConfirm={() => void run()}
        onCancel={() => setAsk(null)}
      >
        <p>
          {ask?.kind === "all"
            ? "Every device, this one included, will have to sign in again."
            : ask?.kind === "others"
              ? "Every device but this one will have to sign in again."
              : "That device will have to sign in again."}
        </p>
      </ConfirmDialog>
    </section>
  );
}
