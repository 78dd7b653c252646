/** Removing a member: a confirmation that offers to hand their deals to another member. */
import { useEffect, useState } from "preact/hooks";
import { ApiError, api, type User } from "../api/client";
import { ConfirmDialog } from "../shared/dialog";
import { SelectField } from "../shared/field";
import { errorMessage } from "../shared/states";
import { toast } from "../shared/toast";
import { LAST_ADMIN, displayName } from "./manage-member";
import { type Guard, unguarded } from "../account/reauth";

export function RemoveMember({ user, guard = unguarded, onClose, onRemoved }: { user: User | null; guard?: Guard; onClose: () => void; onRemoved: () => void }) {
  const [others, setOthers] = useState<User[]>([]);
  const [to, setTo] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");
  useEffect(() => {
    setTo("");
    setError("");
    if (!user) return;
    // The first hundred members are the choice; a bigger team can search the list and reassign later.
    api
      .get("/api/v1/users", { query: { size: 100 } })
      .then((p) => setOthers(p.items.filter((u) => u.id !== user.id)))
      .catch(() => setOthers([]));
  }, [user?.id]);

  const confirm = async () => {
    if (!user) return;
    setBusy(true);
    setError("");
    try {
      await guard(() => api.delete("/api/v1/users/{id}", { path: { id: user.id }, query: { reassign_to: to || undefined } }));
      toast(`${displayName(user)} was removed from the workspace.`);
      onRemoved();
    } catch (err) {
      setError(err instanceof ApiError && err.code === "last_admin" ? LAST_ADMIN : errorMessage(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <ConfirmDialog open={user !== null} title={user ? `Remove ${displayName(user)}?` : ""} confirmLabel="Remove member" danger busy={busy} onCancel={onClose} onConfirm={() => void confirm()}>
      <p>They are signed out at once and can no longer sign in. Their email can be invited again later.</p>
      <SelectField
        label="Their deals go to"
        value={to}
        onValue={setTo}
        options={[{ value: "", label: "Nobody (leave them unassigned)" }, ...others.map((u) => ({ value: u.id, label: displayName(u) }))]}
      />
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </ConfirmDialog>
  );
}
