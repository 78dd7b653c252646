/**
 * /magic-link#token=…: the token, read from the fragment, goes to the API only; then signed in.
 *
 * Login CSRF (issue 29.5): someone can mail or send a link to their own account. A link this
 * browser did not ask for (no request from this workspace's sign-in page in the last hour) first
 * says whose account it opened, with a way out, before going on.
 */
import { useEffect, useState } from "preact/hooks";
import { ApiError, api, type Me, type TokenPair } from "../api/client";
import { PublicFrame } from "../shared/layout";
import { Link } from "../shared/router";
import { useSession } from "../shared/session";
import { Loading, errorMessage } from "../shared/states";
import { SecondFactor } from "./second-factor";
import { signedIn } from ".";
import { askedHere } from "./link-asked";

/** Read once and wiped from the address bar, so a reload or a shared screen does not show it. */
export function takeFragmentToken(): string | null {
  const token = new URLSearchParams(location.hash.slice(1)).get("token");
  if (location.hash) history.replaceState(null, "", location.pathname + location.search);
  return token;
}

let pending: string | null | undefined;

/** "You are signed in as … in …", with Continue and a way out: for a sign-in this browser did not start. */
export function ConfirmAccount({ me, onContinue }: { me: Me; onContinue: () => void }) {
  const [busy, setBusy] = useState(false);
  const notMe = async () => {
    setBusy(true);
    await api.post("/api/v1/auth/logout").catch(() => {});
    location.assign("/sign-in");
  };
  return (
    <PublicFrame title="Check the account">
      <p>
        You are signed in as <strong>{me.user.email}</strong> in <strong>{me.tenant.name}</strong>.
      </p>
      <p class="aside">This sign-in link was not asked for in this browser. Continue only if this is your account; if someone sent you the link, sign out.</p>
      <div class="actions start">
        <button type="button" class="primary" onClick={onContinue} disabled={busy}>
          Continue
        </button>
        <button type="button" onClick={() => void notMe()} disabled={busy}>
          This is not me: sign out
        </button>
      </div>
    </PublicFrame>
  );
}

export default function MagicLink() {
  const { reload } = useSession();
  const [challenge, setChallenge] = useState<string | null>(null);
  const [error, setError] = useState("");
  const [confirm, setConfirm] = useState<{ me: Me; pair: TokenPair } | null>(null);

  const arrived = async (pair: TokenPair) => {
    if (askedHere()) return signedIn(pair, reload);
    setConfirm({ me: await api.get("/api/v1/auth/me", { noAuthRetry: true }), pair });
  };

  useEffect(() => {
    pending ??= takeFragmentToken();
    const token = pending;
    pending = undefined;
    if (!token) return setError("This sign-in link is incomplete. Open the link from the mail again, or ask for a new one.");
    api
      .post("/api/v1/auth/magic-verify", { body: { token } })
      .then((answer) => ("requires_2fa" in answer ? setChallenge(answer.temp_token) : arrived(answer)))
      .catch((e) =>
        setError(e instanceof ApiError && e.code === "invalid_token" ? "This sign-in link has expired or was already used. Ask for a new one." : errorMessage(e)),
      );
  }, []);

  if (confirm) return <ConfirmAccount me={confirm.me} onContinue={() => void signedIn(confirm.pair, reload)} />;
  if (challenge) {
    return (
      <PublicFrame title="Two-step verification">
        <SecondFactor tempToken={challenge} credentials="same-origin" onDone={(pair) => signedIn(pair, reload)} onRestart={(why) => (setChallenge(null), setError(why))} />
      </PublicFrame>
    );
  }
  return (
    <PublicFrame title="Sign-in link">
      {error ? (
        <>
          <p class="error" role="alert">{error}</p>
          <p><Link href="/sign-in">Go to sign-in</Link></p>
        </>
      ) : (
        <Loading label="Signing you in…" />
      )}
    </PublicFrame>
  );
}
