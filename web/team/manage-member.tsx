/** An admin manages one member: role and profile, second-factor reset, sign-in unlock (a modal). */
import { useEffect, useState } from "preact/hooks";
import { ApiError, api, type Profile, type User } from "../api/client";
import { ConfirmDialog, Modal } from "../shared/dialog";
import { SelectField } from "../shared/field";
import { useSession } from "../shared/session";
import { errorMessage } from "../shared/states";
import { toast } from "../shared/toast";
import { type Guard, unguarded } from "../account/reauth";

export const displayName = (u: User) => u.full_name || u.email;

/** What a 409 `last_admin` means, in words an admin can act on. */
export const LAST_ADMIN =
  "This is the workspace's only admin. A workspace always keeps at least one: make another member an admin first, then try again.";

export function ManageMember({ user, profiles, guard = unguarded, onClose, onChanged }: { user: User | null; profiles: Profile[]; guard?: Guard; onClose: () => void; onChanged: () => void }) {
  const { me, reload } = useSession();
  const [role, setRole] = useState<User["role"]>("member");
  const [profile, setProfile] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");
  const [confirmReset, setConfirmReset] = useState(false);
  useEffect(() => {
    if (!user) return;
    setRole(user.role);
    setProfile(user.profile_id ?? "");
    setError("");
  }, [user?.id]);
  if (!user) return <Modal open={false} title="" onClose={onClose}>{null}</Modal>;
  const self = user.id === me?.user.id;

  const act = async (what: () => Promise<unknown>, done: string) => {
    setBusy(true);
    setError("");
    try {
      await what();
      toast(done);
      onChanged();
      return true;
    } catch (err) {
      setError(err instanceof ApiError && err.code === "last_admin" ? LAST_ADMIN : errorMessage(err));
      return false;
    } finally {
      setBusy(false);
    }
  };

  const save = async (e: Event) => {
    e.preventDefault();
    const ok = await act(() => guard(() => api.patch("/api/v1/users/{id}", { path: { id: user.id }, body: { role, profile_id: profile || null } })), `${displayName(user)} updated.`);
    if (!ok) return;
    // Stepping down oneself: the screens an admin sees change at once.
    if (self) await reload();
    onClose();
  };

  return (
    <Modal open title={`Manage ${displayName(user)}`} onClose={onClose}>
      <form onSubmit={save} noValidate>
        <p class="aside">{user.email}</p>
        <SelectField
          label="Role"
          value={role}
          onValue={(v) => setRole(v as User["role"])}
          options={[
            { value: "member", label: "Member" },
            { value: "admin", label: "Admin: manages the team and the workspace" },
          ]}
        />
        <SelectField label="Profile" value={profile} onValue={setProfile} options={[{ value: "", label: "No profile" }, ...profiles.map((p) => ({ value: p.id, label: p.name }))]} />
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <div class="actions">
          <button type="button" onClick={onClose}>
            Close
          </button>
          <button type="submit" class="primary" disabled={busy}>
            Save changes
          </button>
        </div>
      </form>
      <h3>Sign-in help</h3>
      <p class="aside">For a member who lost their authenticator app, or who is locked out after too many wrong passwords.</p>
      <div class="actions start">
        {!self && (
          <button type="button" onClick={() => setConfirmReset(true)} disabled={busy}>
            Reset two-factor
          </button>
        )}
        <button type="button" onClick={() => void act(() => api.post("/api/v1/users/{id}/unlock", { path: { id: user.id } }), `${displayName(user)} can sign in again.`)} disabled={busy}>
          Unlock sign-in
        </button>
      </div>
      <ConfirmDialog
        open={confirmReset}
        title="Reset two-factor sign-in?"
        confirmLabel="Reset two-factor"
        danger
        busy={busy}
        onCancel={() => setConfirmReset(false)}
        onConfirm={() =>
          void act(() => guard(() => api.post("/api/v1/users/{id}/2fa/reset", { path: { id: user.id } })), `Two-factor sign-in is off for ${displayName(user)}.`).then(() => setConfirmReset(false))
        }
      >
        <p>
          {displayName(user)} will sign in with their password alone until they set up two-factor again. Their backup codes stop working. Make sure you
          are really talking to them.
        </p>
      </ConfirmDialog>
    </Modal>
  );
}
