/** Create or edit a contact: names, email, phone, the account they work at; 422 items beside their fields. */
import { useState } from "preact/hooks";
import { api, type Contact } from "../api/client";
import { searchAccounts } from "../deals/deal-form";
import { Field } from "../shared/field";
import { NO_ERRORS, formErrors, type FormErrors } from "../shared/form-errors";
import { FormFooter } from "../shared/form-footer";
import { type Choice, Picker } from "../shared/picker";

const FIELDS = ["first_name", "last_name", "email", "phone", "account_id"] as const;

export interface ContactFormProps {
  contact: Contact | null;
  accountName: string | null;
  onSaved: (c: Contact, created: boolean) => void;
  onCancel: () => void;
}

export function ContactForm({ contact, accountName, onSaved, onCancel }: ContactFormProps) {
  const [first, setFirst] = useState(contact?.first_name ?? "");
  const [last, setLast] = useState(contact?.last_name ?? "");
  const [email, setEmail] = useState(contact?.email ?? "");
  const [phone, setPhone] = useState(contact?.phone ?? "");
  const [account, setAccount] = useState<Choice | null>(contact?.account_id ? { id: contact.account_id, label: accountName ?? "" } : null);
  const [errors, setErrors] = useState<FormErrors>(NO_ERRORS);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setErrors(NO_ERRORS);
    const body = { first_name: first, last_name: last.trim() || null, email: email.trim() || null, phone: phone.trim() || null, account_id: account?.id ?? null };
    try {
      onSaved(contact ? await api.patch("/api/v1/crm/contacts/{id}", { path: { id: contact.id }, body }) : await api.create("/api/v1/crm/contacts", { body }), !contact);
    } catch (x) {
      setErrors(formErrors(x, FIELDS, { "Account not found.": "account_id" }));
      setBusy(false);
    }
  };
  const err = errors.fields;
  return (
    <form class="crm-form" onSubmit={submit} noValidate>
      <div class="grid2">
        <Field label="First name" value={first} onValue={setFirst} error={err.first_name} required maxLength={100} autoFocus autocomplete="off" />
        <Field label="Last name (optional)" value={last} onValue={setLast} error={err.last_name} maxLength={100} autocomplete="off" />
        <Field label="Email (optional)" type="email" value={email} onValue={setEmail} error={err.email} autocomplete="off" />
        <Field label="Phone (optional)" type="tel" value={phone} onValue={setPhone} error={err.phone} autocomplete="off" />
      </div>
      <Picker label="Account (optional)" value={account} onChange={setAccount} search={searchAccounts} error={err.account_id} clearable />
      <FormFooter error={errors.general} busy={busy} busyLabel="Saving…" label={contact ? "Save contact" : "Create contact"} onCancel={onCancel} />
    </form>
  );
}
