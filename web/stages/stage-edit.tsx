/** Change a stage (admins): name, colour, probability and outcome. The key stays: deals name their stage by it. */
import { useState } from "preact/hooks";
import { api, type Stage } from "../api/client";
import { Field } from "../shared/field";
import { NO_ERRORS, formErrors, type FormErrors } from "../shared/form-errors";
import { FormFooter } from "../shared/form-footer";
import { ColorField, type Outcome, OutcomeField } from "./stage-fields";

const FIELDS = ["name", "color", "probability", "is_won", "is_lost"] as const;

export function StageEditForm({ stage, onSaved, onCancel }: { stage: Stage; onSaved: (s: Stage) => void; onCancel: () => void }) {
  const [name, setName] = useState(stage.name);
  const [color, setColor] = useState(stage.color);
  const [probability, setProbability] = useState(String(stage.probability));
  const [outcome, setOutcome] = useState<Outcome>(stage.is_won ? "won" : stage.is_lost ? "lost" : "open");
  const [errors, setErrors] = useState<FormErrors>(NO_ERRORS);
  const [busy, setBusy] = useState(false);
  const err = errors.fields;

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setErrors(NO_ERRORS);
    const p = probability.trim();
    try {
      const s = await api.patch("/api/v1/crm/pipeline-stages/{id}", {
        path: { id: stage.id },
        body: {
          name,
          color,
          // Sent as typed when it is not a whole number, so the server's 422 names the field.
          probability: /^\d+$/.test(p) ? Number(p) : (p as unknown as number),
          is_won: outcome === "won",
          is_lost: outcome === "lost",
        },
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
        <ColorField value={color} onValue={setColor} error={err.color} />
        <Field label="Probability (%)" value={probability} onValue={setProbability} error={err.probability} inputMode="numeric" autocomplete="off" />
      </div>
      <OutcomeField name="edit-outcome" value={outcome} onValue={setOutcome} errors={err} />
      <FormFooter error={errors.general} busy={busy} busyLabel="Saving…" label="Save stage" onCancel={onCancel} />
    </form>
  );
}
