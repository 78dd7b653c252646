/** /accept-invitation#token=…: a name and a password, then signed in to the team's workspace. */
import { useState } from "preact/hooks";
import { ApiError, api } from "../api/client";
import { Field } from "../shared/field";
import { PublicFrame } from "../shared/layout";
import { useSession } from "../shared/session";
import { errorMessage } from "../shared/states";
import { signedIn } from "../sign-in";
import { takeFragmentToken } from "../sign-in/magic-link";

let held: string | null | undefined;

export default function AcceptInvitation() {
  const { reload } = useSession();
  const [token] = useState(() => (held ??= takeFragmentToken()));
  const [name, setName] = useState("");
  const [password, setPassword] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");
  const [fieldErrors, setFieldErrors] = useState<Record<string, string>>({});

  const submit = async (e: Event) => {
    e.preventDefault();
    if (!token) return;
    setBusy(true);
    setError("");
    setFieldErrors({});
    try {
      const answer = await api.post("/api/v1/auth/invitations/accept", { body: { token, password, full_name: name.trim() || null } });
      held = undefined;
      await signedIn(answer, reload);
    } catch (err) {
      if (err instanceof ApiError && err.items.length) {
        setFieldErrors({ password: err.fieldError("password") ?? "", full_name: err.fieldError("full_name") ?? "" });
        if (!err.fieldError("password") && !err.fieldError("full_name")) setError(err.detail);
      } else if (err instanceof ApiError && err.code === "invitation_invalid") {
        setError("This invitation has expired, was revoked, or was already used. Ask your administrator for a new one.");
      } else setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };

  if (!token) {
    return (
      <PublicFrame title="Join your team">
        <p class="error" role="alert">This invitation link is incomplete. Open the link from the mail again.</p>
      </PublicFrame>
    );
  }
  return (
    <PublicFrame title="Join your team">
      <p>Choose your name and a password to finish joining.</p>
      <form onSubmit={submit} noValidate>
        <Field label="Your name" autocomplete="name" value={name} onValue={setName} error={fieldErrors.full_name || undefined} />
        <Field
          label="Password"
          type="password"
          autocomplete="new-password"
          required
          minLength={8}
          maxLength={128}
          hint="8 to 128 characters, not a common one."
          value={password}
          onValue={setPassword}
          error={fieldErrors.password || undefined}
        />
        {error && <p class="error" role="alert">{error}</p>}
        <button type="submit" class="primary wide" disabled={busy}>
          {busy ? "Joining…" : "Join"}
        </button>
      </form>
    </PublicFrame>
  );
}
