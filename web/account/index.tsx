/** My account and security: my name, two-step verification, my sessions, sign out. */
import { useState } from "preact/hooks";
import { ApiError, api } from "../api/client";
import { Field } from "../shared/field";
import { useSession } from "../shared/session";
import { errorMessage } from "../shared/states";
import { toast } from "../shared/toast";
import { Identities } from "./identities";
import { Passkeys } from "./passkeys";
import { PasswordPanel } from "./set-password";
import { Sessions } from "./sessions";
import { TwoFactor } from "./two-factor";

function Profile() {
  const { me, reload } = useSession();
  const [name, setName] = useState(me?.user.full_name ?? "");
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  if (!me) return null;
  const save = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError("");
    try {
      await api.patch("/api/v1/users/{id}", { path: { id: me.user.id }, body: { full_name: name.trim() || null } });
      await reload();
      toast("Name saved.");
    } catch (err) {
      setError(err instanceof ApiError ? (err.fieldError("full_name") ?? err.detail) : errorMessage(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="panel" aria-labelledby="profile-title">
      <h2 id="profile-title">Profile</h2>
      <p>
        {me.user.email} · {me.user.role === "admin" ? "Administrator" : "Member"} of {me.tenant.name}
      </p>
      <form onSubmit={save} noValidate class="toolbar">
        <Field label="Your name" autocomplete="name" value={name} onValue={setName} error={error || undefined} maxLength={200} />
        <button type="submit" class="primary" disabled={busy}>Save name</button>
      </form>
    </section>
  );
}

export default function AccountScreen() {
  const { signOut } = useSession();
  return (
    <>
      <h1>My account</h1>
      <Profile />
      <PasswordPanel />
      <Passkeys />
      <TwoFactor />
      <Identities />
      <Sessions />
      <section class="panel" aria-labelledby="signout-title">
        <h2 id="signout-title">Sign out</h2>
        <p>End this session on this device.</p>
        <button type="button" onClick={() => void signOut()}>Sign out of this device</button>
      </section>
    </>
  );
}
