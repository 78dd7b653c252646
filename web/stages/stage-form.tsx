/** Add a pipeline stage (admins): key, name, colour, probability, and whether it wins or loses the deal. */
import { useState } from "preact/hooks";
import { api, type Stage } from "../api/client";
import { Field } from "../shared/field";
import { NO_ERRORS, formErrors, type FormErrors } from "../shared/form-errors";
import { FormFooter } from "../shared/form-footer";
import { ColorField, type Outcome, OutcomeField } from "./stage-fields";

const FIELDS = ["key", "name", "color", "probability", "is_won", "is_lost", "position"] as const;

/** "Closed – lost" → "closed-lost": the key the name suggests, until the admin types one. */
export const slug = (name: string) =>
  name
    .toLowerCase()
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 50);

export function StageForm({ onSaved, onCancel }: { onSaved: (s: Stage) => void; onCancel: () => void }) {
  const [name, setName] = useState("");
  const [key, setKey] = useState("");
  const [keyTouched, setKeyTouched] = useState(false);
  const [color, setColor] = useState("#0ea5e9");
  const [probability, setProbability] = useState("50");
  const [outcome, setOutcome] = useState<Outcome>("open");
  const [errors, setErrors] = useState<FormErrors>(NO_ERRORS);
  const [busy, setBusy] = useState(false);
  const err = errors.fields;

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setErrors(NO_ERRORS);
    const p = probability.trim();
    try {
      const s = await api.create("/api/v1/crm/pipeline-stages", {
        body: {
          key: keyTouched ? key : slug(name),
          name,
          color,
          probability: p === "" ? undefined : /^\d+$/.test(p) ? Number(p) : (p as unknown as number),
          is_won: outcome === "won",
          is_lost: outcome === "lost",
        },
      });
      onSaved(s);
    } catch (x) {
      setErrors(formErrors(x, FIELDS, { "This organization already has a stage with this key.": "key" }));
      setBusy(false);
    }
  };

  return (
    <form class="crm-form" onSubmit={submit} noValidate>
      <div class="grid2">
        <Field label="Name" value={name} onValue={setName} error={err.name} required maxLength={100} autoFocus autocomplete="off" />
        <Field
          label="Key"
          value={keyTouched ? key : slug(name)}
          onValue={(v) => (setKey(v), setKeyTouched(true))}
          error={err.key}
          maxLength={50}
          autocomplete="off"
          hint="Lower-case letters, digits and dashes; deals name their stage by it."
        />
        <ColorField value={color} onValue={setColor} error={err.color} />
        <Field label="Probability (%)" value={probability} onValue={setProbability} error={err.probability} inputMode="numeric" autocomplete="off" />
      </div>
      <OutcomeField name="outcome" value={outcome} onValue={setOutcome} errors={err} />
      <FormFooter error={errors.general} busy={busy} busyLabel="Adding…" label="Add stage" onCancel={onCancel} />
    </form>
  );
}
