/** Accounts: the companies deals are with. Search, paging (both in the URL), create, edit, delete. */
import "../deals/crm.css";
import { useState } from "preact/hooks";
import { api, ApiError, type Account } from "../api/client";
import { ConfirmDialog, Modal } from "../shared/dialog";
import { formatDate } from "../shared/format";
import { Link, navigate, useLocation } from "../shared/router";
import { lazyScreen } from "../shared/lazy";
import { errorMessage } from "../shared/states";
import { toast } from "../shared/toast";
import { useConfirmDelete } from "../shared/use-confirm-delete";
import { RecordList } from "../shared/record-list";
import { TransferButtons } from "../import/transfer-buttons";
import { useUrlSearchList } from "../shared/url-search";
import { AccountForm } from "./account-form";

/** Why an account cannot go: the server's 409 (it still has deals) said with the way out. */
export function deleteProblem(e: unknown, name: string): string {
  if (e instanceof ApiError && e.code === "account_has_deals") {
    return `“${name}” still has deals, and every deal needs an account. Move its deals to another account or delete them, then try again.`;
  }
  return errorMessage(e);
}

// An account's page loads as a chunk of its own, on first use.
const AccountPage = lazyScreen(() => import("../record-pages/account-page").then((m) => m.default));

/** /accounts is the list; /accounts/{id} one account's page (web/record-pages/). */
export default function AccountsScreen() {
  const { path } = useLocation();
  const id = /^\/accounts\/([^/]+)$/.exec(path)?.[1];
  return id ? <AccountPage id={decodeURIComponent(id)} /> : <AccountList />;
}

function AccountList() {
  const s = useUrlSearchList<Account>((query, signal) => api.get("/api/v1/crm/accounts", { query, signal }));
  const { view, list } = s;
  const [editing, setEditing] = useState<Account | "new" | null>(null);
  const del = useConfirmDelete<Account>(
    (a) => api.delete("/api/v1/crm/accounts/{id}", { path: { id: a.id } }),
    (a) => (toast(`Deleted “${a.name}”.`), list.reload()),
  );
  const deleting = del.record;
  // An account with deals is refused (409 account_has_deals): the dialog links to them instead.
  const problem = del.error && deleting ? { text: deleteProblem(del.error, deleting.name), conflict: del.error instanceof ApiError && del.error.code === "account_has_deals" } : null;

  return (
    <section class="crm" aria-labelledby="accounts-title">
      <RecordList
        s={s}
        noun={["account", "accounts"]}
        searchPlaceholder="Name"
        tools={<TransferButtons kind="accounts" query={{ search: view.search.trim() }} />}
        onCreate={() => setEditing("new")}
        emptyText="No accounts yet. An account is a company you sell to; every deal belongs to one."
        columns={[
          {
            label: "Name",
            class: "title",
            cell: (a) => (
              <Link class="strong" href={`/accounts/${encodeURIComponent(a.id)}`}>
                {a.name}
              </Link>
            ),
          },
          { label: "Domain", cell: (a) => a.domain ?? "—" },
          { label: "Industry", cell: (a) => a.industry ?? "—" },
          { label: "Created", class: "hide-narrow nowrap", cell: (a) => formatDate(a.created_at.slice(0, 10)) },
        ]}
        actions={(a) => (
          <>
            <button type="button" class="small" onClick={() => setEditing(a)}>
              Edit<span class="visually-hidden"> {a.name}</span>
            </button>
            <Link class="button small" href={`/deals?search=${encodeURIComponent(a.name)}`}>
              Deals<span class="visually-hidden"> of {a.name}</span>
            </Link>
            <button type="button" class="small" onClick={() => del.ask(a)}>
              Delete<span class="visually-hidden"> {a.name}</span>
            </button>
          </>
        )}
      />
      <Modal open={editing !== null} title={editing === "new" ? "New account" : "Edit account"} onClose={() => setEditing(null)}>
        {editing !== null && (
          <AccountForm
            key={editing === "new" ? "new" : editing.id}
            account={editing === "new" ? null : editing}
            onCancel={() => setEditing(null)}
            onSaved={(a, created) => {
              setEditing(null);
              toast(created ? `Created “${a.name}”.` : `Saved “${a.name}”.`);
              list.reload();
            }}
          />
        )}
      </Modal>
      <ConfirmDialog
        open={deleting !== null}
        title="Delete this account?"
        confirmLabel="Delete account"
        danger
        busy={del.busy || problem?.conflict === true}
        onConfirm={() => void del.confirm()}
        onCancel={del.cancel}
      >
        <p>“{deleting?.name}” will be deleted, and its contacts will no longer name it. This cannot be undone.</p>
        {problem && (
          <div class="error" role="alert">
            <p>{problem.text}</p>
            {problem.conflict && deleting && (
              <button type="button" class="link" onClick={() => (del.cancel(), navigate(`/deals?search=${encodeURIComponent(deleting.name)}`))}>
                See the deals of “{deleting.name}”
              </button>
            )}
          </div>
        )}
      </ConfirmDialog>
    </section>
  );
}
