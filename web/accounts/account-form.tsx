/** Create or edit an account: name, web domain, industry; 422 items beside their fields. */
import { useState } from "preact/hooks";
import { api, type Account } from "../api/client";
import { Field } from "../shared/field";
import { NO_ERRORS, formErrors, type FormErrors } from "../shared/form-errors";
import { FormFooter } from "../shared/form-footer";

const FIELDS = ["name", "domain", "industry"] as const;

export function AccountForm({ account, onSaved, onCancel }: { account: Account | null; onSaved: (a: Account, created: boolean) => void; onCancel: () => void }) {
  const [name, setName] = useState(account?.name ?? "");
  const [domain, setDomain] = useState(account?.domain ?? "");
  const [industry, setIndustry] = useState(account?.industry ?? "");
  const [errors, setErrors] = useState<FormErrors>(NO_ERRORS);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setErrors(NO_ERRORS);
    const body = { name, domain: domain.trim() || null, industry: industry.trim() || null };
    try {
      onSaved(account ? await api.patch("/api/v1/crm/accounts/{id}", { path: { id: account.id }, body }) : await api.create("/api/v1/crm/accounts", { body }), !account);
    } catch (x) {
      setErrors(formErrors(x, FIELDS));
      setBusy(false);
    }
  };
  return (
    <form class="crm-form" onSubmit={submit} noValidate>
      <Field label="Name" value={name} onValue={setName} error={errors.fields.name} required maxLength={200} autoFocus />
      <div class="grid2">
        <Field label="Web domain (optional)" value={domain} onValue={setDomain} error={errors.fields.domain} placeholder="example.com" autocomplete="off" />
        <Field label="Industry (optional)" value={industry} onValue={setIndustry} error={errors.fields.industry} autocomplete="off" />
      </div>
      <FormFooter error={errors.general} busy={busy} busyLabel="Saving…" label={account ? "Save account" : "Create account"} onCancel={onCancel} />
    </form>
  );
}
