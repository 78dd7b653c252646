/**
 * Create or edit a deal. The server validates (the form has `noValidate`), and each 422 item
 * shows beside the field its `loc` names, as a sentence (api/messages.ts); a 404 for the account,
 * contact or assignee shows beside that field too. Nothing typed is cleared by an error. The
 * account and contact pickers create a record from a name no record has ("Create “Globex”").
 * Probability follows the stage (the stage's own) until the person types one.
 */
import { useId, useState } from "preact/hooks";
import { api, type Deal, type DealWrite, type Stage, type User } from "../api/client";
import { Field, SelectField } from "../shared/field";
import { NO_ERRORS, formErrors, type FormErrors } from "../shared/form-errors";
import { FormFooter } from "../shared/form-footer";
import { COMMON_CURRENCIES, ISO_4217, currencyLabel } from "../shared/currencies";
import { type Choice, Picker } from "../shared/picker";

export const DEAL_FIELDS = ["title", "account_id", "contact_id", "value", "currency", "stage", "probability", "close_date", "assigned_to", "notes"] as const;
const NOT_FOUND_FIELD = { "Account not found.": "account_id", "Contact not found.": "contact_id", "Assignee not found.": "assigned_to" };

export const searchAccounts = async (text: string, signal: AbortSignal): Promise<Choice[]> =>
  (await api.get("/api/v1/crm/accounts", { query: { search: text || undefined, size: 10 }, signal })).items.map((a) => ({ id: a.id, label: a.name, hint: a.domain }));
export const searchContacts = async (text: string, signal: AbortSignal): Promise<Choice[]> =>
  (await api.get("/api/v1/crm/contacts", { query: { search: text || undefined, size: 10 }, signal })).items.map((c) => ({ id: c.id, label: c.name, hint: c.email }));

export const createAccount = async (name: string): Promise<Choice> => {
  const a = await api.create("/api/v1/crm/accounts", { body: { name } });
  return { id: a.id, label: a.name, hint: a.domain };
};
/** "Ada Lovelace" → first name Ada, last name Lovelace; linked to the deal's account when one is chosen. */
export const createContact = async (name: string, accountId: string | null): Promise<Choice> => {
  const [first, ...rest] = name.trim().split(/\s+/);
  const c = await api.create("/api/v1/crm/contacts", { body: { first_name: first!, last_name: rest.join(" ") || null, account_id: accountId } });
  return { id: c.id, label: c.name, hint: c.email };
};

/** A name typed in a picker but not chosen: what the person is told, beside the picker. */
export const unchosen = (typed: string, noun: string): string => `“${typed}” is not chosen yet: pick it from the list, or pick Create “${typed}” to add it as a new ${noun}.`;

/** The currency select's options: the common ones, then every ISO 4217 code, and the deal's own if it is neither (older data). */
export function currencyOptions(current: string): { value: string; label: string; group: string }[] {
  const out = COMMON_CURRENCIES.map((c) => ({ value: c, label: currencyLabel(c), group: "Common" }));
  for (const c of ISO_4217) if (!COMMON_CURRENCIES.includes(c)) out.push({ value: c, label: currencyLabel(c), group: "All currencies" });
  if (current && !ISO_4217.includes(current)) out.unshift({ value: current, label: `${current} (not an ISO currency: choose one)`, group: "Common" });
  return out;
}

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
  const stageProbability = (key: string) => stages.find((s) => s.key === key)?.probability;
  const [probability, setProbability] = useState(
    deal ? (deal.probability === null || deal.probability === undefined ? "" : String(deal.probability)) : String(stageProbability(stages[0]?.key ?? "new") ?? ""),
  );
  // A new deal's probability follows its stage until the person types one.
  const [probabilityTyped, setProbabilityTyped] = useState(!!deal);
  const [accountText, setAccountText] = useState("");
  const [contactText, setContactText] = useState("");
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

  const changeStage = (key: string) => {
    setStage(key);
    const p = stageProbability(key);
    if (!probabilityTyped && p !== undefined) setProbability(String(p));
  };

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setErrors(NO_ERRORS);
    const body = dealBody({ title, account, contact, value, currency, stage, probability, closeDate, assignee, notes });
    // An older deal's currency that is no ISO code is kept unless the person picks another.
    if (deal && body.currency === deal.currency) delete body.currency;
    // A name typed in a picker but not chosen: say so beside it (the server only knows the id is missing).
    const typedAccount = !account && accountText.trim() ? unchosen(accountText.trim(), "account") : null;
    const typedContact = !contact && contactText.trim() ? unchosen(contactText.trim(), "contact") : null;
    if (typedAccount || typedContact) {
      const fields: Record<string, string> = {};
      if (typedAccount) fields.account_id = typedAccount;
      if (typedContact) fields.contact_id = typedContact;
      setErrors({ fields, general: null });
      setBusy(false);
      queueMicrotask(() => (document.querySelector(".deal-form [aria-invalid='true']") as HTMLElement | null)?.focus());
      return;
    }
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
        <Picker
          label="Account"
          value={account}
          onChange={setAccount}
          search={searchAccounts}
          error={err.account_id}
          required
          create={createAccount}
          createHint="new account"
          onText={setAccountText}
          placeholder="Type a name to find or create"
        />
        <Picker
          label="Contact (optional)"
          value={contact}
          onChange={setContact}
          search={searchContacts}
          error={err.contact_id}
          clearable
          create={(name) => createContact(name, account?.id ?? null)}
          createHint="new contact"
          onText={setContactText}
          placeholder="Type a name to find or create"
        />
        <Field label="Value" value={value} onValue={setValue} error={err.value} inputMode="decimal" placeholder="0.00" autocomplete="off" />
        <SelectField label="Currency" value={currency} onValue={setCurrency} options={currencyOptions(currency)} error={err.currency} />
        <SelectField label="Stage" value={stage} onValue={changeStage} options={stageOptions} error={err.stage} />
        <Field
          label="Probability (%)"
          value={probability}
          onValue={(v) => (setProbability(v), setProbabilityTyped(true))}
          error={err.probability}
          inputMode="numeric"
          placeholder="None"
          autocomplete="off"
        />
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
