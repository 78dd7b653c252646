/**
 * A deal's page (/deals/{id}): every field edited in place (the deal form's controls and its
 * error mapping), the account and contact with links to their pages, the days in the current
 * stage, and the timeline with notes.
 */
import "../deals/crm.css";
import "./deal-page.css";
import { useState } from "preact/hooks";
import { api, type Deal, type DealWrite, type User } from "../api/client";
import { Field, SelectField } from "../shared/field";
import { formatDate, formatDateTime, money } from "../shared/format";
import { type Choice, Picker } from "../shared/picker";
import { Link } from "../shared/router";
import { useSession } from "../shared/session";
import { ErrorBox, Loading } from "../shared/states";
import { useLoad } from "../shared/use-load";
import { useStages } from "../stages/store";
import { searchAccounts, searchContacts } from "../deals/deal-form";
import { InlineField } from "./inline-field";
import { LinkedText } from "./linked-text";
import { Timeline } from "./timeline";
import { daysInStage } from "../shared/format";

const personName = (u: Pick<User, "full_name" | "email">) => u.full_name || u.email;

function usePeople(me: User | undefined): User[] | null {
  const people = useLoad(async (signal) => (me?.role === "admin" ? (await api.get("/api/v1/users", { query: { size: 100 }, signal })).items : null), [me?.id, me?.role]);
  return people.data ?? null;
}

