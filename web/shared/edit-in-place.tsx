/**
 * One field of a record (a deal, an account, a contact), shown as its value and edited in place:
 * "Edit" turns it into the control its form uses; Save sends that field alone (`save`), and a
 * 422 item for the field (or a 404 that `notFound` maps to it) shows beside it, as in the form.
 */
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { formErrors } from "./form-errors";

export interface EditorProps {
  error?: string;
  /** Ends editing (Escape). */
  cancel: () => void;
}

export interface EditInPlaceProps {
  label: string;
  /** The API field it writes (where its 422 items point). */
  field: string;
  /** The value as shown. */
  shown: ComponentChildren;
  /** The control of the edit in progress. */
  editor: (p: EditorProps) => ComponentChildren;
  /** Sends the edit (a PATCH of this field); throws the API's error. */
  save: () => Promise<void>;
  /** Called when editing starts, to set the editor's state from the record. */
  onStart?: () => void;
  /** A 404's detail that belongs to a field ("Account not found." → account_id). */
  notFound?: Record<string, string>;
}

export function EditInPlace({ label, field, shown, editor, save, onStart, notFound = {} }: EditInPlaceProps) {
  const [editing, setEditing] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const [general, setGeneral] = useState<string | null>(null);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    setGeneral(null);
    try {
      await save();
      setEditing(false);
    } catch (x) {
      const fe = formErrors(x, [field], notFound);
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
        <form onSubmit={submit} onKeyDown={(e) => e.key === "Escape" && cancel()} noValidate>
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
