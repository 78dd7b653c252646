/** My account's passkeys: add one on this device (after a recent sign-in), rename, remove. */
import { useState } from "preact/hooks";
import { ApiError } from "../api/client";
import { ConfirmDialog, Modal } from "../shared/dialog";
import { Field } from "../shared/field";
import { formatDateTime } from "../shared/format";
import { ErrorBox, Loading, errorMessage } from "../shared/states";
import { toast } from "../shared/toast";
import { useLoad } from "../shared/use-load";
import { useSession } from "../shared/session";
import { type Passkey, ceremonyMessage, passkeysApi } from "./passkeys-api";
import { useStepUp } from "./reauth";

/** What went wrong with a passkey action, as a sentence. */
export function passkeyMessage(e: unknown): string {
  if (e instanceof ApiError && (e.code === "last_sign_in_method" || e.code === "required_by_policy")) return e.detail;
  if (e instanceof ApiError && e.code === "passkey_registration_failed") return "The new passkey could not be checked. Try again.";
  if (e instanceof ApiError && e.code === "passkeys_unavailable") return e.detail;
  return ceremonyMessage(e) ?? errorMessage(e);
}

export function Passkeys() {
  // A new passkey may be what the organization's sign-in policy asked for: the session is re-read (its policy_setup).
  const { reload } = useSession();
  const list = useLoad(() => passkeysApi.list(), []);
  const reauth = useStepUp("change your passkeys");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");
  const [renaming, setRenaming] = useState<Passkey | null>(null);
  const [newName, setNewName] = useState("");
  const [removing, setRemoving] = useState<Passkey | null>(null);

  const act = async (f: () => Promise<void>) => {
    setBusy(true);
    setError("");
    try {
      await f();
    } catch (e) {
      setError(passkeyMessage(e));
    } finally {
      setBusy(false);
    }
  };
  const add = () =>
    act(async () => {
      await reauth.run(() => passkeysApi.add());
      toast("Passkey added.");
      list.reload();
      void reload();
    });
  const rename = (e: Event) => {
    e.preventDefault();
    const key = renaming;
    if (!key) return;
    void act(async () => {
      await passkeysApi.rename(key.id, newName.trim());
      setRenaming(null);
      toast("Passkey renamed.");
      list.reload();
    });
  };
  const remove = () => {
    const key = removing;
    if (!key) return;
    void act(async () => {
      try {
        await reauth.run(() => passkeysApi.remove(key.id));
        toast("Passkey removed.");
        list.reload();
      } finally {
        setRemoving(null);
      }
    });
  };

  return (
    <section class="panel" aria-labelledby="passkeys-title">
      <h2 id="passkeys-title">Passkeys</h2>
      <p>Sign in with your fingerprint, face or device PIN instead of a password. A passkey counts as two-step verification on its own.</p>
      {list.error ? (
        <ErrorBox error={list.error} retry={list.reload} />
      ) : !list.data ? (
        <Loading />
      ) : list.data.length === 0 ? (
        <p>You have no passkeys yet.</p>
      ) : (
        <ul aria-label="Your passkeys" style={{ listStyle: "none", padding: 0, margin: 0 }}>
          {list.data.map((k) => (
            <li key={k.id} class="row" style={{ justifyContent: "space-between", flexWrap: "wrap", gap: ".5rem", padding: ".5rem 0", borderBottom: "1px solid var(--line, #ddd)" }}>
              <div>
                <strong>{k.name}</strong> {k.backed_up && <span class="tag ok">Synced</span>}
                <div class="muted">
                  Added {formatDateTime(k.created_at)} · {k.last_used_at ? `last used ${formatDateTime(k.last_used_at)}` : "never used"}
                </div>
              </div>
              <div class="row" style={{ gap: ".5rem" }}>
                <button type="button" class="small" onClick={() => (setRenaming(k), setNewName(k.name))} aria-label={`Rename the passkey ${k.name}`}>
                  Rename
                </button>
                <button type="button" class="small danger" onClick={() => setRemoving(k)} aria-label={`Remove the passkey ${k.name}`}>
                  Remove
                </button>
              </div>
            </li>
          ))}
        </ul>
      )}
      {error && <p class="error" role="alert">{error}</p>}
      <div class="actions">
        <button type="button" class="primary" disabled={busy || !passkeysApi.supported()} onClick={() => void add()}>
          Add a passkey
        </button>
      </div>
      {!passkeysApi.supported() && <p class="muted">This browser cannot create passkeys.</p>}
      <Modal open={renaming !== null} title="Rename passkey" onClose={() => setRenaming(null)}>
        <form onSubmit={rename} noValidate>
          <Field label="Name" required value={newName} onValue={setNewName} maxLength={100} autocomplete="off" />
          <div class="actions">
            <button type="button" onClick={() => setRenaming(null)}>Cancel</button>
            <button type="submit" class="primary" disabled={busy || !newName.trim()}>Save</button>
          </div>
        </form>
      </Modal>
      <ConfirmDialog
        open={removing !== null}
        title="Remove this passkey?"
        confirmLabel="Remove passkey"
        danger
        busy={busy}
        onConfirm={remove}
        onCancel={() => setRemoving(null)}
      >
        <p>{removing?.name} will no longer sign you in. Remove it from the device or password manager that holds it too.</p>
      </ConfirmDialog>
      {reauth.dialog}
    </section>
  );
}
