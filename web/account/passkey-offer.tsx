/**
 * After a password sign-in, the offer to create a passkey: once per user on this browser (a
 * "Not now" is an answer), only when the browser can make one and the user has none yet.
 */
import { useEffect, useState } from "preact/hooks";
import { Modal } from "../shared/dialog";
import { useSession } from "../shared/session";
import { toast } from "../shared/toast";
import { passkeyMessage } from "./passkeys";
import { passkeysApi } from "./passkeys-api";

const JUST_SIGNED_IN = "suite-passkey-offer";
const offeredKey = (tenantId: string, userId: string) => `suite-passkey-offered:${tenantId}:${userId}`;

/** The sign-in page calls this after a password sign-in on this host. */
export const offerPasskeyNext = () => sessionStorage.setItem(JUST_SIGNED_IN, "1");

export function PasskeyOffer() {
  const { me } = useSession();
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");

  useEffect(() => {
    if (!me || sessionStorage.getItem(JUST_SIGNED_IN) !== "1") return;
    sessionStorage.removeItem(JUST_SIGNED_IN);
    const key = offeredKey(me.tenant.id, me.user.id);
    if (localStorage.getItem(key) || !passkeysApi.supported()) return;
    passkeysApi
      .list()
      .then((keys) => {
        if (keys.length > 0) return;
        localStorage.setItem(key, new Date().toISOString());
        setOpen(true);
      })
      .catch(() => {});
  }, [me?.user.id]);

  const create = async () => {
    setBusy(true);
    setError("");
    try {
      await passkeysApi.add();
      setOpen(false);
      toast("Passkey added. Next time, sign in with it.");
    } catch (e) {
      setError(passkeyMessage(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Modal open={open} title="Sign in faster with a passkey" onClose={() => setOpen(false)}>
      <p>Use your fingerprint, face or device PIN next time instead of your password. You can add or remove passkeys in My account at any time.</p>
      {error && <p class="error" role="alert">{error}</p>}
      <div class="actions">
        <button type="button" onClick={() => setOpen(false)}>Not now</button>
        <button type="button" class="primary" disabled={busy} onClick={() => void create()}>Create a passkey</button>
      </div>
    </Modal>
  );
}
