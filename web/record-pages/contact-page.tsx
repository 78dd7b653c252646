/**
 * A contact's page (/contacts/{id}): its fields edited in place (its account with the picker of
 * the contact form), its account and its deals (each a link to its page), and its timeline.
 */
import "../deals/crm.css";
import "../deal-page/deal-page.css";
import "./record-page.css";
import { useState } from "preact/hooks";
import { api, type Contact } from "../api/client";
import { searchAccounts } from "../deals/deal-form";
import { EditInPlace } from "../shared/edit-in-place";
import { Field } from "../shared/field";
import { formatDateTime } from "../shared/format";
import { type Choice, Picker } from "../shared/picker";
import { Link } from "../shared/router";
import { ErrorBox, Loading } from "../shared/states";
import { useLoad } from "../shared/use-load";
import { RecordDeals } from "./record-deals";
import { RecordTimeline } from "./record-timeline";

type TextField = "first_name" | "last_name" | "email" | "phone";

export default function ContactPage({ id }: { id: string }) {
  const loaded = useLoad((signal) => api.get("/api/v1/crm/contacts/{id}", { path: { id }, signal }), [id]);
  const [saved, setSaved] = useState<Contact | null>(null);
  const [version, setVersion] = useState(0);
  const [text, setText] = useState("");
  const [choice, setChoice] = useState<Choice | null>(null);

  const contact = saved && saved.id === id ? saved : loaded.data;
  const accountId = contact?.account_id ?? null;
  const account = useLoad(async (signal) => (accountId ? api.get("/api/v1/crm/accounts/{id}", { path: { id: accountId }, signal }) : null), [accountId]);
  if (!contact) {
    return (
      <section class="crm deal-page record-page">
        <p class="back">
          <Link href="/contacts">← All contacts</Link>
        </p>
        {loaded.error ? <ErrorBox error={loaded.error} retry={loaded.reload} /> : <Loading label="Loading the contact…" />}
      </section>
    );
  }
  const accountName = account.data?.name ?? null;
  const save = async (body: Record<string, string | null>) => {
    setSaved(await api.patch("/api/v1/crm/contacts/{id}", { path: { id: contact.id }, body }));
    setVersion((v) => v + 1);
  };
  const field = (label: string, name: TextField, extra: Record<string, unknown> = {}) => (
    <EditInPlace
      label={label}
      field={name}
      shown={contact[name] ?? <span class="muted">None</span>}
      onStart={() => setText(contact[name] ?? "")}
      save={() => save({ [name]: name === "first_name" ? text : text.trim() || null })}
      editor={({ error }) => <Field label={label} value={text} onValue={setText} error={error} autoFocus autocomplete="off" {...extra} />}
    />
  );

  return (
    <section class="crm deal-page record-page" aria-labelledby="record-title">
      <p class="back">
        <Link href="/contacts">← All contacts</Link>
      </p>
      <div class="deal-head">
        <h1 id="record-title">{contact.name}</h1>
        <p class="stage-line muted">
          Contact
          {accountId && accountName ? (
            <>
              {" at "}
              <Link href={`/accounts/${encodeURIComponent(accountId)}`}>{accountName}</Link>
            </>
          ) : null}
        </p>
      </div>
      <div class="deal-columns">
        <div class="record-side">
          <dl class="deal-fields">
            {field("First name", "first_name", { maxLength: 100, required: true })}
            {field("Last name", "last_name", { maxLength: 100 })}
            {field("Email", "email", { type: "email" })}
            {field("Phone", "phone", { type: "tel" })}
            <EditInPlace
              label="Account"
              field="account_id"
              notFound={{ "Account not found.": "account_id" }}
              shown={accountId ? <Link href={`/accounts/${encodeURIComponent(accountId)}`}>{accountName ?? "Its account"}</Link> : <span class="muted">None</span>}
              onStart={() => setChoice(accountId ? { id: accountId, label: accountName ?? "" } : null)}
              save={() => save({ account_id: choice?.id ?? null })}
              editor={({ error }) => <Picker label="Account" value={choice} onChange={setChoice} search={searchAccounts} error={error} clearable />}
            />
            <div class="inline-field">
              <dt>Created</dt>
              <dd>{formatDateTime(contact.created_at)}</dd>
            </div>
          </dl>
        </div>
        <div class="record-main">
          <RecordDeals filter={{ contact_id: contact.id }} name={contact.name} />
          <RecordTimeline kind="contact" id={contact.id} version={version} />
        </div>
      </div>
    </section>
  );
}
