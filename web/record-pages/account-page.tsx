/**
 * An account's page (/accounts/{id}): its fields edited in place, its contacts and its deals
 * (each a link to its page), and its timeline.
 */
import "../deals/crm.css";
import "../deal-page/deal-page.css";
import "./record-page.css";
import { useState } from "preact/hooks";
import { api, type Account } from "../api/client";
import { EditInPlace } from "../shared/edit-in-place";
import { Field } from "../shared/field";
import { formatDateTime } from "../shared/format";
import { Link } from "../shared/router";
import { ErrorBox, Loading } from "../shared/states";
import { useLoad } from "../shared/use-load";
import { RecordDeals } from "./record-deals";
import { RecordTimeline } from "./record-timeline";

function AccountContacts({ account }: { account: Account }) {
  const list = useLoad((signal) => api.get("/api/v1/crm/contacts", { query: { account_id: account.id, size: 100 }, signal }), [account.id]);
  const data = list.data;
  return (
    <section class="record-list" aria-labelledby="account-contacts-title">
      <h2 id="account-contacts-title">Contacts</h2>
      {list.error ? <ErrorBox error={list.error} retry={list.reload} /> : null}
      {!data ? (
        list.error ? null : <Loading label="Loading the contacts…" />
      ) : data.total === 0 ? (
        <p class="muted">
          Nobody at {account.name} yet. Add a contact on the <Link href="/contacts">Contacts</Link> screen and choose this account in it.
        </p>
      ) : (
        <ul class="record-links">
          {data.items.map((c) => (
            <li key={c.id}>
              <Link href={`/contacts/${encodeURIComponent(c.id)}`}>{c.name}</Link>
              {c.email ? <span class="muted"> · {c.email}</span> : null}
            </li>
          ))}
          {data.total > data.items.length ? <li class="muted">and {data.total - data.items.length} more</li> : null}
        </ul>
      )}
    </section>
  );
}

export default function AccountPage({ id }: { id: string }) {
  const loaded = useLoad((signal) => api.get("/api/v1/crm/accounts/{id}", { path: { id }, signal }), [id]);
  const [saved, setSaved] = useState<Account | null>(null);
  const [version, setVersion] = useState(0);
  const [text, setText] = useState("");

  const account = saved && saved.id === id ? saved : loaded.data;
  if (!account) {
    return (
      <section class="crm deal-page record-page">
        <p class="back">
          <Link href="/accounts">← All accounts</Link>
        </p>
        {loaded.error ? <ErrorBox error={loaded.error} retry={loaded.reload} /> : <Loading label="Loading the account…" />}
      </section>
    );
  }
  const save = async (body: Partial<Pick<Account, "name" | "domain" | "industry">>) => {
    setSaved(await api.patch("/api/v1/crm/accounts/{id}", { path: { id: account.id }, body }));
    setVersion((v) => v + 1);
  };
  const field = (label: string, name: "name" | "domain" | "industry", extra: Record<string, unknown> = {}) => (
    <EditInPlace
      label={label}
      field={name}
      shown={account[name] ?? <span class="muted">None</span>}
      onStart={() => setText(account[name] ?? "")}
      save={() => save({ [name]: name === "name" ? text : text.trim() || null })}
      editor={({ error }) => <Field label={label} value={text} onValue={setText} error={error} autoFocus autocomplete="off" {...extra} />}
    />
  );

  return (
    <section class="crm deal-page record-page" aria-labelledby="record-title">
      <p class="back">
        <Link href="/accounts">← All accounts</Link>
      </p>
      <div class="deal-head">
        <h1 id="record-title">{account.name}</h1>
        <p class="stage-line muted">Account{account.domain ? ` · ${account.domain}` : ""}</p>
      </div>
      <div class="deal-columns">
        <div class="record-side">
          <dl class="deal-fields">
            {field("Name", "name", { maxLength: 200, required: true })}
            {field("Web domain", "domain", { placeholder: "example.com" })}
            {field("Industry", "industry")}
            <div class="inline-field">
              <dt>Created</dt>
              <dd>{formatDateTime(account.created_at)}</dd>
            </div>
          </dl>
          <AccountContacts account={account} />
        </div>
        <div class="record-main">
          <RecordDeals filter={{ account_id: account.id }} name={account.name} />
          <RecordTimeline kind="account" id={account.id} version={version} />
        </div>
      </div>
    </section>
  );
}
