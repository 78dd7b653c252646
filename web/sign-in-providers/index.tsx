/**
 * Sign-in providers (admins): the outside accounts people of this organization may sign in with
 * (Google, Microsoft, GitHub, any OpenID Connect issuer). Add, change, delete; after adding, the
 * redirect URI to register at the provider, with a Copy button.
 */
import "./providers.css";
import { useState } from "preact/hooks";
import { api, type AuthProvider } from "../api/client";
import { useReauth } from "../account/reauth";
import { ConfirmDialog, Modal } from "../shared/dialog";
import { Empty, ErrorBox, Loading, errorMessage } from "../shared/states";
import { toast } from "../shared/toast";
import { useLoad } from "../shared/use-load";
import { CopyField } from "./copy-field";
import { kindLabel } from "./kinds";
import { ProviderForm } from "./provider-form";

export default function SignInProvidersScreen() {
  const list = useLoad(() => api.get("/api/v1/auth/providers").then((page) => page.items), []);
  // The profile picker is a nicety: without the list (Team module off), "the default" still works.
  const profiles = useLoad(() => api.get("/api/v1/users/profiles").catch(() => []), []);
  const [adding, setAdding] = useState(false);
  const [editing, setEditing] = useState<AuthProvider | null>(null);
  const [deleting, setDeleting] = useState<AuthProvider | null>(null);
  const [added, setAdded] = useState<AuthProvider | null>(null);
  const [busy, setBusy] = useState(false);
  // Adding, changing or deleting a provider needs a recent sign-in (403 reauthentication_required):
  // the step-up dialog asks for the password, and the 2FA code when the admin has 2FA on.
  const twoFactor = useLoad(() => api.get("/api/v1/auth/2fa/status").catch(() => null), []);
  const reauth = useReauth(twoFactor.data?.enabled ?? false, "change the organization's sign-in providers");

  const remove = async () => {
    if (!deleting) return;
    setBusy(true);
    try {
      const id = deleting.id;
      await reauth.run(() => api.delete("/api/v1/auth/providers/{id}", { path: { id } }));
      toast(`Deleted the provider “${deleting.name}”.`);
      setDeleting(null);
      list.reload();
    } catch (e) {
      toast(errorMessage(e), "error");
    } finally {
      setBusy(false);
    }
  };

  const providers = list.data;
  return (
    <section aria-labelledby="providers-title" class="providers">
      <div class="screen-head">
        <h1 id="providers-title">Sign-in providers</h1>
        <button type="button" class="primary" onClick={() => setAdding(true)}>
          Add provider
        </button>
      </div>
      <p class="muted">
        Let people sign in with an account they already have. Sign-in goes by the provider’s verified identity, never by a matching email: an existing member links
        the account once from My account.
      </p>
      {list.error ? (
        <ErrorBox error={list.error} retry={list.reload} />
      ) : !providers ? (
        <Loading label="Loading providers…" />
      ) : providers.length === 0 ? (
        <Empty>
          <p>No sign-in providers yet: people sign in with their password or a sign-in link.</p>
        </Empty>
      ) : (
        <div class="table-wrap" tabIndex={0} role="region" aria-label="Sign-in providers">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col" class="hide-narrow">Provider</th>
                <th scope="col">Allowed domains</th>
                <th scope="col">Joining</th>
                <th scope="col">Status</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {providers.map((p) => (
                <tr key={p.id}>
                  <td>
                    <strong>{p.name}</strong>
                    <span class="show-narrow">{kindLabel(p.kind)}</span>
                  </td>
                  <td class="hide-narrow">
                    {kindLabel(p.kind)}
                    {p.issuer && <span class="hint issuer">{p.issuer}</span>}
                  </td>
                  <td>{p.allowed_domains.length ? p.allowed_domains.join(", ") : <span class="muted">None</span>}</td>
                  <td>{p.auto_join ? "New people may join" : "Members only"}</td>
                  <td>{p.enabled ? <span class="tag ok">Enabled</span> : <span class="tag">Disabled</span>}</td>
                  <td class="row-actions">
                    <button type="button" class="small" onClick={() => setEditing(p)}>
                      Edit<span class="visually-hidden"> {p.name}</span>
                    </button>
                    <button type="button" class="small danger-text" onClick={() => setDeleting(p)}>
                      Delete<span class="visually-hidden"> {p.name}</span>
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Modal open={adding} title="Add a sign-in provider" onClose={() => setAdding(false)}>
        <ProviderForm
          profiles={profiles.data ?? []}
          guard={reauth.run}
          onCancel={() => setAdding(false)}
          onSaved={(p) => {
            setAdding(false);
            setAdded(p);
            list.reload();
          }}
        />
      </Modal>
      {editing && (
        <Modal open title={`Edit the provider “${editing.name}”`} onClose={() => setEditing(null)}>
          <ProviderForm
            provider={editing}
            profiles={profiles.data ?? []}
            guard={reauth.run}
            onCancel={() => setEditing(null)}
            onSaved={(p) => {
              setEditing(null);
              toast(`Saved the provider “${p.name}”.`);
              list.reload();
            }}
          />
        </Modal>
      )}
      {added && (
        <Modal open title={`Added “${added.name}”`} onClose={() => setAdded(null)}>
          <p>Last step: register this redirect URI at {kindLabel(added.kind)}, in the settings of the app whose client ID you entered. Sign-in fails until it matches.</p>
          <CopyField label="Redirect URI" value={added.redirect_uri} />
          <div class="actions">
            <button type="button" class="primary" onClick={() => setAdded(null)}>
              Done
            </button>
          </div>
        </Modal>
      )}
      <ConfirmDialog
        open={deleting !== null}
        title={`Delete the provider “${deleting?.name ?? ""}”?`}
        confirmLabel="Delete provider"
        danger
        busy={busy}
        onConfirm={() => void remove()}
        onCancel={() => setDeleting(null)}
      >
        <p>Nobody can sign in through it any more, and the accounts linked to it are unlinked. Members keep their other ways to sign in.</p>
      </ConfirmDialog>
      {reauth.dialog}
    </section>
  );
}
