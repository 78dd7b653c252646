/**
 * /not-me#token=…: the new-device mail's "this wasn't me" link. One sentence and one button; the
 * token, read from the fragment and wiped from the address bar, is spent only when the button is
 * pressed (a mail scanner that opens the link ends nothing).
 */
import { useState } from "preact/hooks";
import { ApiError, api } from "../api/client";
import { PublicFrame } from "../shared/layout";
import { Link } from "../shared/router";
import { errorMessage } from "../shared/states";
import { takeFragmentToken } from "../sign-in/magic-link";

let held: string | null | undefined;

export default function NotMe() {
  const [token] = useState(() => (held ??= takeFragmentToken()));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");
  const [ended, setEnded] = useState<number | null>(null);

  const signOut = async () => {
    if (!token) return;
    setBusy(true);
    setError("");
    try {
      const r = await api.post("/api/v1/auth/not-me", { body: { token } });
      held = undefined;
      setEnded(r.sessions_ended);
    } catch (err) {
      setError(
        err instanceof ApiError && err.code === "not_me_token_invalid"
          ? "This link has expired or was already used. If you still think someone else signed in, reset your password from the sign-in page."
          : errorMessage(err),
      );
    } finally {
      setBusy(false);
    }
  };

  if (ended !== null) {
    return (
      <PublicFrame title="Signed out">
        <p role="status">
          That sign-in {ended > 1 ? `and ${ended - 1} after it have` : "has"} been signed out. We mailed you a link to choose a new password: use it now, and tell your workspace's admin.
        </p>
        <p>
          <Link href="/sign-in">Go to sign-in</Link>
        </p>
      </PublicFrame>
    );
  }
  if (!token) {
    return (
      <PublicFrame title="Was this not you?">
        <p class="error" role="alert">This link is incomplete. Open the link from the mail again.</p>
      </PublicFrame>
    );
  }
  return (
    <PublicFrame title="Was this not you?">
      <p>If you did not sign in from that device, sign it out now: every sign-in since then ends too, and we mail you a link to choose a new password.</p>
      {error && <p class="error" role="alert">{error}</p>}
      <button type="button" class="primary wide" disabled={busy} onClick={signOut}>
        {busy ? "Signing out…" : "Sign that device out"}
      </button>
    </PublicFrame>
  );
}
