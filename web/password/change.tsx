/** My account → Password: the current one and a new one; other sessions are signed out. */
import { useState } from "preact/hooks";
import { ApiError, api } from "../api/client";
import { Field } from "../shared/field";
import { errorMessage } from "../shared/states";
import { toast } from "../shared/toast";

export function ChangePassword() {
  const [current, setCurrent] = useState("");
  const [next, setNext] = useState("");
  const [busy, setBusy] = useState(false);
  const [errors, setErrors] = useState<{ current?: string; next?: string; form?: string }>({});

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setErrors({});
    try {
      const r = await api.post("/api/v1/auth/password/change", { body: { current_password: current, new_password: next } });
      setCurrent("");
      setNext("");
      toast(r.revoked > 0 ? `Password changed. ${r.revoked} other session${r.revoked === 1 ? "" : "s"} signed out.` : "Password changed.");
    } catch (err) {
      if (err instanceof ApiError && err.code === "invalid_credentials") setErrors({ current: "This is not your current password." });
      else if (err instanceof ApiError && err.items.length)
        setErrors({ current: err.fieldError("current_password"), next: err.fieldError("new_password") });
      else setErrors({ form: errorMessage(err) });
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="panel" aria-labelledby="password-title">
      <h2 id="password-title">Password</h2>
      <p>Changing your password signs you out on your other devices.</p>
      <form onSubmit={submit} noValidate>
        <Field label="Current password" type="password" autocomplete="current-password" required value={current} onValue={setCurrent} error={errors.current} />
        <Field
          label="New password"
          type="password"
          autocomplete="new-password"
          required
          minLength={8}
          maxLength={128}
          hint="8 to 128 characters, not a common one."
          value={next}
          onValue={setNext}
          error={errors.next}
        />
        {errors.form && <p class="error" role="alert">{errors.form}</p>}
        <button type="submit" class="primary" disabled={busy}>
          {busy ? "Saving…" : "Change password"}
        </button>
      </form>
    </section>
  );
}
