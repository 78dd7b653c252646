/**
 * After a password sign-in, the offer to create a passkey: a notice above the screen (it blocks
 * nothing), made once per user on this browser ("Not now" is an answer), only when the browser
 * can make one and the user has none yet.
 */
import { useEffect, useState } from "preact/hooks";
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

  if (!open) return null;
  return (
    <section class="notice" aria-labelledby="passkey-offer-title" style={{ marginBottom: "1rem" }}>
      <h2 id="passkey-offer-title" style={{ fontSize: "1rem", margin: "0 0 .25rem" }}>Sign in faster with a passkey</h2>
      <p style={{ margin: "0 0 .5rem" }}>Use your fingerprint, face or device PIN next time instead of your password. You can add or remove passkeys in My account at any time.</p>
      {error && <p class="error" role="alert">{error}</p>}
      <div class="row" style={{ gap: ".5rem", flexWrap: "wrap" }}>
        <button type="button" class="primary" disabled={busy} onClick={() => void create()}>Create a passkey</button>
        <button type="button" onClick={() => setOpen(false)}>Not now</button>
      </div>
    </section>
  );
}
