/** The banner of the signed-in layout until the user's address is verified, with "resend". */
import { useState } from "preact/hooks";
import { ApiError, api } from "../api/client";
import { useSession } from "../shared/session";
import { errorMessage } from "../shared/states";

export function VerifyBanner() {
  const { me, reload } = useSession();
  const [state, setState] = useState<"idle" | "busy" | "sent">("idle");
  const [error, setError] = useState("");
  // Only an answer that says "not verified" shows it (a user object without the field, from an older server, does not).
  if (!me || me.user.email_verified !== false) return null;

  const resend = async () => {
    setState("busy");
    setError("");
    try {
      await api.post("/api/v1/auth/email/resend");
      setState("sent");
    } catch (e) {
      setState("idle");
      if (e instanceof ApiError && e.code === "email_already_verified") await reload();
      else if (e instanceof ApiError && e.code === "rate_limited") setError("Several links were sent already: check your inbox, or try again later.");
      else setError(errorMessage(e));
    }
  };

  return (
    <div class="notice verify-banner" role="status">
      <span>
        Please confirm your email address: open the link we mailed you.
      </span>{" "}
      {state === "sent" ? (
        <span>A new link is on its way.</span>
      ) : (
        <button type="button" class="link" onClick={() => void resend()} disabled={state === "busy"}>
          Resend the link
        </button>
      )}
      {error && <span class="error"> {error}</span>}
    </div>
  );
}
