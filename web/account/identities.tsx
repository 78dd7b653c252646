/**
 * Linked accounts (issue 17): the outside accounts (Google, Microsoft, GitHub, OpenID Connect) I
 * can sign in with. Link one (the browser goes to the provider and comes back to
 * /settings?linked=… or ?error=…), or unlink one; the last way to sign in cannot be removed.
 */
import { useEffect, useState } from "preact/hooks";
import { ApiError, api, type Identity } from "../api/client";
import { ConfirmDialog } from "../shared/dialog";
import { formatDateTime } from "../shared/format";
import { ErrorBox, Loading, errorMessage } from "../shared/states";
import { toast } from "../shared/toast";
import { useLoad } from "../shared/use-load";
import { oauthMessage } from "../sign-in/oauth";
import { useReauth } from "./reauth";

export const LAST_METHOD =
  "This is your only way to sign in, so it cannot be unlinked. Link another account first, or set a password (use “Forgot your password?” on the sign-in page).";

/** `?linked=<provider_id>` or `?error=<code>` from the link flow, read once and cleaned from the address. */
function takeLinkResult(): { linked: string | null; error: string | null } {
  const q = new URLSearchParams(location.search);
  const out = { linked: q.get("linked"), error: q.get("error") };
  if (out.linked !== null || out.error !== null) history.replaceState(null, "", location.pathname);
  return out;
}

export function Identities() {
  const identities = useLoad(() => api.get("/api/v1/auth/identities").then((page) => page.items), []);
  const providers = useLoad(() => api.get("/api/v1/auth/providers/public"), []);
  const twoFactor = useLoad(() => api.get("/api/v1/auth/2fa/status").catch(() => null), []);
  const reauth = useReauth(!!twoFactor.data?.enabled, "change how you sign in");
  const [result] = useState(takeLinkResult);
  const [notice, setNotice] = useState<{ ok: boolean; text: string } | null>(null);
  const [unlinking, setUnlinking] = useState<Identity | null>(null);
  const [busy, setBusy] = useState<string | null>(null);

  // The notice names the provider once the list says which one it was.
  useEffect(() => {
    if (result.error) setNotice({ ok: false, text: oauthMessage(result.error, "link") });
    else if (result.linked !== null) {
      const name = providers.data?.find((p) => p.id === result.linked)?.name;
      setNotice({ ok: true, text: name ? `Your ${name} account is linked: you can sign in with it.` : "Your account is linked: you can sign in with it." });
    }
  }, [providers.data]);

  const link = async (providerId: string) => {
    setBusy(providerId);
    setNotice(null);
    try {
      const { authorization_url } = await reauth.run(() => api.post("/api/v1/auth/identities/link/{provider_id}", { path: { provider_id: providerId } }));
      location.assign(authorization_url);
    } catch (e) {
      setNotice({ ok: false, text: errorMessage(e) });
      setBusy(null);
    }
  };

  const unlink = async () => {
    if (!unlinking) return;
    const it = unlinking;
    setBusy(it.id);
    setNotice(null);
    try {
      await reauth.run(() => api.delete("/api/v1/auth/identities/{id}", { path: { id: it.id } }));
      setUnlinking(null);
      toast(`Unlinked your ${it.provider_name} account.`);
      identities.reload();
    } catch (e) {
      setUnlinking(null);
      setNotice({ ok: false, text: e instanceof ApiError && e.code === "last_sign_in_method" ? LAST_METHOD : errorMessage(e) });
    } finally {
      setBusy(null);
    }
  };

  const linkable = (providers.data ?? []).filter((p) => !(identities.data ?? []).some((i) => i.provider_id === p.id));
  // An organization without providers, and nothing linked: nothing to say here.
  if (providers.data?.length === 0 && identities.data?.length === 0 && !notice) return reauth.dialog;
  return (
    <section class="panel" aria-labelledby="identities-title">
      <h2 id="identities-title">Linked accounts</h2>
      <p>Accounts at other services you can sign in with, besides your password and sign-in links.</p>
      {notice && (
        <p class={notice.ok ? "notice" : "error"} role={notice.ok ? "status" : "alert"}>
          {notice.text}
        </p>
      )}
      {identities.error ? (
        <ErrorBox error={identities.error} retry={identities.reload} />
      ) : !identities.data ? (
        <Loading label="Loading linked accounts…" />
      ) : identities.data.length === 0 ? (
        <p class="hint">No linked accounts yet.</p>
      ) : (
        <ul class="identities">
          {identities.data.map((i) => (
            <li key={i.id}>
              <span>
                <strong>{i.provider_name}</strong>
                {i.email && <> · {i.email}</>}
                <span class="hint">Linked {formatDateTime(i.created_at)}</span>
              </span>
              <button type="button" class="small" disabled={busy === i.id} onClick={() => setUnlinking(i)}>
                Unlink<span class="visually-hidden"> {i.provider_name}</span>
              </button>
            </li>
          ))}
        </ul>
      )}
      {providers.error ? (
        <ErrorBox error={providers.error} retry={providers.reload} />
      ) : (
        linkable.length > 0 && (
          <div class="actions start">
            {linkable.map((p) => (
              <button type="button" key={p.id} disabled={busy !== null} onClick={() => void link(p.id)}>
                {busy === p.id ? "Opening…" : `Link ${p.name}`}
              </button>
            ))}
          </div>
        )
      )}
      <ConfirmDialog
        open={unlinking !== null}
        title={`Unlink your ${unlinking?.provider_name ?? ""} account?`}
        confirmLabel="Unlink"
        danger
        busy={busy !== null}
        onConfirm={() => void unlink()}
        onCancel={() => setUnlinking(null)}
      >
        <p>You will no longer be able to sign in with it. You can link it again later.</p>
      </ConfirmDialog>
      {reauth.dialog}
    </section>
  );
}
