/**
 * Pick one record by typing part of its name: an ARIA combobox (input + listbox) that searches
 * the server as you type (debounced, latest answer wins). Arrow keys move, Enter picks, Escape
 * closes; leaving the field without picking restores the chosen record's name, and keeps what
 * was typed when nothing is chosen yet (the form says what to do with it; nothing typed is lost).
 * With `create`, the list ends with "Create "…"" for a name no record has: picking it creates
 * the record (through the API) and chooses it.
 */
import { useEffect, useId, useRef, useState } from "preact/hooks";
import { debouncer, latestOnly } from "./live-list";
import { errorMessage } from "./states";

export interface Choice {
  id: string;
  label: string;
  hint?: string | null;
}

export interface PickerProps {
  label: string;
  value: Choice | null;
  onChange: (c: Choice | null) => void;
  search: (text: string, signal: AbortSignal) => Promise<Choice[]>;
  error?: string;
  required?: boolean;
  /** Offer "none" (an optional link): clearing the text clears the choice. */
  clearable?: boolean;
  placeholder?: string;
  /** Makes a record of the typed name and answers it (the API's create); offered as the list's last option. */
  create?: (name: string) => Promise<Choice>;
  /** What the created record is, for the option's hint: "new account". */
  createHint?: string;
  /** Told the text in the box as it changes (a form names a typed-but-unchosen name in its error). */
  onText?: (text: string) => void;
}

export function Picker({ label, value, onChange, search, error, required, clearable, placeholder, create, createHint, onText }: PickerProps) {
  const id = useId();
  const listId = `${id}-list`;
  const [text, setText] = useState(value?.label ?? "");
  const [open, setOpen] = useState(false);
  const [items, setItems] = useState<Choice[]>([]);
  const [active, setActive] = useState(-1);
  const [busy, setBusy] = useState(false);
  const [creating, setCreating] = useState(false);
  const [createError, setCreateError] = useState("");
  const deb = useRef(debouncer(150));
  const runner = useRef(latestOnly());

  useEffect(() => {
    if (value) setText(value.label);
  }, [value?.id, value?.label]);
  useEffect(() => onText?.(text), [text]);
  // "Create …" for a typed name that no answer has exactly (any case): the list's last option.
  const typed = text.trim();
  const offerCreate = !!create && typed !== "" && !busy && !items.some((c) => c.label.trim().toLowerCase() === typed.toLowerCase());
  const count = items.length + (offerCreate ? 1 : 0);
  useEffect(() => () => (deb.current.cancel(), runner.current.abort()), []);

  const lookup = (q: string) => {
    setBusy(true);
    void runner.current.run((signal) => search(q.trim(), signal)).then((o) => {
      if ("stale" in o) return;
      setBusy(false);
      setItems(o.ok ? o.value : []);
      setActive((o.ok && o.value.length) || (create && q.trim()) ? 0 : -1);
      setOpen(true);
    });
  };
  const pick = (c: Choice | null) => {
    onChange(c);
    setText(c?.label ?? "");
    setOpen(false);
    setCreateError("");
    deb.current.cancel();
  };
  const makeNew = async () => {
    if (!create || creating) return;
    setCreating(true);
    setCreateError("");
    setOpen(false);
    try {
      pick(await create(typed));
    } catch (e) {
      setCreateError(errorMessage(e));
    } finally {
      setCreating(false);
    }
  };
  const choose = (i: number) => (i === items.length && offerCreate ? void makeNew() : items[i] ? pick(items[i]!) : undefined);
  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key === "ArrowDown") {
      e.preventDefault();
      if (!open) return lookup(text === value?.label ? "" : text);
      setActive((a) => Math.min(count - 1, a + 1));
    } else if (e.key === "ArrowUp") {
      e.preventDefault();
      setActive((a) => Math.max(0, a - 1));
    } else if (e.key === "Enter" && open) {
      e.preventDefault();
      choose(active);
    } else if (e.key === "Escape" && open) {
      e.preventDefault();
      e.stopPropagation();
      setOpen(false);
    }
  };
  const onBlur = () => {
    setOpen(false);
    deb.current.cancel();
    if (clearable && text.trim() === "") {
      if (value) onChange(null);
    } else if (value) setText(value.label);
  };
  const shown = error || createError;
  const described = [shown ? `${id}-err` : "", `${id}-status`].filter(Boolean).join(" ");

  return (
    <div class={`field picker${error ? " has-error" : ""}`}>
      <label for={id}>{label}</label>
      <input
        id={id}
        type="text"
        role="combobox"
        autocomplete="off"
        aria-autocomplete="list"
        aria-expanded={open}
        aria-controls={listId}
        aria-activedescendant={open && active >= 0 ? `${id}-opt-${active}` : undefined}
        aria-invalid={shown ? true : undefined}
        aria-busy={creating ? true : undefined}
        aria-describedby={described}
        aria-required={required ? true : undefined}
        placeholder={placeholder ?? "Type to search"}
        value={text}
        onInput={(e) => {
          const v = (e.target as HTMLInputElement).value;
          setText(v);
          deb.current.schedule(() => lookup(v));
        }}
        onFocus={() => {
          if (!open && !value) lookup(text);
        }}
        onKeyDown={onKeyDown}
        onBlur={onBlur}
      />
      <ul id={listId} role="listbox" aria-label={label} class="picker-list" hidden={!open}>
        {items.map((c, i) => (
          <li
            key={c.id}
            id={`${id}-opt-${i}`}
            role="option"
            aria-selected={i === active}
            class={i === active ? "active" : undefined}
            onMouseDown={(e) => e.preventDefault()}
            onClick={() => pick(c)}
          >
            {c.label}
            {c.hint && <span class="hint"> {c.hint}</span>}
          </li>
        ))}
        {offerCreate && (
          <li
            id={`${id}-opt-${items.length}`}
            role="option"
            aria-selected={active === items.length}
            class={`create${active === items.length ? " active" : ""}`}
            onMouseDown={(e) => e.preventDefault()}
            onClick={() => void makeNew()}
          >
            Create “{typed}”{createHint && <span class="hint"> {createHint}</span>}
          </li>
        )}
        {open && count === 0 && (
          <li role="option" aria-disabled="true" aria-selected={false} class="none">
            {busy ? "Searching…" : "Nothing matches."}
          </li>
        )}
      </ul>
      <span id={`${id}-status`} class="visually-hidden" aria-live="polite">
        {creating ? `Creating ${typed}…` : open ? `${items.length} result${items.length === 1 ? "" : "s"}${offerCreate ? `, or create ${typed}` : ""}` : ""}
      </span>
      {shown && (
        <p class="error" id={`${id}-err`}>
          {shown}
        </p>
      )}
    </div>
  );
}
