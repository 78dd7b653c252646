/** /forgot-password: an address; a link to choose a new password is mailed (same answer for any address). */
import { useState } from "preact/hooks";
import { ApiError, api } from "../api/client";
import { Field } from "../shared/field";
import { PublicFrame } from "../shared/layout";
import { Link } from "../shared/router";
import { errorMessage } from "../shared/states";

export default function ForgotPassword() {
  const [email, setEmail] = useState(new URLSearchParams(location.search).get("email") ?? "");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");
  const [notice, setNotice] = useState("");

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError("");
    setNotice("");
    try {
      setNotice((await api.post("/api/v1/auth/password/forgot", { body: { email: email.trim() } })).detail);
    } catch (err) {
      if (err instanceof ApiError && err.code === "validation_error") setError("Enter a valid email address.");
      else if (err instanceof ApiError && err.code === "rate_limited") setError("Too many requests for this address. Try again in a few minutes.");
      else setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <PublicFrame title="Forgot your password?">
      <p>Enter your email address: we will mail you a link to choose a new password.</p>
      <form onSubmit={submit} noValidate>
        <Field label="Email" type="email" autocomplete="email" required value={email} onValue={setEmail} />
        {error && <p class="error" role="alert">{error}</p>}
        {notice && <p class="notice" role="status">{notice}</p>}
        <button type="submit" class="primary wide" disabled={busy}>
          {busy ? "Sending…" : "Send me a link"}
        </button>
      </form>
      <p class="aside">
        <Link href="/sign-in">Back to sign-in</Link>
      </p>
    </PublicFrame>
  );
}
