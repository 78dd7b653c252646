/** Change a stage (admins): name, colour, probability and outcome. The key stays: deals name their stage by it. */
import { useId, useState } from "preact/hooks";
import { api, type Stage } from "../api/client";
import { Field } from "../shared/field";
import { NO_ERRORS, formErrors, type FormErrors } from "../shared/form-errors";

const FIELDS = ["name", "color", "probability", "is_won", "is_lost"] as const;
type Outcome = "open" | "won" | "lost";

export function StageEditForm({ stage, onSaved, onCancel }: { stage: Stage; onSaved: (s: Stage) => void; onCancel: () => void }) {
  const [name, setName] = useState(stage.name);
  const [color, setColor] = useState(stage.color);
  const [probability, setProbability] = useState(String(stage.probability));
  const [outcome, setOutcome] = useState<Outcome>(stage.is_won ? "won" : stage.is_lost ? "lost" : "open");
  const [errors, setErrors] = useState<FormErrors>(NO_ERRORS);
  const [busy, setBusy] = useState(false);
  const colorId = useId();
  const err = errors.fields;

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setErrors(NO_ERRORS);
    const p = probability.trim();
    try {
      const s = await api.crm.updateStage(stage.id, {
        name,
        color,
        // Sent as typed when it is not a whole number, so the server's 422 names the field.
        probability: /^\d+$/.test(p) ? Number(p) : (p as unknown as number),
        is_won: outcome === "won",
        is_lost: outcome === "lost",
      });
      onSaved(s);
    } catch (x) {
      setErrors(formErrors(x, FIELDS));
      setBusy(false);
    }
  };

  return (
    <form class="crm-form" onSubmit={submit} noValidate>
      <p class="muted">
        Key <code>{stage.key}</code>: deals keep it; the new name and colour show on them at once.
      </p>
      <div class="grid2">
        <Field label="Name" value={name} onValue={setName} error={err.name} required maxLength={100} autoFocus autocomplete="off" />
        <div class={`field${err.color ? " has-error" : ""}`}>
          <label for={colorId}>Colour</label>
          <input id={colorId} type="color" value={color} onInput={(e) => setColor((e.target as HTMLInputElement).value)} aria-describedby={err.color ? `${colorId}-err` : undefined} />
          {err.color && (
            <p class="error" id={`${colorId}-err`}>
              {err.color}
            </p>
          )}
        </div>
        <Field label="Probability (%)" value={probability} onValue={setProbability} error={err.probability} inputMode="numeric" autocomplete="off" />
      </div>
      <fieldset class="outcome">
        <legend>Outcome</legend>
        {(["open", "won", "lost"] as const).map((o) => (
          <label key={o}>
            <input type="radio" name="edit-outcome" value={o} checked={outcome === o} onChange={() => setOutcome(o)} />
            {o === "open" ? "Open (in progress)" : o === "won" ? "Won" : "Lost"}
          </label>
        ))}
        {(err.is_won || err.is_lost) && <p class="error">{err.is_won ?? err.is_lost}</p>}
      </fieldset>
      {errors.general && (
        <p class="error" role="alert">
          {errors.general}
        </p>
      )}
      <div class="actions">
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
        <button type="submit" class="primary" disabled={busy}>
          {busy ? "Saving…" : "Save stage"}
        </button>
      </div>
    </form>
  );
}
