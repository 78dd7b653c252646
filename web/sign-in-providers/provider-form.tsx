/**
 * Add or change a sign-in provider (admins). The kind is chosen once; the issuer URL is asked for
 * OpenID Connect only (the others' are known). The client secret is write-only: never shown, and
 * on a change left empty it stays as it is (the PATCH leaves it out).
 */
import { useState } from "preact/hooks";
import { ApiError, api, type AuthProvider, type Profile, type ProviderKind } from "../api/client";
import { Field, SelectField } from "../shared/field";
import { NO_ERRORS, formErrors, type FormErrors } from "../shared/form-errors";
import { FormFooter } from "../shared/form-footer";
import { CopyField } from "./copy-field";
import { KINDS, defaultName, kindLabel, parseDomains } from "./kinds";

const FIELDS = ["kind", "name", "issuer", "client_id", "client_secret", "allowed_domains", "auto_join", "default_profile_id", "enabled"] as const;

export function ProviderForm({
  provider,
  profiles,
  guard = (action) => action(),
  onSaved,
  onCancel,
}: {
  /** The provider to change; none to add one. */
  provider?: AuthProvider;
  profiles: Profile[];
  /** Runs the save, asking for a recent sign-in first when the server wants one (useReauth's `run`). */
  guard?: <T>(action: () => Promise<T>) => Promise<T>;
  onSaved: (p: AuthProvider) => void;
  onCancel: () => void;
}) {
  const [kind, setKind] = useState<ProviderKind>(provider?.kind ?? "google");
  const [name, setName] = useState(provider?.name ?? "");
  const [nameTouched, setNameTouched] = useState(!!provider);
  const [issuer, setIssuer] = useState(provider?.issuer ?? "");
  const [clientId, setClientId] = useState(provider?.client_id ?? "");
  const [secret, setSecret] = useState("");
  const [domains, setDomains] = useState((provider?.allowed_domains ?? []).join(", "));
  const [autoJoin, setAutoJoin] = useState(provider?.auto_join ?? false);
  const [profileId, setProfileId] = useState(provider?.default_profile_id ?? "");
  const [enabled, setEnabled] = useState(provider?.enabled ?? true);
  const [errors, setErrors] = useState<FormErrors>(NO_ERRORS);
  const [busy, setBusy] = useState(false);
  const err = errors.fields;
  const shownName = nameTouched ? name : defaultName(kind);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setErrors(NO_ERRORS);
    const common = {
      name: shownName.trim(),
      client_id: clientId.trim(),
      allowed_domains: parseDomains(domains),
      auto_join: autoJoin,
      default_profile_id: profileId || null,
      enabled,
      ...(kind === "oidc" ? { issuer: issuer.trim() } : {}),
    };
    try {
      const saved = await guard(() =>
        provider
          ? api.patch("/api/v1/auth/providers/{id}", { path: { id: provider.id }, body: { ...common, ...(secret ? { client_secret: secret } : {}) } })
          : api.post("/api/v1/auth/providers", { body: { kind, ...common, client_secret: secret } }),
      );
      setSecret("");
      onSaved(saved);
    } catch (x) {
      // A 409 provider_name_taken belongs beside the name (its detail names no field).
      setErrors(x instanceof ApiError && x.code === "provider_name_taken" ? { fields: { name: x.detail }, general: null } : formErrors(x, FIELDS));
      setBusy(false);
    }
  };

  const check = (label: string, hint: string, value: boolean, set: (v: boolean) => void) => (
    <div>
      <label>
        <input type="checkbox" checked={value} onChange={(e) => set((e.target as HTMLInputElement).checked)} />
        <span>{label}</span>
      </label>
      <p class="hint">{hint}</p>
    </div>
  );

  return (
    <form class="provider-form" onSubmit={submit} noValidate>
      {provider ? (
        <p>
          Provider type: <strong>{kindLabel(provider.kind)}</strong>
        </p>
      ) : (
        <SelectField label="Provider type" value={kind} onValue={(v) => setKind(v as ProviderKind)} options={KINDS} error={err.kind} autoFocus />
      )}
      <Field
        label="Name on the sign-in button"
        value={shownName}
        onValue={(v) => (setName(v), setNameTouched(true))}
        error={err.name}
        required
        maxLength={100}
        autocomplete="off"
        hint="People see “Continue with” and this name."
      />
      {kind === "oidc" && (
        <Field
          label="Issuer URL"
          type="url"
          value={issuer}
          onValue={setIssuer}
          error={err.issuer}
          required
          autocomplete="off"
          placeholder="https://id.example.com"
          hint="Its discovery document is read from /.well-known/openid-configuration below this address."
        />
      )}
      <Field label="Client ID" value={clientId} onValue={setClientId} error={err.client_id} required autocomplete="off" spellcheck={false} />
      <Field
        label="Client secret"
        type="password"
        value={secret}
        onValue={setSecret}
        error={err.client_secret}
        required={!provider}
        autocomplete="new-password"
        hint={provider ? "Leave it empty to keep the current secret. It is stored encrypted and never shown again." : "Stored encrypted and never shown again."}
      />
      <Field
        label="Allowed email domains"
        value={domains}
        onValue={setDomains}
        error={err.allowed_domains}
        autocomplete="off"
        spellcheck={false}
        placeholder="acme.com, acme.org"
        hint="Separated by commas. Only verified addresses at these domains may join; leave it empty to let only existing members sign in."
      />
      <fieldset class="checks">
        <legend>Access</legend>
        {check("Let new people join", "Someone with a verified address at an allowed domain becomes a member on their first sign-in.", autoJoin, setAutoJoin)}
        {err.auto_join && <p class="error">{err.auto_join}</p>}
        {check("Enabled", "Shown on the sign-in page. Turn it off to stop sign-ins through it without losing the settings.", enabled, setEnabled)}
        {err.enabled && <p class="error">{err.enabled}</p>}
      </fieldset>
      <SelectField
        label="Profile of people who join"
        value={profileId}
        onValue={setProfileId}
        options={[{ value: "", label: "The organization's default" }, ...profiles.map((p) => ({ value: p.id, label: p.name }))]}
        error={err.default_profile_id}
      />
      {provider && <CopyField label="Redirect URI" value={provider.redirect_uri} hint={`Registered at ${kindLabel(provider.kind)} as the redirect (callback) URI.`} />}
      <FormFooter error={errors.general} busy={busy} busyLabel={provider ? "Saving…" : "Adding…"} label={provider ? "Save provider" : "Add provider"} onCancel={onCancel} />
    </form>
  );
}
