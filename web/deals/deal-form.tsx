/**
 * Create or edit a deal. The server validates (the form has `noValidate`), and each 422 item
 * shows beside the field its `loc` names; a 404 for the account, contact or assignee shows
 * beside that field too.
 */
import { useId, useState } from "preact/hooks";
import { api, type Deal, type DealWrite, type Stage, type User } from "../api/client";
import { Field, SelectField } from "../shared/field";
import { NO_ERRORS, formErrors, type FormErrors } from "../shared/form-errors";
import { FormFooter } from "../shared/form-footer";
import { type Choice, Picker } from "../shared/picker";

export const DEAL_FIELDS = ["title", "account_id", "contact_id", "value", "currency", "stage", "probability", "close_date", "assigned_to", "notes"] as const;
const NOT_FOUND_FIELD = { "Account not found.": "account_id", "Contact not found.": "contact_id", "Assignee not found.": "assigned_to" };

export const searchAccounts = async (text: string, signal: AbortSignal): Promise<Choice[]> =>
  (await api.get("/api/v1/crm/accounts", { query: { search: text || undefined, size: 10 }, signal })).items.map((a) => ({ id: a.id, label: a.name, hint: a.domain }));
export const searchContacts = async (text: string, signal: AbortSignal): Promise<Choice[]> =>
  (await api.get("/api/v1/crm/contacts", { query: { search: text || undefined, size: 10 }, signal })).items.map((c) => ({ id: c.id, label: c.name, hint: c.email }));

export interface DealFormProps {
  deal: Deal | null;
  stages: Stage[];
  /** The signed-in user; admins also get the organization's people. */
  me: User;
  people: User[] | null;
  onSaved: (d: Deal, created: boolean) => void;
  onCancel: () => void;
}

const personName = (u: Pick<User, "full_name" | "email">) => u.full_name || u.email;

/** The body the form sends: blank optional fields are null, numbers as typed (the server says what is wrong). */
export function dealBody(f: {
  title: string;
  account: Choice | null;
  contact: Choice | null;
  value: string;
  currency: string;
  stage: string;
  probability: string;
  closeDate: string;
  assignee: string;
  notes: string;
}): DealWrite {
  const p = f.probability.trim();
  return {
    title: f.title,
    account_id: f.account?.id ?? "",
    contact_id: f.contact?.id ?? null,
    value: f.value.trim() || "0",
    currency: f.currency.trim(),
    stage: f.stage,
    probability: p === "" ? null : /^-?\d+$/.test(p) ? Number(p) : (p as unknown as number),
    close_date: f.closeDate || null,
    assigned_to: f.assignee || null,
    notes: f.notes.trim() ? f.notes : null,
  };
}

export function DealForm({ deal, stages, me, people, onSaved, onCancel }: DealFormProps) {
  const [title, setTitle] = useState(deal?.title ?? "");
  const [account, setAccount] = useState<Choice | null>(deal ? { id: deal.account_id, label: deal.account_name ?? "" } : null);
  const [contact, setContact] = useState<Choice | null>(deal?.contact_id ? { id: deal.contact_id, label: deal.contact_name ?? "" } : null);
  const [value, setValue] = useState(deal?.value ?? "");
  const [currency, setCurrency] = useState(deal?.currency ?? "USD");
  const [stage, setStage] = useState(deal?.stage ?? stages[0]?.key ?? "new");
  const [probability, setProbability] = useState(deal?.probability === null || deal?.probability === undefined ? "" : String(deal.probability));
  const [closeDate, setCloseDate] = useState(deal?.close_date ?? "");
  const [assignee, setAssignee] = useState(deal ? (deal.assigned_to ?? "") : me.id);
  const [notes, setNotes] = useState(deal?.notes ?? "");
  const [errors, setErrors] = useState<FormErrors>(NO_ERRORS);
  const [busy, setBusy] = useState(false);
  const notesId = useId();
  const err = errors.fields;

  const assigneeOptions = [{ value: "", label: "Unassigned" }, { value: me.id, label: `${personName(me)} (me)` }];
  for (const u of people ?? []) if (u.id !== me.id) assigneeOptions.push({ value: u.id, label: personName(u) });
  if (deal?.assigned_to && !assigneeOptions.some((o) => o.value === deal.assigned_to)) {
    assigneeOptions.push({ value: deal.assigned_to, label: deal.assignee_name || deal.assignee_email || "Current assignee" });
  }
  const stageOptions = stages.map((s) => ({ value: s.key, label: `${s.name} (${s.probability}%)` }));
  if (!stages.some((s) => s.key === stage)) stageOptions.unshift({ value: stage, label: deal?.pipeline_stage_name ?? stage });

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setErrors(NO_ERRORS);
    const body = dealBody({ title, account, contact, value, currency, stage, probability, closeDate, assignee, notes });
    try {
      const saved = deal ? await api.patch("/api/v1/crm/deals/{id}", { path: { id: deal.id }, body }) : await api.create("/api/v1/crm/deals", { body });
      onSaved(saved, !deal);
    } catch (x) {
      const fe = formErrors(x, DEAL_FIELDS, NOT_FOUND_FIELD);
      setErrors(fe);
      setBusy(false);
      // Focus the first field in error, so a keyboard or screen-reader user lands on it.
      queueMicrotask(() => (document.querySelector(".deal-form [aria-invalid='true']") as HTMLElement | null)?.focus());
    }
  };

  return (
    <form class="deal-form" onSubmit={submit} noValidate>
      <Field label="Title" value={title} onValue={setTitle} error={err.title} required maxLength={200} autoFocus />
      <div class="grid2">
        <Picker label="Account" value={account} onChange={setAccount} search={searchAccounts} error={err.account_id} required />
        <Picker label="Contact (optional)" value={contact} onChange={setContact} search={searchContacts} error={err.contact_id} clearable />
        <Field label="Value" value={value} onValue={setValue} error={err.value} inputMode="decimal" placeholder="0.00" autocomplete="off" />
        <Field
          label="Currency"
          value={currency}
          onValue={(v) => setCurrency(v.toUpperCase())}
          error={err.currency}
          maxLength={3}
          autocomplete="off"
          hint="Three letters, e.g. USD, EUR"
        />
        <SelectField label="Stage" value={stage} onValue={setStage} options={stageOptions} error={err.stage} />
        <Field label="Probability (%)" value={probability} onValue={setProbability} error={err.probability} inputMode="numeric" placeholder="None" autocomplete="off" />
        <Field label="Close date" type="date" value={closeDate} onValue={setCloseDate} error={err.close_date} />
        <SelectField label="Assignee" value={assignee} onValue={setAssignee} options={assigneeOptions} error={err.assigned_to} />
      </div>
      <div class={`field${err.notes ? " has-error" : ""}`}>
        <label for={notesId}>Notes</label>
        <textarea
          id={notesId}
          rows={3}
          value={notes}
          onInput={(e) => setNotes((e.target as HTMLTextAreaElement).value)}
          aria-invalid={err.notes ? true : undefined}
          aria-describedby={err.notes ? `${notesId}-err` : undefined}
        />
        {err.notes && (
          <p class="error" id={`${notesId}-err`}>
            {err.notes}
          </p>
        )}
      </div>
      <FormFooter error={errors.general} busy={busy} busyLabel="Saving…" label={deal ? "Save deal" : "Create deal"} onCancel={onCancel} />
    </form>
  );
}
