/** Team (admins): members with search (each managed or removed), invitations by status, and the invite form. */
import { useLiveEvents } from "../shared/live-events";
import { useSession } from "../shared/session";
import { useState } from "preact/hooks";
import { api, type Profile, type User } from "../api/client";
import { formatDate } from "../shared/format";
import { Pager } from "../shared/pager";
import { Empty, ErrorBox, Loading } from "../shared/states";
import { useDebounced, useLoad } from "../shared/use-load";
import { InviteForm } from "./invite-form";
import { Invitations } from "./invitations";
import { useStepUp, type Guard } from "../account/reauth";
import { ManageMember, displayName } from "./manage-member";
import { RemoveMember } from "./remove-member";

export default function TeamScreen() {
  const profiles = useLoad(() => api.get("/api/v1/users/profiles"), []);
  const [invited, setInvited] = useState(0);
  // Role and profile changes, admin invitations, 2FA resets and removals need a recent sign-in.
  const reauth = useStepUp("change who has access to this workspace");
  return (
    <>
      <h1>Team</h1>
      <section class="panel" aria-labelledby="invite-title">
        <h2 id="invite-title">Invite someone</h2>
        <InviteForm profiles={profiles.data ?? []} guard={reauth.run} onInvited={() => setInvited((n) => n + 1)} />
      </section>
      <Members profiles={profiles.data ?? []} guard={reauth.run} />
      <Invitations profiles={profiles.data ?? []} refresh={invited} guard={reauth.run} />
      {reauth.dialog}
    </>
  );
}

export const profileName = (profiles: Profile[], id: string | null | undefined) => profiles.find((p) => p.id === id)?.name ?? "—";

function Members({ profiles, guard }: { profiles: Profile[]; guard: Guard }) {
  const [search, setSearch] = useState("");
  const [page, setPage] = useState(1);
  const q = useDebounced(search.trim());
  const members = useLoad(() => api.get("/api/v1/users", { query: { page, size: 20, search: q } }), [q, page]);
  // Another admin's change to the team shows without a reload of the page.
  useLiveEvents(["member."], useSession().me?.user.id, () => members.reload());
  const [managing, setManaging] = useState<User | null>(null);
  const [removing, setRemoving] = useState<User | null>(null);
  return (
    <section class="panel" aria-labelledby="members-title">
      <h2 id="members-title">Members</h2>
      <div class="toolbar">
        <div class="field">
          <label for="member-search">Search members</label>
          <input id="member-search" type="search" value={search} placeholder="Name or email" onInput={(e) => (setSearch((e.target as HTMLInputElement).value), setPage(1))} />
        </div>
      </div>
      {members.error ? (
        <ErrorBox error={members.error} retry={members.reload} />
      ) : !members.data ? (
        <Loading />
      ) : members.data.items.length === 0 ? (
        <Empty>{q ? `No member matches “${q}”.` : "No members yet."}</Empty>
      ) : (
        <>
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col" class="hide-narrow">Email</th>
                  <th scope="col">Role</th>
                  <th scope="col" class="hide-narrow">Profile</th>
                  <th scope="col" class="hide-narrow">Joined</th>
                  <th scope="col"><span class="visually-hidden">Actions</span></th>
                </tr>
              </thead>
              <tbody aria-busy={members.loading}>
                {members.data.items.map((u: User) => (
                  <tr key={u.id}>
                    <td>
                      {u.full_name ?? "—"}
                      <span class="show-narrow small">{u.email}</span>
                    </td>
                    <td class="hide-narrow">{u.email}</td>
                    <td>{u.role === "admin" ? "Admin" : "Member"}</td>
                    <td class="hide-narrow">{profileName(profiles, u.profile_id)}</td>
                    <td class="hide-narrow">{formatDate(u.created_at.slice(0, 10))}</td>
                    <td class="row-actions">
                      <button type="button" onClick={() => setManaging(u)} aria-label={`Manage ${displayName(u)}`}>
                        Manage
                      </button>
                      <button type="button" class="danger-text" onClick={() => setRemoving(u)} aria-label={`Remove ${displayName(u)}`}>
                        Remove
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager page={members.data.page} pages={members.data.pages} total={members.data.total} size={members.data.size} noun="members" onPage={setPage} />
        </>
      )}
      <ManageMember user={managing} profiles={profiles} guard={guard} onClose={() => setManaging(null)} onChanged={members.reload} />
      <RemoveMember user={removing} guard={guard} onClose={() => setRemoving(null)} onRemoved={() => (setRemoving(null), members.reload())} />
    </section>
  );
}
