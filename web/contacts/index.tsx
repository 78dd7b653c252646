/** Contacts: the people at accounts. Search, paging (both in the URL), create, edit, delete. */
import "../deals/crm.css";
import { useEffect, useState } from "preact/hooks";
import { api, type Contact } from "../api/client";
import { ConfirmDialog, Modal } from "../shared/dialog";
import { Pager } from "../shared/pager";
import { Link, useLocation } from "../shared/router";
import { lazyScreen } from "../shared/lazy";
import { Empty, ErrorBox, Loading, errorMessage } from "../shared/states";
import { toast } from "../shared/toast";
import { useSession } from "../shared/session";
import { useLiveEvents, useLiveMarks } from "../shared/live-events";
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
  const { view, text, onText, list, setPage, setSize, clear } = useUrlSearchList<Contact>((query, signal) => api.get("/api/v1/crm/contacts", { query, signal }));
  const data = list.data;
  // Another person's change: a quiet reload (scroll, search and an open form stay), the row marked.
  const marks = useLiveMarks();
  const [quiet, setQuiet] = useState(false);
  useEffect(() => setQuiet(false), [data]);
  useLiveEvents(["contact."], useSession().me?.user.id, (e) => {
    if (e.type === "contact.deleted") return marks.mark(String(e.data.id), "deleted");
    marks.mark(String(e.data.id), "changed");
    setQuiet(true);
    list.reload();
  });
  const names = useAccountNames(data?.items);
  const [editing, setEditing] = useState<Contact | "new" | null>(null);
  const [deleting, setDeleting] = useState<Contact | null>(null);
  const [problem, setProblem] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const confirmDelete = async () => {
    if (!deleting) return;
    setBusy(true);
    try {
      await api.delete("/api/v1/crm/contacts/{id}", { path: { id: deleting.id } });
      toast(`Deleted “${deleting.name}”.`);
      setDeleting(null);
      list.reload();
    } catch (e) {
      setProblem(e);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="crm" aria-labelledby="contacts-title">
      <div class="screen-head">
        <h1 id="contacts-title">Contacts</h1>
        <TransferButtons kind="contacts" query={{ search: view.search.trim() }} />
        <button type="button" class="primary" onClick={() => setEditing("new")}>
          New contact
        </button>
      </div>
      <div class="toolbar">
        <div class="field search">
          <label for="contact-search">Search contacts</label>
          <input id="contact-search" type="search" value={text} placeholder="Name or email" maxLength={200} autocomplete="off" onInput={(e) => onText((e.target as HTMLInputElement).value)} />
        </div>
      </div>
      {list.error && data ? <ErrorBox error={list.error} retry={list.reload} /> : null}
      {!data ? (
        list.error ? <ErrorBox error={list.error} retry={list.reload} /> : <Loading label="Loading contacts…" />
      ) : data.total === 0 ? (
        view.search.trim() ? (
          <Empty>
            <p role="status">No contact matches “{view.search.trim()}”.</p>
            <button type="button" onClick={clear}>
              Clear search
            </button>
          </Empty>
        ) : (
          <Empty>
            <p>No contacts yet. A contact is a person you talk to at one of your accounts.</p>
            <button type="button" class="primary" onClick={() => setEditing("new")}>
              Create your first contact
            </button>
          </Empty>
        )
      ) : (
        <>
          <div class="table-wrap">
            <table>
              <caption class="visually-hidden">Contacts</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Email</th>
                  <th scope="col">Phone</th>
                  <th scope="col">Account</th>
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody class={list.loading && !quiet ? "dim" : undefined} aria-busy={list.loading ? "true" : "false"}>
                {data.items.map((c) => (
                  <tr key={c.id} class={marks.classOf(c.id) || undefined}>
                    <td class="title">
                      <Link class="strong" href={`/contacts/${encodeURIComponent(c.id)}`}>
                        {c.name}
                      </Link>
                    </td>
                    <td>{c.email ? <a href={`mailto:${c.email}`}>{c.email}</a> : "—"}</td>
                    <td class="nowrap">{c.phone ?? "—"}</td>
                    <td>{c.account_id ? <Link href={`/accounts/${encodeURIComponent(c.account_id)}`}>{names.get(c.account_id) ?? "…"}</Link> : "—"}</td>
                    <td class="actions-cell nowrap">
                      <button type="button" class="small" onClick={() => setEditing(c)}>
                        Edit<span class="visually-hidden"> {c.name}</span>
                      </button>
                      <button type="button" class="small" onClick={() => (setProblem(null), setDeleting(c))}>
                        Delete<span class="visually-hidden"> {c.name}</span>
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager page={view.page} pages={data.pages} total={data.total} size={view.size} noun={data.total === 1 ? "contact" : "contacts"} onPage={setPage} onSize={setSize} />
        </>
      )}
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
        open={deleting !== null}
        title="Delete this contact?"
        confirmLabel="Delete contact"
        danger
        busy={busy}
        onConfirm={() => void confirmDelete()}
        onCancel={() => setDeleting(null)}
      >
        <p>“{deleting?.name}” will be deleted; their deals stay, without a contact. This cannot be undone.</p>
        {problem ? (
          <p class="error" role="alert">
            {errorMessage(problem)}
          </p>
        ) : null}
      </ConfirmDialog>
    </section>
  );
}
