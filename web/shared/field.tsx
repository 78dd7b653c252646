/** A labelled form field whose error (from a 422 item's `loc`, or the screen) shows beside it. */
import type { InputHTMLAttributes, PartialInputHTMLAttributes, PartialSelectHTMLAttributes, SelectHTMLAttributes } from "preact";
import { useId } from "preact/hooks";

type InputProps = Omit<PartialInputHTMLAttributes<HTMLInputElement>, "onInput" | "value"> & {
  label: string;
  value: string;
  onValue: (v: string) => void;
  error?: string;
  hint?: string;
};

export function Field({ label, value, onValue, error, hint, ...rest }: InputProps) {
  const id = useId();
  const described = [error ? `${id}-err` : "", hint ? `${id}-hint` : ""].filter(Boolean).join(" ") || undefined;
  return (
    <div class={`field${error ? " has-error" : ""}`}>
      <label for={id}>{label}</label>
      <input
        id={id}
        value={value}
        onInput={(e) => onValue((e.target as HTMLInputElement).value)}
        aria-invalid={error ? true : undefined}
        aria-describedby={described}
        {...(rest as InputHTMLAttributes)}
      />
      {hint && <p class="hint" id={`${id}-hint`}>{hint}</p>}
      {error && <p class="error" id={`${id}-err`}>{error}</p>}
    </div>
  );
}

type SelectProps = Omit<PartialSelectHTMLAttributes<HTMLSelectElement>, "onChange" | "value"> & {
  label: string;
  value: string;
  onValue: (v: string) => void;
  /** An option with a `group` goes under that heading (an optgroup), in the order the groups first appear. */
  options: { value: string; label: string; group?: string }[];
  error?: string;
};

const optionsOf = (options: SelectProps["options"]) => {
  const plain = options.filter((o) => !o.group);
  const groups = [...new Set(options.map((o) => o.group).filter((g): g is string => !!g))];
  const opt = (o: SelectProps["options"][number]) => (
    <option key={o.value} value={o.value}>
      {o.label}
    </option>
  );
  return [
    ...plain.map(opt),
    ...groups.map((g) => (
      <optgroup key={g} label={g}>
        {options.filter((o) => o.group === g).map(opt)}
      </optgroup>
    )),
  ];
};

export function SelectField({ label, value, onValue, options, error, ...rest }: SelectProps) {
  const id = useId();
  return (
    <div class={`field${error ? " has-error" : ""}`}>
      <label for={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => onValue((e.target as HTMLSelectElement).value)} aria-invalid={error ? true : undefined} aria-describedby={error ? `${id}-err` : undefined} {...(rest as SelectHTMLAttributes)}>
        {optionsOf(options)}
      </select>
      {error && <p class="error" id={`${id}-err`}>{error}</p>}
    </div>
  );
}
