/** /magic-link#token=…: the token, read from the fragment, goes to the API only; then signed in. */
import { useEffect, useState } from "preact/hooks";
import { ApiError, api } from "../api/client";
import { PublicFrame } from "../shared/layout";
import { Link } from "../shared/router";
import { useSession } from "../shared/session";
import { Loading, errorMessage } from "../shared/states";
import { SecondFactor } from "./second-factor";
import { signedIn } from ".";

/** Read once and wiped from the address bar, so a reload or a shared screen does not show it. */
export function takeFragmentToken(): string | null {
  const token = new URLSearchParams(location.hash.slice(1)).get("token");
  if (location.hash) history.replaceState(null, "", location.pathname + location.search);
  return token;
}

let pending: string | null | undefined;

export default function MagicLink() {
  const { reload } = useSession();
  const [challenge, setChallenge] = useState<string | null>(null);
  const [error, setError] = useState("");

  useEffect(() => {
    pending ??= takeFragmentToken();
    const token = pending;
    pending = undefined;
    if (!token) return setError("This sign-in link is incomplete. Open the link from the mail again, or ask for a new one.");
    api.auth
      .magicVerify(token)
      .then((answer) => ("requires_2fa" in answer ? setChallenge(answer.temp_token) : signedIn(answer, reload)))
      .catch((e) =>
        setError(e instanceof ApiError && e.code === "invalid_token" ? "This sign-in link has expired or was already used. Ask for a new one." : errorMessage(e)),
      );
  }, []);

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
