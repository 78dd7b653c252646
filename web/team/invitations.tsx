/**
 * Invitations by status: resend (a repeat invite: new link, new expiry), copy link (a new link
 * answered to this admin, for a server without mail), revoke with confirmation.
 */
import { useLiveEvents } from "../shared/live-events";
import { useSession } from "../shared/session";
import { useState } from "preact/hooks";
import { api, type Invitation, type InvitationStatus, type Profile } from "../api/client";
import { config } from "../shared/config";
import { ConfirmDialog } from "../shared/dialog";
import { Field, SelectField } from "../shared/field";
import { formatDateTime } from "../shared/format";
import { Pager } from "../shared/pager";
import { Empty, ErrorBox, Loading, errorMessage } from "../shared/states";
import { toast } from "../shared/toast";
import { useLoad } from "../shared/use-load";
import { profileName } from ".";
import { outboxNotice } from "./invite-form";
import { type Guard, unguarded } from "../account/reauth";

const STATUSES: { value: InvitationStatus; label: string }[] = [
  { value: "pending", label: "Pending" },
  { value: "accepted", label: "Accepted" },
  { value: "expired", label: "Expired" },
  { value: "revoked", label: "Revoked" },
];

export function Invitations({ profiles, refresh, guard = unguarded }: { profiles: Profile[]; refresh: number; guard?: Guard }) {
  const [status, setStatus] = useState<InvitationStatus>("pending");
  const [page, setPage] = useState(1);
  const [revoking, setRevoking] = useState<Invitation | null>(null);
  const [busy, setBusy] = useState(false);
  const [copied, setCopied] = useState<CopiedLink | null>(null);
  const list = useLoad(() => api.get("/api/v1/users/invitations", { query: { status, page, size: 20 } }), [status, page, refresh]);
  useLiveEvents(["invitation.", "member.joined"], useSession().me?.user.id, () => list.reload());

  const resend = async (inv: Invitation) => {
    setBusy(true);
    try {
      await guard(() => api.create("/api/v1/users/invite", { body: { email: inv.email, profile_id: inv.profile_id ?? null } }));
      toast(config().smtp ? `Invitation sent again to ${inv.email}.` : outboxNotice(inv.email), "ok", config().smtp ? 5000 : 10000);
      list.reload();
    } catch (e) {
      toast(errorMessage(e), "error");
    } finally {
      setBusy(false);
    }
  };
  const copyLink = async (inv: Invitation) => {
    setBusy(true);
    try {
      const link = await guard(() => api.post("/api/v1/users/invitations/{id}/link", { path: { id: inv.id } }));
      setCopied({ email: inv.email, ...link, onClipboard: await toClipboard(link.url) });
      list.reload();
    } catch (e) {
      toast(errorMessage(e), "error");
    } finally {
      setBusy(false);
    }
  };
  const revoke = async () => {
    if (!revoking) return;
    setBusy(true);
    try {
      await api.post("/api/v1/users/invitations/{id}/revoke", { path: { id: revoking.id } });
      toast(`Invitation for ${revoking.email} revoked.`);
      setRevoking(null);
      list.reload();
    } catch (e) {
      toast(errorMessage(e), "error");
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="panel" aria-labelledby="invitations-title">
      <h2 id="invitations-title">Invitations</h2>
      <div class="toolbar">
        <SelectField label="Status" value={status} onValue={(v) => (setStatus(v as InvitationStatus), setPage(1))} options={STATUSES} />
      </div>
      {list.error ? (
        <ErrorBox error={list.error} retry={list.reload} />
      ) : !list.data ? (
        <Loading />
      ) : list.data.items.length === 0 ? (
        <Empty>No {status} invitations.</Empty>
      ) : (
        <>
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Email</th>
                  <th scope="col" class="hide-narrow">Profile</th>
                  <th scope="col" class="hide-narrow">Sent</th>
                  <th scope="col">{status === "accepted" ? "Accepted" : status === "revoked" ? "Revoked" : "Expires"}</th>
                  {(status === "pending" || status === "expired") && <th scope="col">Actions</th>}
                </tr>
              </thead>
              <tbody>
                {list.data.items.map((inv) => (
                  <tr key={inv.id}>
                    <td class="wrap-anywhere">{inv.email}</td>
                    <td class="hide-narrow">{profileName(profiles, inv.profile_id)}</td>
                    <td class="hide-narrow">{formatDateTime(inv.created_at)}</td>
                    <td>{formatDateTime(status === "accepted" ? inv.accepted_at : status === "revoked" ? inv.revoked_at : inv.expires_at)}</td>
                    {(status === "pending" || status === "expired") && (
                      <td class="row">
                        <button type="button" class="small" disabled={busy} onClick={() => void resend(inv)} aria-label={`Resend the invitation to ${inv.email}`}>
                          Resend
                        </button>
                        {status === "pending" && (
                          <button type="button" class="small" disabled={busy} onClick={() => void copyLink(inv)} aria-label={`Copy link for ${inv.email}`}>
                            Copy link
                          </button>
                        )}
                        {status === "pending" && (
                          <button type="button" class="small" disabled={busy} onClick={() => setRevoking(inv)} aria-label={`Revoke the invitation to ${inv.email}`}>
                            Revoke
                          </button>
                        )}
                      </td>
                    )}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager page={list.data.page} pages={list.data.pages} total={list.data.total} size={list.data.size} noun="invitations" onPage={setPage} />
        </>
      )}
      {copied && <CopiedNotice link={copied} onClose={() => setCopied(null)} />}
      <ConfirmDialog open={revoking !== null} title="Revoke this invitation?" confirmLabel="Revoke" danger busy={busy} onConfirm={() => void revoke()} onCancel={() => setRevoking(null)}>
        <p>The link sent to {revoking?.email} will stop working.</p>
      </ConfirmDialog>
    </section>
  );
}

type CopiedLink = { email: string; url: string; expires_at: string; onClipboard: boolean };

/** The clipboard, where the browser allows it (a secure page, permission); false otherwise. */
async function toClipboard(text: string): Promise<boolean> {
  try {
    if (!navigator.clipboard) return false;
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}

/** The link just made, said once: on the clipboard or not, it is also shown to select by hand. */
function CopiedNotice({ link, onClose }: { link: CopiedLink; onClose: () => void }) {
  return (
    <div class="notice" role="status">
      <p>
        {link.onClipboard ? `A new invitation link for ${link.email} is on your clipboard.` : `Copy this new invitation link for ${link.email}.`} Send it to them
        yourself; it works once, until {formatDateTime(link.expires_at)}. The link sent or copied before no longer works.
      </p>
      <Field label="Invitation link" value={link.url} onValue={() => {}} readOnly onFocus={(e) => (e.target as HTMLInputElement).select()} />
      <button type="button" class="small" onClick={onClose}>
        Done
      </button>
    </div>
  );
}
