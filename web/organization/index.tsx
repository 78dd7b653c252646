/** Organization settings (admins): the workspace's name, which modules are on, and the sign-in rules. */
import { useEffect, useState } from "preact/hooks";
import { ApiError, api, type TenantModule } from "../api/client";
import { Field } from "../shared/field";
import { Link } from "../shared/router";
import { useSession } from "../shared/session";
import { ErrorBox, Loading, errorMessage } from "../shared/states";
import { toast } from "../shared/toast";
import { useLoad } from "../shared/use-load";
import { useStepUp } from "../account/reauth";

/** The modules the server knows (docs/interface.md#tenancy), in the words an admin reads. */
export const MODULES: { key: TenantModule; label: string; hint: string }[] = [
  { key: "crm", label: "CRM", hint: "Deals, accounts, contacts and the pipeline. Turning it off hides them from everyone and keeps all their data." },
  { key: "users", label: "Team", hint: "Inviting people and the member list. Members who already joined can still sign in." },
];

export default function OrganizationScreen() {
  const { reload } = useSession();
  const tenant = useLoad(() => api.get("/api/v1/tenant"), []);
  const [name, setName] = useState("");
  const [modules, setModules] = useState<TenantModule[]>([]);
  const [busy, setBusy] = useState(false);
  const [errors, setErrors] = useState<{ name?: string; form?: string }>({});
  // Renaming the workspace or turning modules on and off needs a recent sign-in.
  const reauth = useStepUp("change the organization's settings");
  useEffect(() => {
    if (!tenant.data) return;
    setName(tenant.data.name);
    // The server reads back only modules it accepts (its answer types them as plain names).
    setModules(tenant.data.modules as TenantModule[]);
  }, [tenant.data]);

  if (tenant.error) return <ErrorBox error={tenant.error} retry={tenant.reload} />;
  if (!tenant.data) return <Loading />;

  const toggle = (key: TenantModule, on: boolean) => setModules(on ? [...new Set([...modules, key])].sort() : modules.filter((m) => m !== key));
  const save = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setErrors({});
    try {
      await reauth.run(() => api.patch("/api/v1/tenant", { body: { name: name.trim(), modules } }));
      toast("Organization settings saved.");
      // The name in the top bar and the screens a module opens follow at once.
      await reload();
      tenant.reload();
    } catch (err) {
      if (err instanceof ApiError && err.items.length) setErrors({ name: err.fieldError("name") ?? err.detail });
      else setErrors({ form: errorMessage(err) });
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <h1>Organization</h1>
      <section class="panel" aria-labelledby="org-title">
        <h2 id="org-title">Workspace</h2>
        <form onSubmit={save} noValidate>
          <Field label="Organization name" required maxLength={100} value={name} onValue={setName} error={errors.name} autocomplete="organization" />
          <p class="aside">
            Address: <strong>{tenant.data.subdomain}</strong> (the address cannot be changed).
          </p>
          <fieldset class="checks">
            <legend>Modules</legend>
            {MODULES.map((m) => (
              <div key={m.key}>
                <label>
                  <input type="checkbox" checked={modules.includes(m.key)} onChange={(e) => toggle(m.key, (e.target as HTMLInputElement).checked)} />
                  <span>{m.label}</span>
                </label>
                <p class="hint">{m.hint}</p>
              </div>
            ))}
          </fieldset>
          {errors.form && (
            <p class="error" role="alert">
              {errors.form}
            </p>
          )}
          <button type="submit" class="primary" disabled={busy || !name.trim()}>
            {busy ? "Saving…" : "Save settings"}
          </button>
        </form>
      </section>
      <section class="panel" aria-labelledby="org-sign-in-title">
        <h2 id="org-sign-in-title">Sign-in</h2>
        <SignInRules
          initial={{ require_passkey_or_2fa: tenant.data.require_passkey_or_2fa, require_passkey_for_admins: tenant.data.require_passkey_for_admins }}
          onSaved={() => void reload().then(() => tenant.reload())}
        />
        <p>
          Let people sign in with Google, Microsoft, GitHub or your own OpenID Connect provider: <Link href="/sign-in-providers">Sign-in providers</Link>.
        </p>
      </section>
      <section class="panel" aria-labelledby="org-webhooks-title">
        <h2 id="org-webhooks-title">Webhooks</h2>
        <p>
          Send this organization’s changes (deals, accounts, contacts, members…) to another system as they happen: <Link href="/organization/webhooks">Webhooks</Link>.
        </p>
      </section>
      {reauth.dialog}
    </>
  );
}

type Rules = { require_passkey_or_2fa: boolean; require_passkey_for_admins: boolean };

const RULES: { key: keyof Rules; label: string; hint: string }[] = [
  {
    key: "require_passkey_or_2fa",
    label: "Everyone must use a passkey or two-step verification",
    hint: "Members who have neither are asked to set one up after they sign in, and can do nothing else until they have.",
  },
  {
    key: "require_passkey_for_admins",
    label: "Administrators must use a passkey",
    hint: "Two-step verification is not enough for administrators: each must add a passkey before doing anything else.",
  },
];

/** The organization's sign-in policy: two switches, saved apart from the name (with a recent sign-in). */
function SignInRules({ initial, onSaved }: { initial: Rules; onSaved: () => void }) {
  const [rules, setRules] = useState<Rules>(initial);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");
  const reauth = useStepUp("change the organization's sign-in rules");
  useEffect(() => setRules(initial), [initial.require_passkey_or_2fa, initial.require_passkey_for_admins]);
  const changed = rules.require_passkey_or_2fa !== initial.require_passkey_or_2fa || rules.require_passkey_for_admins !== initial.require_passkey_for_admins;
  const save = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError("");
    try {
      await reauth.run(() => api.patch("/api/v1/tenant", { body: rules }));
      toast("Sign-in rules saved.");
      onSaved();
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form onSubmit={save} noValidate>
      <fieldset class="checks">
        <legend>Sign-in rules</legend>
        {RULES.map((r) => (
          <div key={r.key}>
            <label>
              <input type="checkbox" role="switch" checked={rules[r.key]} onChange={(e) => setRules({ ...rules, [r.key]: (e.target as HTMLInputElement).checked })} />
              <span>{r.label}</span>
            </label>
            <p class="hint">{r.hint}</p>
          </div>
        ))}
      </fieldset>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <button type="submit" class="primary" disabled={busy || !changed}>
        {busy ? "Saving…" : "Save sign-in rules"}
      </button>
      {reauth.dialog}
    </form>
  );
}
