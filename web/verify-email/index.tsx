/** /verify-email#token=…: the token, read from the fragment and wiped from the address bar, proves the address. */
import { useEffect, useState } from "preact/hooks";
import { ApiError, api } from "../api/client";
import { PublicFrame } from "../shared/layout";
import { Link } from "../shared/router";
import { useSession } from "../shared/session";
import { Loading, errorMessage } from "../shared/states";
import { takeFragmentToken } from "../sign-in/magic-link";

let pending: string | null | undefined;

export default function VerifyEmail() {
  const { me, reload } = useSession();
  const [done, setDone] = useState("");
  const [error, setError] = useState("");

  useEffect(() => {
    pending ??= takeFragmentToken();
    const token = pending;
    pending = undefined;
    if (!token) return setError("This verification link is incomplete. Open the link from the mail again.");
    api
      .post("/api/v1/auth/email/verify", { body: { token } })
      .then(async (r) => {
        setDone(r.email);
        if (me) await reload();
      })
      .catch((e) =>
        setError(
          e instanceof ApiError && e.code === "verification_token_invalid"
            ? "This verification link has expired or was already used. Sign in and ask for a new one from the banner."
            : errorMessage(e),
        ),
      );
  }, []);

  return (
    <PublicFrame title="Confirm your email address">
      {error ? (
        <p class="error" role="alert">{error}</p>
      ) : done ? (
        <p role="status">Thank you: {done} is confirmed.</p>
      ) : (
        <Loading label="Confirming your address…" />
      )}
      {(error || done) && (
        <p>
          <Link href={me ? "/deals" : "/sign-in"}>{me ? "Go to your workspace" : "Go to sign-in"}</Link>
        </p>
      )}
    </PublicFrame>
  );
}
