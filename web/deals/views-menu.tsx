/**
 * The deal list's saved views: a "Views" menu listing the member's own views and the shared ones;
 * choosing one applies its filters, order and mode; "Save view…" keeps the current state; each
 * member can pick one default, applied when /deals opens without a query.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { api, type SavedView } from "../api/client";
import { ConfirmDialog, Modal } from "../shared/dialog";
import { FormFooter } from "../shared/form-footer";
import { errorMessage } from "../shared/states";
import { toast } from "../shared/toast";
import { savedQueryOf, stateOf } from "./saved-views";
import type { DealView } from "./view";

interface Props {
  view: DealView;
  isAdmin: boolean;
  meId: string;
  /** True when the screen opened without a query: the default view, if any, then applies. */
  openedBare: boolean;
  onApply: (v: DealView, replace?: boolean) => void;
}

export function ViewsMenu({ view, isAdmin, meId, openedBare, onApply }: Props) {
  const [views, setViews] = useState<SavedView[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const [deleting, setDeleting] = useState<SavedView | null>(null);
  const menu = useRef<HTMLDetailsElement>(null);
  const bare = useRef(openedBare);

  const load = async () => {
    try {
      const list = await api.get("/api/v1/crm/views");
      setViews(list);
      setError(null);
      return list;
    } catch (e) {
      setError(`Your saved views could not be loaded: ${errorMessage(e)}`);
      return null;
    }
  };
  useEffect(() => {
    void load().then((list) => {
      const def = list?.find((v) => v.is_default);
      // Only on opening the list bare: a link with its own filters keeps them.
      if (def && bare.current && location.search === "") onApply(stateOf(def), true);
    });
  }, []);

  const close = () => menu.current?.removeAttribute("open");
  const choose = (v: SavedView) => {
    close();
    onApply(stateOf(v));
  };
  const toggleDefault = async (v: SavedView) => {
    try {
      await api.patch("/api/v1/crm/views/{id}", { path: { id: v.id }, body: { is_default: !v.is_default } });
      toast(v.is_default ? `“${v.name}” is no longer your default view.` : `“${v.name}” now opens when you go to Deals.`);
      await load();
    } catch (e) {
      toast(`Could not change your default view: ${errorMessage(e)}`, "error");
    }
  };
  const remove = async () => {
    if (!deleting) return;
    try {
      await api.delete("/api/v1/crm/views/{id}", { path: { id: deleting.id } });
      toast(`Deleted the view “${deleting.name}”.`);
      setDeleting(null);
      await load();
    } catch (e) {
      toast(`Could not delete “${deleting.name}”: ${errorMessage(e)}`, "error");
    }
  };

  const own = views?.filter((v) => !v.shared) ?? [];
  const shared = views?.filter((v) => v.shared) ?? [];
  const canChange = (v: SavedView) => (v.shared ? isAdmin : v.owner.id === meId);
  const section = (title: string, list: SavedView[], empty: string) => (
    <div class="views-section">
      <h3>{title}</h3>
      {list.length === 0 ? <p class="hint">{empty}</p> : null}
      <ul>
        {list.map((v) => (
          <li key={v.id}>
            <button type="button" class="link views-apply" onClick={() => choose(v)}>
              {v.name}
              {v.kind === "board" ? <span class="hint"> (board)</span> : null}
            </button>
            <button type="button" class="link" aria-pressed={v.is_default} onClick={() => void toggleDefault(v)} title={v.is_default ? "Stop opening Deals with this view" : "Open Deals with this view"}>
              {v.is_default ? "Default ✓" : "Make default"}
            </button>
            {canChange(v) ? (
              <button type="button" class="link danger" aria-label={`Delete the view ${v.name}`} onClick={() => (close(), setDeleting(v))}>
                Delete
              </button>
            ) : null}
          </li>
        ))}
      </ul>
    </div>
  );

  return (
    <>
      <details class="views-menu" ref={menu}>
        <summary>Views</summary>
        <div class="views-panel">
          {error ? <p class="error" role="alert">{error}</p> : null}
          {views === null && !error ? <p class="hint">Loading your views…</p> : null}
          {views ? section("Your views", own, "You have no saved views yet.") : null}
          {views ? section("Shared views", shared, isAdmin ? "Save a view as shared to give it to everyone." : "Your admins have shared no views yet.") : null}
          <button type="button" onClick={() => (close(), setSaving(true))}>
            Save view…
          </button>
        </div>
      </details>
      <Modal open={saving} title="Save this view" onClose={() => setSaving(false)}>
        {saving ? (
          <SaveViewForm
            view={view}
            isAdmin={isAdmin}
            onCancel={() => setSaving(false)}
            onSaved={(v) => {
              setSaving(false);
              toast(`Saved the view “${v.name}”.`);
              void load();
            }}
          />
        ) : null}
      </Modal>
      <ConfirmDialog open={deleting !== null} title="Delete this view?" confirmLabel="Delete view" danger onConfirm={() => void remove()} onCancel={() => setDeleting(null)}>
        <p>{deleting?.shared ? `“${deleting.name}” will be deleted for everyone in your organization.` : `“${deleting?.name}” will be deleted.`} The deals stay as they are.</p>
      </ConfirmDialog>
    </>
  );
}

function SaveViewForm({ view, isAdmin, onCancel, onSaved }: { view: DealView; isAdmin: boolean; onCancel: () => void; onSaved: (v: SavedView) => void }) {
  const [name, setName] = useState("");
  const [shared, setShared] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    if (name.trim() === "") return setError("Give the view a name.");
    setBusy(true);
    try {
      onSaved(await api.post("/api/v1/crm/views", { body: { name: name.trim(), kind: view.mode, query: savedQueryOf(view), shared } }));
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form onSubmit={(e) => void submit(e)} noValidate>
      <p class="hint">The view keeps the current search, filters, order, page size and {view.mode === "board" ? "the board" : "the table"}.</p>
      <label>
        Name
        <input value={name} maxLength={80} required autoFocus onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      {isAdmin ? (
        <label class="checkbox">
          <input type="checkbox" checked={shared} onChange={(e) => setShared(e.currentTarget.checked)} />
          Share with everyone in the organization
        </label>
      ) : null}
      <FormFooter error={error} busy={busy} busyLabel="Saving…" label="Save view" onCancel={onCancel} />
    </form>
  );
}
