/**
 * Step-up: 2FA setup, confirm and backup-code regeneration answer 403 `reauthentication_required`
 * unless this session proved its password in the last minutes. Ask for it (and a code when 2FA is
 * on) or a passkey, renew the proof with POST /auth/reauthenticate, then retry the action once.
 */
import { useRef, useState } from "preact/hooks";
import { ApiError, api } from "../api/client";
import { Modal } from "../shared/dialog";
import { Field } from "../shared/field";
import { useSession } from "../shared/session";
import { errorMessage } from "../shared/states";
import { useLoad } from "../shared/use-load";
import { ceremonyMessage, passkeysApi } from "./passkeys-api";

/** Runs an action, asking for a recent sign-in first when the server answers 403 `reauthentication_required` (useReauth's `run`). */
export type Guard = <T>(action: () => Promise<T>) => Promise<T>;
/** No step-up: the action as it is (a component rendered without a screen's guard). */
export const unguarded: Guard = (action) => action();

/**
 * useReauth for a screen that does not know the admin's 2FA state: it asks for it once. Team and
 * Organization settings (issue 29.3) need a recent sign-in for role, profile and admin invites,
 * 2FA resets, removals and organization changes.
 */
export function useStepUp(purpose: string) {
  const twoFactor = useLoad(() => api.get("/api/v1/auth/2fa/status").catch(() => null), []);
  return useReauth(!!twoFactor.data?.enabled, purpose);
}

/** `purpose` finishes the sentence "enter your password again to …". */
export function useReauth(withCode: boolean, purpose = "change two-step verification") {
  // An account made through an identity provider has no password to enter: a fresh sign-in through the provider is its proof.
  const noPassword = useSession().me?.has_password === false;
  const [open, setOpen] = useState(false);
  const [password, setPassword] = useState("");
  const [code, setCode] = useState("");
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const waiting = useRef<{ resolve: () => void; reject: (e: unknown) => void } | null>(null);

  async function run<T>(action: () => Promise<T>): Promise<T> {
    try {
      return await action();
    } catch (e) {
      if (!(e instanceof ApiError && e.code === "reauthentication_required")) throw e;
      await new Promise<void>((resolve, reject) => {
        waiting.current = { resolve, reject };
        setError("");
        setOpen(true);
      });
      return action();
    }
  }

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError("");
    try {
      await api.post("/api/v1/auth/reauthenticate", { body: { password, ...(withCode && code.trim() ? { code: code.trim() } : {}) } });
      setOpen(false);
      setPassword("");
      setCode("");
      waiting.current?.resolve();
    } catch (err) {
      setError(err instanceof ApiError && err.status === 401 ? "That password (or code) is not right." : errorMessage(err));
    } finally {
      setBusy(false);
    }
  };
  // A passkey is proof enough on its own (two factors): no password, no code.
  const withPasskey = async () => {
    setBusy(true);
    setError("");
    try {
      await passkeysApi.reauthenticate();
      setOpen(false);
      setPassword("");
      setCode("");
      waiting.current?.resolve();
    } catch (err) {
      setError(err instanceof ApiError && err.status === 401 ? "That passkey could not be checked. Try again, or use your password." : (ceremonyMessage(err) ?? errorMessage(err)));
    } finally {
      setBusy(false);
    }
  };
  const passkeyButton = passkeysApi.supported() && (
    <button type="button" onClick={() => void withPasskey()} disabled={busy}>Use a passkey</button>
  );
  const cancel = () => {
    setOpen(false);
    setPassword("");
    waiting.current?.reject(new Error("Cancelled: your password is needed for this change."));
  };

  const dialog = (
    <Modal open={open} title="Confirm it's you" onClose={cancel}>
      {noPassword ? (
        <div>
          <p>For your security, you need to have signed in within the last few minutes to {purpose}.</p>
          <p>You have no password here: confirm with a passkey, or sign out, sign in again through your identity provider, then try again (or set a password from My account).</p>
          {error && <p class="error" role="alert">{error}</p>}
          <div class="actions">
            {passkeyButton}
            <button type="button" class="primary" onClick={cancel}>OK</button>
          </div>
        </div>
      ) : (
      <form onSubmit={submit} noValidate>
        <p>For your security, enter your password again to {purpose}.</p>
        <Field label="Password" type="password" autocomplete="current-password" required value={password} onValue={setPassword} />
        {withCode && <Field label="Authenticator or backup code" autocomplete="one-time-code" value={code} onValue={setCode} />}
        {error && <p class="error" role="alert">{error}</p>}
        <div class="actions">
          <button type="button" onClick={cancel}>Cancel</button>
          {passkeyButton}
          <button type="submit" class="primary" disabled={busy || !password}>Confirm</button>
        </div>
      </form>
      )}
    </Modal>
  );
  return { run, dialog };
}
