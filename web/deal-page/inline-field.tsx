/**
 * One field of a deal, shown as its value and edited in place: "Edit" turns it into the same
 * control the deal form uses; Save sends a PATCH of that field alone, and a 422 (or a 404 for
 * the account, contact or assignee) shows beside it, as in the form.
 */
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { api, type Deal, type DealWrite } from "../api/client";
import { formErrors } from "../shared/form-errors";

const NOT_FOUND_FIELD = { "Account not found.": "account_id", "Contact not found.": "contact_id", "Assignee not found.": "assigned_to" };

export interface EditorProps {
  error?: string;
  /** Ends editing (Escape). */
  cancel: () => void;
}

export interface InlineFieldProps {
  label: string;
  deal: Deal;
  /** The API field it writes (where its 422 items point). */
  field: keyof DealWrite;
  /** The value as shown. */
  shown: ComponentChildren;
  /** Starts an edit: the editor's initial state. */
  editor: (p: EditorProps) => ComponentChildren;
  /** The PATCH body of the edit in progress. */
  body: () => Partial<DealWrite>;
  onSaved: (d: Deal) => void;
  /** Called when editing starts, to set the editor's state from the deal. */
  onStart?: () => void;
}

export function InlineField({ label, deal, field, shown, editor, body, onSaved, onStart }: InlineFieldProps) {
  const [editing, setEditing] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const [general, setGeneral] = useState<string | null>(null);

  const save = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    setGeneral(null);
    try {
      const saved = await api.patch("/api/v1/crm/deals/{id}", { path: { id: deal.id }, body: body() as DealWrite });
      setEditing(false);
      onSaved(saved);
    } catch (x) {
      const fe = formErrors(x, [field], NOT_FOUND_FIELD);
      setError(fe.fields[field]);
      setGeneral(fe.general);
    } finally {
      setBusy(false);
    }
  };
  const cancel = () => {
    setEditing(false);
    setError(undefined);
    setGeneral(null);
  };

  if (!editing) {
    return (
      <div class="inline-field">
        <dt>{label}</dt>
        <dd>
          <span class="value">{shown}</span>
          <button
            type="button"
            class="small"
            onClick={() => {
              onStart?.();
              setEditing(true);
            }}
          >
            Edit<span class="visually-hidden"> {label.toLowerCase()}</span>
          </button>
        </dd>
      </div>
    );
  }
  return (
    <div class="inline-field editing">
      <dt class="visually-hidden">{label}</dt>
      <dd>
        <form onSubmit={save} onKeyDown={(e) => e.key === "Escape" && cancel()} noValidate>
          {editor({ error, cancel })}
          {general ? (
            <p class="error" role="alert">
              {general}
            </p>
          ) : null}
          <div class="actions">
            <button type="submit" class="primary small" disabled={busy}>
              {busy ? "Saving…" : `Save ${label.toLowerCase()}`}
            </button>
            <button type="button" class="small" onClick={cancel} disabled={busy}>
              Cancel
            </button>
          </div>
        </form>
      </dd>
    </div>
  );
}