export default function DealPage({ id }: { id: string }) {
  const me = useSession().me?.user;
  const { stages } = useStages();
  const people = usePeople(me);
  const loaded = useLoad((signal) => api.get("/api/v1/crm/deals/{id}", { path: { id }, signal }), [id]);
  const [saved, setSaved] = useState<Deal | null>(null);
  const [version, setVersion] = useState(0);
  // Editor state, one per field, set when its edit starts.
  const [text, setText] = useState("");
  const [choice, setChoice] = useState<Choice | null>(null);

  const deal = saved && saved.id === id ? saved : loaded.data;
  if (!deal) {
    return (
      <section class="crm deal-page">
        <p>
          <Link href="/deals">← All deals</Link>
        </p>
        {loaded.error ? <ErrorBox error={loaded.error} retry={loaded.reload} /> : <Loading label="Loading the deal…" />}
      </section>
    );
  }
  const onSaved = (d: Deal) => {
    setSaved(d);
    setVersion((v) => v + 1);
  };
  const common = { deal, onSaved };
  const textField = (label: string, field: keyof DealWrite, value: string | null | undefined, shownValue: preact.ComponentChildren, extra: Record<string, unknown> = {}, toBody = (v: string): unknown => v) => (
    <InlineField
      {...common}
      label={label}
      field={field}
      shown={shownValue}
      onStart={() => setText(value ?? "")}
      body={() => ({ [field]: toBody(text) })}
      editor={({ error }) => <Field label={label} value={text} onValue={setText} error={error} autoFocus {...extra} />}
    />
  );
  const stageOptions = (stages ?? []).map((s) => ({ value: s.key, label: `${s.name} (${s.probability}%)` }));
  const assigneeOptions = [{ value: "", label: "Unassigned" }, ...(me ? [{ value: me.id, label: `${personName(me)} (me)` }] : [])];
  for (const u of people ?? []) if (u.id !== me?.id) assigneeOptions.push({ value: u.id, label: personName(u) });
  if (deal.assigned_to && !assigneeOptions.some((o) => o.value === deal.assigned_to)) {
    assigneeOptions.push({ value: deal.assigned_to, label: deal.assignee_name || deal.assignee_email || "Current assignee" });
  }
  const blankNull = (v: string) => (v.trim() === "" ? null : v);
  const number = (v: string) => (v.trim() === "" ? null : /^-?\d+$/.test(v.trim()) ? Number(v.trim()) : v);

  return (
    <section class="crm deal-page" aria-labelledby="deal-title">
      <p class="back">
        <Link href="/deals">← All deals</Link>
      </p>
      <div class="deal-head">
        <h1 id="deal-title">{deal.title}</h1>
        <p class="stage-line">
          <span class="dot" style={{ background: deal.pipeline_stage_color ?? "#94a3b8" }} aria-hidden="true" />
          <strong>{deal.pipeline_stage_name ?? deal.stage}</strong>{" "}
          <span class="muted" title={formatDateTime(deal.stage_changed_at ?? deal.updated_at)}>
            · {daysInStage(deal.stage_changed_at ?? deal.updated_at)}
          </span>
        </p>
      </div>
      <div class="deal-columns">
        <dl class="deal-fields">
          {textField("Title", "title", deal.title, deal.title, { maxLength: 200, required: true })}
          <InlineField
            {...common}
            label="Stage"
            field="stage"
            shown={deal.pipeline_stage_name ?? deal.stage}
            onStart={() => setText(deal.stage ?? "new")}
            body={() => ({ stage: text })}
            editor={({ error }) => <SelectField label="Stage" value={text} onValue={setText} options={stageOptions} error={error} autoFocus />}
          />
          {textField("Value", "value", deal.value, money(deal.value ?? "0", deal.currency ?? "USD"), { inputMode: "decimal", autocomplete: "off" }, (v) => v.trim() || "0")}
          {textField("Currency", "currency", deal.currency, deal.currency, { maxLength: 3, autocomplete: "off", hint: "Three letters, e.g. USD, EUR" }, (v) => v.trim().toUpperCase())}
          {textField("Probability (%)", "probability", deal.probability === null || deal.probability === undefined ? "" : String(deal.probability), deal.probability === null || deal.probability === undefined ? <span class="muted">None</span> : `${deal.probability}%`, { inputMode: "numeric", autocomplete: "off" }, number)}
          {textField("Close date", "close_date", deal.close_date, deal.close_date ? formatDate(deal.close_date) : <span class="muted">None</span>, { type: "date" }, blankNull)}
          <InlineField
            {...common}
            label="Account"
            field="account_id"
            shown={
              <>
                <Link href={`/accounts/${encodeURIComponent(deal.account_id)}`}>{deal.account_name}</Link>{" "}
                <Link class="muted small" href={`/deals?search=${encodeURIComponent(deal.account_name ?? "")}`}>
                  its deals
                </Link>
              </>
            }
            onStart={() => setChoice({ id: deal.account_id, label: deal.account_name ?? "" })}
            body={() => ({ account_id: choice?.id ?? "" })}
            editor={({ error }) => <Picker label="Account" value={choice} onChange={setChoice} search={searchAccounts} error={error} required />}
          />
          <InlineField
            {...common}
            label="Contact"
            field="contact_id"
            shown={
              deal.contact_id ? (
                <>
                  <Link href={`/contacts/${encodeURIComponent(deal.contact_id)}`}>{deal.contact_name}</Link>{" "}
                  <Link class="muted small" href={`/deals?search=${encodeURIComponent(deal.contact_name ?? "")}`}>
                    their deals
                  </Link>
                </>
              ) : (
                <span class="muted">None</span>
              )
            }
            onStart={() => setChoice(deal.contact_id ? { id: deal.contact_id, label: deal.contact_name ?? "" } : null)}
            body={() => ({ contact_id: choice?.id ?? null })}
            editor={({ error }) => <Picker label="Contact" value={choice} onChange={setChoice} search={searchContacts} error={error} clearable />}
          />
          <InlineField
            {...common}
            label="Assignee"
            field="assigned_to"
            shown={deal.assigned_to ? deal.assignee_name || deal.assignee_email : <span class="muted">Unassigned</span>}
            onStart={() => setText(deal.assigned_to ?? "")}
            body={() => ({ assigned_to: text || null })}
            editor={({ error }) => <SelectField label="Assignee" value={text} onValue={setText} options={assigneeOptions} error={error} autoFocus />}
          />
          <InlineField
            {...common}
            label="Notes"
            field="notes"
            shown={deal.notes ? <span class="note-text"><LinkedText text={deal.notes} /></span> : <span class="muted">None</span>}
            onStart={() => setText(deal.notes ?? "")}
            body={() => ({ notes: text.trim() ? text : null })}
            editor={({ error }) => (
              <div class={`field${error ? " has-error" : ""}`}>
                <label for="deal-notes-field">Notes</label>
                <textarea id="deal-notes-field" rows={4} value={text} onInput={(e) => setText((e.target as HTMLTextAreaElement).value)} aria-invalid={error ? true : undefined} />
                {error ? <p class="error">{error}</p> : null}
              </div>
            )}
          />
          <div class="inline-field">
            <dt>Created</dt>
            <dd>{formatDateTime(deal.created_at)}</dd>
          </div>
        </dl>
        {me && stages ? <Timeline dealId={deal.id} stages={stages} me={me} version={version} /> : <Loading label="Loading the timeline…" />}
      </div>
    </section>
  );
}
