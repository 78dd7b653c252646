/**
 * A deal's timeline, newest first: its creation, changes, stage moves, imports and notes. Notes
 * are added here; their author (or an admin) edits or deletes them in place.
 */
import { useId, useState } from "preact/hooks";
import { api, type DealActivity as Entry, type Note, type Stage, type User } from "../api/client";
import { formErrors } from "../shared/form-errors";
import { formatDateTime, money } from "../shared/format";
import { ErrorBox, Loading, errorMessage } from "../shared/states";
import { toast } from "../shared/toast";
import { usePagedTimeline } from "../shared/use-paged-timeline";
import { LinkedText } from "./linked-text";

type Change = { field: string; before: string | number | null; after: string | number | null };

const PAGE = 50;
const LABELS: Record<string, string> = {
  title: "Title", value: "Value", currency: "Currency", close_date: "Close date", probability: "Probability", account: "Account",
  contact: "Contact", assignee: "Assignee", notes: "Notes", custom_data: "Custom data",
};
const shown = (v: unknown, field: string) => (v === null || v === undefined || v === "" ? "none" : field === "probability" ? `${v}%` : String(v));

function ChangeList({ changes }: { changes: Change[] }) {
  return (
    <ul class="changes">
      {changes.map((c) => (
        <li key={c.field}>
          <span class="field-name">{LABELS[c.field] ?? c.field}</span>
          {c.field === "custom_data" ? (
            " changed"
          ) : (
            <>
              : <span class="before">{shown(c.before, c.field)}</span> → <span class="after">{shown(c.after, c.field)}</span>
            </>
          )}
        </li>
      ))}
    </ul>
  );
}

function NoteBody({ note, me, onChanged, onDeleted }: { note: Note; me: User; onChanged: (n: Note) => void; onDeleted: () => void }) {
  const [editing, setEditing] = useState(false);
  const [text, setText] = useState(note.body);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const id = useId();
  const mine = note.author.id === me.id || me.role === "admin";

  const save = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      onChanged(await api.patch("/api/v1/crm/notes/{id}", { path: { id: note.id }, body: { body: text } }));
      setEditing(false);
    } catch (x) {
      const fe = formErrors(x, ["body"]);
      setError(fe.fields.body ?? fe.general);
    } finally {
      setBusy(false);
    }
  };
  const remove = async () => {
    setBusy(true);
    try {
      await api.delete("/api/v1/crm/notes/{id}", { path: { id: note.id } });
      toast("Note deleted.");
      onDeleted();
    } catch (x) {
      setError(errorMessage(x));
      setBusy(false);
    }
  };

  if (editing) {
    return (
      <form class="note-edit" onSubmit={save} noValidate>
        <label for={id} class="visually-hidden">
          Note
        </label>
        <textarea id={id} rows={3} value={text} maxLength={10_000} onInput={(e) => setText((e.target as HTMLTextAreaElement).value)} aria-invalid={error ? true : undefined} />
        {error ? <p class="error" role="alert">{error}</p> : null}
        <div class="actions">
          <button type="submit" class="primary small" disabled={busy}>
            {busy ? "Saving…" : "Save note"}
          </button>
          <button type="button" class="small" onClick={() => (setEditing(false), setText(note.body), setError(null))} disabled={busy}>
            Cancel
          </button>
        </div>
      </form>
    );
  }
  return (
    <>
      <p class="note-text">
        <LinkedText text={note.body} />
      </p>
      {note.updated_at !== note.created_at ? <p class="muted small">Edited {formatDateTime(note.updated_at)}</p> : null}
      {error ? <p class="error" role="alert">{error}</p> : null}
      {mine ? (
        confirming ? (
          <div class="actions" role="group" aria-label="Delete this note?">
            <span>Delete this note?</span>
            <button type="button" class="danger small" onClick={() => void remove()} disabled={busy}>
              Delete note
            </button>
            <button type="button" class="small" onClick={() => setConfirming(false)} disabled={busy}>
              Keep it
            </button>
          </div>
        ) : (
          <div class="actions">
            <button type="button" class="small" onClick={() => setEditing(true)}>
              Edit note
            </button>
            <button type="button" class="small" onClick={() => setConfirming(true)}>
              Delete note
            </button>
          </div>
        )
      ) : null}
    </>
  );
}

