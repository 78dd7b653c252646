/**
 * One field of a deal, edited in place (web/shared/edit-in-place.tsx): Save sends a PATCH of that
 * field alone; a 404 for the account, contact or assignee shows beside it, as in the form.
 */
import type { ComponentChildren } from "preact";
import { api, type Deal, type DealWrite } from "../api/client";
import { EditInPlace, type EditorProps } from "../shared/edit-in-place";

export type { EditorProps };

const NOT_FOUND_FIELD = { "Account not found.": "account_id", "Contact not found.": "contact_id", "Assignee not found.": "assigned_to" };

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
  return (
    <EditInPlace
      label={label}
      field={field}
      shown={shown}
      editor={editor}
      onStart={onStart}
      notFound={NOT_FOUND_FIELD}
      save={async () => onSaved(await api.patch("/api/v1/crm/deals/{id}", { path: { id: deal.id }, body: body() as DealWrite }))}
    />
  );
}
