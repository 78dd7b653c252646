/** /reset-password#token=…: the token, read from the fragment and wiped from the address bar; a new password. */
import { useState } from "preact/hooks";
import { ApiError, api } from "../api/client";
import { Field } from "../shared/field";
import { PublicFrame } from "../shared/layout";
import { Link } from "../shared/router";
import { errorMessage } from "../shared/states";
import { takeFragmentToken } from "../sign-in/magic-link";

let held: string | null | undefined;

export default function ResetPassword() {
  const [token] = useState(() => (held ??= takeFragmentToken()));
  const [password, setPassword] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");
  // A refused password (too short, too common) is said at its field.
  const [fieldError, setFieldError] = useState("");
  const [done, setDone] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    if (!token) return;
    setBusy(true);
    setError("");
    setFieldError("");
    try {
      await api.post("/api/v1/auth/password/reset", { body: { token, password } });
      held = undefined;
      setDone(true);
    } catch (err) {
      if (err instanceof ApiError && err.fieldError("password")) setFieldError(err.fieldError("password")!);
      else if (err instanceof ApiError && err.code === "reset_token_invalid") setError("This link has expired or was already used. Ask for a new one.");
      else setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };

  if (done) {
    return (
      <PublicFrame title="Password changed">
        <p role="status">Your password has been changed and you have been signed out everywhere.</p>
        <p>
          <Link href="/sign-in">Sign in with your new password</Link>
        </p>
      </PublicFrame>
    );
  }
  if (!token) {
    return (
      <PublicFrame title="Choose a new password">
        <p class="error" role="alert">This link is incomplete. Open the link from the mail again.</p>
        <p><Link href="/forgot-password">Ask for a new link</Link></p>
      </PublicFrame>
    );
  }
  return (
    <PublicFrame title="Choose a new password">
      <form onSubmit={submit} noValidate>
        <Field
          label="New password"
          type="password"
          autocomplete="new-password"
          required
          minLength={8}
          maxLength={128}
          hint="8 to 128 characters, not a common one."
          value={password}
          onValue={setPassword}
          error={fieldError || undefined}
        />
        {error && <p class="error" role="alert">{error}</p>}
        <button type="submit" class="primary wide" disabled={busy}>
          {busy ? "Saving…" : "Set my new password"}
        </button>
      </form>
      {error && (
        <p class="aside">
          <Link href="/forgot-password">Ask for a new link</Link>
        </p>
      )}
    </PublicFrame>
  );
}