function NoteComposer({ dealId, onAdded }: { dealId: string; onAdded: () => void }) {
  const [text, setText] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const id = useId();
  const add = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await api.create("/api/v1/crm/deals/{id}/notes", { path: { id: dealId }, body: { body: text } });
      setText("");
      onAdded();
    } catch (x) {
      const fe = formErrors(x, ["body"]);
      setError(fe.fields.body ?? fe.general);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="note-composer" onSubmit={add} noValidate>
      <label for={id}>Add a note</label>
      <textarea
        id={id}
        rows={3}
        value={text}
        maxLength={10_000}
        placeholder="What happened? Links (https://…) become clickable."
        onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
        aria-invalid={error ? true : undefined}
      />
      {error ? <p class="error" role="alert">{error}</p> : null}
      <button type="submit" class="primary" disabled={busy || text.trim() === ""}>
        {busy ? "Adding…" : "Add note"}
      </button>
    </form>
  );
}

function EntryText({ e, stageName }: { e: Entry; stageName: (key: string) => string }) {
  const who = e.actor?.name ?? "Someone";
  const d = e.data as Record<string, any>;
  // Entries a bulk change wrote name its job; an undo's name the change it reverted.
  const bulk = d.job_id && e.type !== "imported" ? (d.undo_of ? " (undoing a bulk change)" : " (bulk change)") : "";
  switch (e.type) {
    case "created":
      return (
        <p>
          <strong>{who}</strong> created the deal in {stageName(d.stage)}, worth {money(d.value, d.currency)}.
        </p>
      );
    case "stage_changed":
      return (
        <p>
          <strong>{who}</strong> moved it from {stageName(d.from)} to {stageName(d.to)}{bulk}.
        </p>
      );
    case "updated":
      return (
        <>
          <p>
            <strong>{who}</strong> changed{bulk}:
          </p>
          <ChangeList changes={d.changes ?? []} />
        </>
      );
    case "imported":
      return (
        <>
          <p>
            <strong>{who}</strong> {d.action === "added" ? "added it with an import." : "changed it with an import:"}
            {d.from && d.to ? ` Stage ${stageName(d.from)} → ${stageName(d.to)}.` : ""}
          </p>
          {d.changes?.length ? <ChangeList changes={d.changes} /> : null}
        </>
      );
    case "restored":
      return (
        <p>
          <strong>{who}</strong> brought it back by undoing a bulk delete.
        </p>
      );
    default:
      return (
        <p>
          <strong>{who}</strong> added a note:
        </p>
      );
  }
}

export function Timeline({ dealId, stages, me, version }: { dealId: string; stages: Stage[]; me: User; version: number }) {
  // The first pages again after any change (a field saved, a note added): newest first.
  const { items, setItems, total, error, reload, more } = usePagedTimeline<Entry>(
    (page, signal) => api.get("/api/v1/crm/deals/{id}/activities", { path: { id: dealId }, query: { page, size: PAGE }, signal }),
    [dealId, version],
  );

  const stageName = (key: string) => stages.find((s) => s.key === key)?.name ?? key;
  return (
    <section class="timeline" aria-labelledby="timeline-title">
      <h2 id="timeline-title">Timeline</h2>
      <NoteComposer dealId={dealId} onAdded={reload} />
      {error ? <ErrorBox error={error} retry={reload} /> : null}
      {!items ? (
        error ? null : <Loading label="Loading the timeline…" />
      ) : (
        <ol class="entries">
          {items.map((e) => (
            <li key={e.id} class={`entry ${e.type}`}>
              <time dateTime={e.created_at}>{formatDateTime(e.created_at)}</time>
              <EntryText e={e} stageName={stageName} />
              {e.type === "note" ? (
                <NoteBody
                  note={(e.data as { note: Note }).note}
                  me={me}
                  onChanged={(n) => setItems((list) => list?.map((x) => (x.id === e.id ? { ...x, data: { note: n } } : x)) ?? null)}
                  onDeleted={reload}
                />
              ) : null}
            </li>
          ))}
        </ol>
      )}
      {items && items.length < total ? (
        <button type="button" onClick={more}>
          Show older entries
        </button>
      ) : null}
    </section>
  );
}
