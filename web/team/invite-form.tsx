/** Invite by email with a profile; tells where the mail went (SMTP, or the outbox). */
import { useState } from "preact/hooks";
import { ApiError, api, type Profile } from "../api/client";
import { config } from "../shared/config";
import { Field, SelectField } from "../shared/field";
import { errorMessage } from "../shared/states";
import { toast } from "../shared/toast";
import { type Guard, unguarded } from "../account/reauth";

export function outboxNotice(email: string): string {
  return `Mail is not set up on this server, so the invitation for ${email} waits in the outbox. To pass the link on yourself, use Copy link in the invitations list below; or your server's operator can show it with "suite mail list".`;
}

export function InviteForm({ profiles, guard = unguarded, onInvited }: { profiles: Profile[]; guard?: Guard; onInvited: () => void }) {
  const [email, setEmail] = useState("");
  const [profile, setProfile] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<{ email?: string; profile?: string; form?: string }>({});
  const [notice, setNotice] = useState("");
  const standard = profiles.find((p) => !p.is_admin)?.id ?? "";

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError({});
    setNotice("");
    try {
      const sentTo = email.trim();
      const inv = await guard(() => api.create("/api/v1/users/invite", { body: { email: sentTo, profile_id: (profile || standard) || null } }));
      setEmail("");
      if (config().smtp) toast(`Invitation sent to ${inv.email}.`);
      else setNotice(outboxNotice(inv.email));
      onInvited();
    } catch (err) {
      if (err instanceof ApiError && err.status === 409) setError({ email: "This person is already a member of this workspace." });
      else if (err instanceof ApiError && err.status === 404) setError({ profile: "This profile no longer exists: choose another." });
      else if (err instanceof ApiError && err.items.length) setError({ email: err.fieldError("email") ?? err.detail });
      else setError({ form: errorMessage(err) });
    } finally {
      setBusy(false);
    }
  };

  return (
    <form onSubmit={submit} noValidate class="toolbar">
      <Field label="Email address" type="email" required value={email} onValue={setEmail} error={error.email} autocomplete="off" />
      <SelectField
        label="Profile"
        value={profile || standard}
        onValue={setProfile}
        error={error.profile}
        options={profiles.map((p) => ({ value: p.id, label: p.name }))}
      />
      <button type="submit" class="primary" disabled={busy || !email.trim()}>
        {busy ? "Inviting…" : "Send invitation"}
      </button>
      {error.form && <p class="error" role="alert">{error.form}</p>}
      {notice && <p class="notice" role="status">{notice}</p>}
    </form>
  );
}
