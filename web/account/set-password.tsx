/**
 * My account → Password, for an account made by joining through an identity provider: it has no
 * password, so "Change password" (which asks for the current one) cannot work. Setting one goes
 * through the forgotten-password mail: the link proves the mailbox, as for anyone who lost theirs.
 */
import { useState } from "preact/hooks";
import { api } from "../api/client";
import { ChangePassword } from "../password/change";
import { useSession } from "../shared/session";
import { errorMessage } from "../shared/states";

export function SetPassword() {
  const { me } = useSession();
  const [busy, setBusy] = useState(false);
  const [sent, setSent] = useState(false);
  const [error, setError] = useState("");
  if (!me) return null;
  const send = async () => {
    setBusy(true);
    setError("");
    try {
      await api.post("/api/v1/auth/password/forgot", { body: { email: me.user.email } });
      setSent(true);
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="panel" aria-labelledby="password-title">
      <h2 id="password-title">Password</h2>
      <p>You sign in through an identity provider and have no password here. A password lets you sign in even when the provider is unavailable.</p>
      {sent ? (
        <p class="notice" role="status">
          We sent a link to {me.user.email}. Open it within 30 minutes to choose your password (it signs you out everywhere once set).
        </p>
      ) : (
        <button type="button" class="primary" disabled={busy} onClick={() => void send()}>
          {busy ? "Sending…" : "Set a password"}
        </button>
      )}
      {error && <p class="error" role="alert">{error}</p>}
    </section>
  );
}

/** My account's password panel: "Change password" for an account with one, "Set a password" (by mail) for one made through a provider. */
export function PasswordPanel() {
  const { me } = useSession();
  if (!me) return null;
  return me.has_password === false ? <SetPassword /> : <ChangePassword />;
}
