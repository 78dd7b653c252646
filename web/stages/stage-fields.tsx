/** The fields adding a stage and changing one have in common: its colour and its outcome. */
import { useId } from "preact/hooks";

export type Outcome = "open" | "won" | "lost";

/** A colour picker with its error, labelled like the other fields (Field has no colour input). */
export function ColorField({ value, onValue, error }: { value: string; onValue: (v: string) => void; error?: string }) {
  const id = useId();
  return (
    <div class={`field${error ? " has-error" : ""}`}>
      <label for={id}>Colour</label>
      <input id={id} type="color" value={value} onInput={(e) => onValue((e.target as HTMLInputElement).value)} aria-describedby={error ? `${id}-err` : undefined} />
      {error && (
        <p class="error" id={`${id}-err`}>
          {error}
        </p>
      )}
    </div>
  );
}

/**
 * Open, won or lost as one choice (the API's is_won and is_lost can't both be true). `name` keeps
 * the radio group of an edit form apart from the add form's when both are on the page.
 */
export function OutcomeField({ name, value, onValue, errors }: { name: string; value: Outcome; onValue: (o: Outcome) => void; errors: Record<string, string> }) {
  return (
    <fieldset class="outcome">
      <legend>Outcome</legend>
      {(["open", "won", "lost"] as const).map((o) => (
        <label key={o}>
          <input type="radio" name={name} value={o} checked={value === o} onChange={() => onValue(o)} />
          {o === "open" ? "Open (in progress)" : o === "won" ? "Won" : "Lost"}
        </label>
      ))}
      {(errors.is_won || errors.is_lost) && <p class="error">{errors.is_won ?? errors.is_lost}</p>}
    </fieldset>
  );
}
