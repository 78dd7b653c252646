/**
 * Pick one record by typing part of its name: an ARIA combobox (input + listbox) that searches
 * the server as you type (debounced, latest answer wins). Arrow keys move, Enter picks, Escape
 * closes; leaving the field without picking restores the chosen record's name.
 */
import { useEffect, useId, useRef, useState } from "preact/hooks";
import { debouncer, latestOnly } from "./live-list";

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
}

export function Picker({ label, value, onChange, search, error, required, clearable, placeholder }: PickerProps) {
  const id = useId();
  const listId = `${id}-list`;
  const [text, setText] = useState(value?.label ?? "");
  const [open, setOpen] = useState(false);
  const [items, setItems] = useState<Choice[]>([]);
  const [active, setActive] = useState(-1);
  const [busy, setBusy] = useState(false);
  const deb = useRef(debouncer(150));
  const runner = useRef(latestOnly());

  useEffect(() => setText(value?.label ?? ""), [value?.id, value?.label]);
  useEffect(() => () => (deb.current.cancel(), runner.current.abort()), []);

  const lookup = (q: string) => {
    setBusy(true);
    void runner.current.run((signal) => search(q.trim(), signal)).then((o) => {
      if ("stale" in o) return;
      setBusy(false);
      setItems(o.ok ? o.value : []);
      setActive(o.ok && o.value.length ? 0 : -1);
      setOpen(true);
    });
  };
  const pick = (c: Choice | null) => {
    onChange(c);
    setText(c?.label ?? "");
    setOpen(false);
    deb.current.cancel();
  };
  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key === "ArrowDown") {
      e.preventDefault();
      if (!open) return lookup(text === value?.label ? "" : text);
      setActive((a) => Math.min(items.length - 1, a + 1));
    } else if (e.key === "ArrowUp") {
      e.preventDefault();
      setActive((a) => Math.max(0, a - 1));
    } else if (e.key === "Enter" && open) {
      e.preventDefault();
      if (items[active]) pick(items[active]!);
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
    } else setText(value?.label ?? "");
  };
  const described = [error ? `${id}-err` : "", `${id}-status`].filter(Boolean).join(" ");

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
        aria-invalid={error ? true : undefined}
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
        {open && items.length === 0 && (
          <li role="option" aria-disabled="true" aria-selected={false} class="none">
            {busy ? "Searching…" : "Nothing matches."}
          </li>
        )}
      </ul>
      <span id={`${id}-status`} class="visually-hidden" aria-live="polite">
        {open ? `${items.length} result${items.length === 1 ? "" : "s"}` : ""}
      </span>
      {error && (
        <p class="error" id={`${id}-err`}>
          {error}
        </p>
      )}
    </div>
  );
}
