/** The operator's sign-in: email and password, then the six-digit code of their authenticator app. */
import { useState } from "preact/hooks";
import { Field } from "../shared/field";
import { errorMessage } from "../shared/states";
import { ApiError } from "../api/client";
import { NO_RETRY, api } from "./call";

export function OperatorSignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [code, setCode] = useState("");
  const [temp, setTemp] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      if (temp === null) {
        const r = await api.post("/api/v1/operator/auth/login", { body: { email, password }, ...NO_RETRY });
        setTemp(r.temp_token);
        setPassword("");
      } else {
        await api.post("/api/v1/operator/auth/2fa/verify", { body: { temp_token: temp, code: code.replace(/\s/g, "") }, ...NO_RETRY });
        onSignedIn();
      }
    } catch (err) {
      const message = errorMessage(err);
      // An expired or spent challenge: start again from the password.
      if (temp !== null && err instanceof ApiError && err.code === "invalid_token") {
        setTemp(null);
        setCode("");
        setError("The sign-in took too long. Enter your password again.");
      } else setError(message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class="public">
      <main id="main" class="card">
        <h1>Operator console</h1>
        <p class="hint">For the people who run this server. Organization members sign in at their organization's address instead.</p>
        <form onSubmit={submit} noValidate>
          {temp === null ? (
            <>
              <Field label="Email" type="email" autoComplete="username" value={email} onValue={setEmail} required />
              <Field label="Password" type="password" autoComplete="current-password" value={password} onValue={setPassword} required />
            </>
          ) : (
            <Field
              label="Code from your authenticator app"
              hint="Open the app where you added the operator secret and type the six digits it shows now. Without the app, type one of your backup codes (xxxx-xxxx)."
              autoComplete="one-time-code"
              value={code}
              onValue={setCode}
              required
              autoFocus
            />
          )}
          {error && <p class="error" role="alert">{error}</p>}
          <div class="actions">
            <button type="submit" class="primary" disabled={busy}>
              {busy ? "Checking…" : temp === null ? "Continue" : "Sign in"}
            </button>
          </div>
        </form>
      </main>
    </div>
  );
}
