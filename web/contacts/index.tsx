/** Contacts: the people at accounts. Search, paging (both in the URL), create, edit, delete. */
import "../deals/crm.css";
import { useEffect, useState } from "preact/hooks";
import { api, type Contact } from "../api/client";
import { ConfirmDialog, Modal } from "../shared/dialog";
import { Link, useLocation } from "../shared/router";
import { lazyScreen } from "../shared/lazy";
import { errorMessage } from "../shared/states";
import { toast } from "../shared/toast";
import { useConfirmDelete } from "../shared/use-confirm-delete";
import { RecordList } from "../shared/record-list";
import { TransferButtons } from "../import/transfer-buttons";
import { useUrlSearchList } from "../shared/url-search";
import { ContactForm } from "./contact-form";

/** A contact carries its account's id only: names are looked up once per account and kept. */
const accountNames = new Map<string, Promise<string | null>>();
function accountName(id: string): Promise<string | null> {
  let p = accountNames.get(id);
  if (!p) {
    p = api.get("/api/v1/crm/accounts/{id}", { path: { id } }).then(
      (a) => a.name,
      () => (accountNames.delete(id), null),
    );
    accountNames.set(id, p);
  }
  return p;
}

function useAccountNames(contacts: Contact[] | undefined): Map<string, string> {
  const [names, setNames] = useState<Map<string, string>>(new Map());
  useEffect(() => {
    const ids = [...new Set((contacts ?? []).map((c) => c.account_id).filter((x): x is string => !!x))];
    let live = true;
    void Promise.all(ids.map(async (id) => [id, await accountName(id)] as const)).then((pairs) => {
      if (!live) return;
      setNames((m) => {
        const n = new Map(m);
        for (const [id, name] of pairs) if (name !== null) n.set(id, name);
        return n;
      });
    });
    return () => void (live = false);
  }, [contacts]);
  return names;
}

// A contact's page loads as a chunk of its own, on first use.
const ContactPage = lazyScreen(() => import("../record-pages/contact-page").then((m) => m.default));

/** /contacts is the list; /contacts/{id} one contact's page (web/record-pages/). */
export default function ContactsScreen() {
  const { path } = useLocation();
  const id = /^\/contacts\/([^/]+)$/.exec(path)?.[1];
  return id ? <ContactPage id={decodeURIComponent(id)} /> : <ContactList />;
}

function ContactList() {
  const s = useUrlSearchList<Contact>((query, signal) => api.get("/api/v1/crm/contacts", { query, signal }));
  const { view, list } = s;
  const names = useAccountNames(list.data?.items);
  const [editing, setEditing] = useState<Contact | "new" | null>(null);
  const del = useConfirmDelete<Contact>(
    (c) => api.delete("/api/v1/crm/contacts/{id}", { path: { id: c.id } }),
    (c) => (toast(`Deleted “${c.name}”.`), list.reload()),
  );

  return (
    <section class="crm" aria-labelledby="contacts-title">
      <RecordList
        s={s}
        noun={["contact", "contacts"]}
        searchPlaceholder="Name or email"
        tools={<TransferButtons kind="contacts" query={{ search: view.search.trim() }} />}
        onCreate={() => setEditing("new")}
        emptyText="No contacts yet. A contact is a person you talk to at one of your accounts."
        columns={[
          {
            label: "Name",
            class: "title",
            cell: (c) => (
              <Link class="strong" href={`/contacts/${encodeURIComponent(c.id)}`}>
                {c.name}
              </Link>
            ),
          },
          { label: "Email", cell: (c) => (c.email ? <a href={`mailto:${c.email}`}>{c.email}</a> : "—") },
          { label: "Phone", class: "nowrap", cell: (c) => c.phone ?? "—" },
          { label: "Account", cell: (c) => (c.account_id ? <Link href={`/accounts/${encodeURIComponent(c.account_id)}`}>{names.get(c.account_id) ?? "…"}</Link> : "—") },
        ]}
        actions={(c) => (
          <>
            <button type="button" class="small" onClick={() => setEditing(c)}>
              Edit<span class="visually-hidden"> {c.name}</span>
            </button>
            <button type="button" class="small" onClick={() => del.ask(c)}>
              Delete<span class="visually-hidden"> {c.name}</span>
            </button>
          </>
        )}
      />
      <Modal open={editing !== null} title={editing === "new" ? "New contact" : "Edit contact"} onClose={() => setEditing(null)}>
        {editing !== null && (
          <ContactForm
            key={editing === "new" ? "new" : editing.id}
            contact={editing === "new" ? null : editing}
            accountName={editing !== "new" && editing.account_id ? (names.get(editing.account_id) ?? null) : null}
            onCancel={() => setEditing(null)}
            onSaved={(c, created) => {
              setEditing(null);
              toast(created ? `Created “${c.name}”.` : `Saved “${c.name}”.`);
              list.reload();
            }}
          />
        )}
      </Modal>
      <ConfirmDialog
        open={del.record !== null}
        title="Delete this contact?"
        confirmLabel="Delete contact"
        danger
        busy={del.busy}
        onConfirm={() => void del.confirm()}
        onCancel={del.cancel}
      >
        <p>“{del.record?.name}” will be deleted; their deals stay, without a contact. This cannot be undone.</p>
        {del.error ? (
          <p class="error" role="alert">
            {errorMessage(del.error)}
          </p>
        ) : null}
      </ConfirmDialog>
    </section>
  );
}
