/** The second step of a sign-in: a 6-digit code from the authenticator app, or a backup code. */
import { useState } from "preact/hooks";
import { ApiError, api, type TokenPair } from "../api/client";
import { Field } from "../shared/field";
import { errorMessage } from "../shared/states";

export function SecondFactor({
  tempToken,
  credentials,
  onDone,
  onRestart,
}: {
  tempToken: string;
  credentials: RequestCredentials;
  onDone: (pair: TokenPair) => Promise<void>;
  onRestart: (why: string) => void;
}) {
  const [code, setCode] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError("");
    try {
      await onDone(await api.post("/api/v1/auth/2fa/verify", { body: { temp_token: tempToken, code: code.trim() }, credentials }));
    } catch (err) {
      if (err instanceof ApiError && err.code === "invalid_temp_token") onRestart("That took too long: sign in again.");
      else if (err instanceof ApiError && err.code === "invalid_2fa_code") setError("That code is not valid. Check your authenticator app and try again.");
      else setError(errorMessage(err));
      setCode("");
    } finally {
      setBusy(false);
    }
  };

  return (
    <form onSubmit={submit} noValidate>
      <p>Enter the 6-digit code from your authenticator app, or one of your backup codes.</p>
      <Field label="Code" inputMode="text" autocomplete="one-time-code" required value={code} onValue={setCode} autoFocus />
      {error && <p class="error" role="alert">{error}</p>}
      <button type="submit" class="primary wide" disabled={busy || !code.trim()}>
        {busy ? "Checking…" : "Verify"}
      </button>
    </form>
  );
}
