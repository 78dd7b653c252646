/** Asks for the password again before a destructive action, then runs it. */
import { useState } from "preact/hooks";
import { Modal } from "../shared/dialog";
import { Field } from "../shared/field";
import { errorMessage } from "../shared/states";
import { NO_RETRY, api } from "./call";

export function StepUpDialog({ open, action, onDone, onCancel }: { open: boolean; action: string; onDone: () => void; onCancel: () => void }) {
  const [password, setPassword] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await api.post("/api/v1/operator/auth/reauthenticate", { body: { password }, ...NO_RETRY });
      setPassword("");
      onDone();
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Modal open={open} title="Confirm your password" onClose={onCancel}>
      <form onSubmit={submit}>
        <p>To {action}, type your password again. It counts for the next 10 minutes.</p>
        <Field label="Password" type="password" autoComplete="current-password" value={password} onValue={setPassword} required autoFocus />
        {error && <p class="error" role="alert">{error}</p>}
        <div class="actions">
          <button type="button" onClick={onCancel}>Cancel</button>
          <button type="submit" class="primary" disabled={busy || password === ""}>{busy ? "Checking…" : "Confirm"}</button>
        </div>
      </form>
    </Modal>
  );
}

/**
 * Runs a destructive action; when the server asks for the password again, shows the dialog and
 * runs it once more after. Answers the dialog to render and the runner.
 */
export function useStepUp() {
  const [pending, setPending] = useState<{ action: string; run: () => Promise<void> } | null>(null);
  const dialog = (
    <StepUpDialog
      open={pending !== null}
      action={pending?.action ?? ""}
      onCancel={() => setPending(null)}
      onDone={() => {
        const p = pending;
        setPending(null);
        void p?.run();
      }}
    />
  );
  return { dialog, ask: (action: string, run: () => Promise<void>) => setPending({ action, run }) };
}
