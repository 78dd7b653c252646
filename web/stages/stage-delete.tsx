/**
 * Delete a stage (admins). Its deals must go somewhere: the dialog says how many there are and
 * asks which stage they move to; the server moves them and deletes the stage in one transaction.
 */
import { useEffect, useId, useState } from "preact/hooks";
import { api, type Stage } from "../api/client";
import { errorMessage } from "../shared/states";

export function StageDeleteForm({ stage, stages, onDeleted, onCancel }: { stage: Stage; stages: Stage[]; onDeleted: () => void; onCancel: () => void }) {
  const others = stages.filter((s) => s.id !== stage.id);
  const [deals, setDeals] = useState<number | null>(null);
  const [target, setTarget] = useState(others[0]?.key ?? "");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const selectId = useId();

  useEffect(() => {
    let live = true;
    api.get("/api/v1/crm/deals", { query: { stage: [stage.key], size: 1 } }).then(
      (p) => live && setDeals(p.total),
      (e) => live && setError(errorMessage(e)),
    );
    return () => void (live = false);
  }, [stage.key]);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await api.delete("/api/v1/crm/pipeline-stages/{id}", { path: { id: stage.id }, query: { move_to: deals ? target : undefined } });
      onDeleted();
    } catch (x) {
      setError(errorMessage(x));
      setBusy(false);
    }
  };

  if (others.length === 0) {
    return (
      <div>
        <p>“{stage.name}” is the only stage: the pipeline needs at least one, so it cannot be deleted.</p>
        <div class="actions">
          <button type="button" onClick={onCancel}>
            Close
          </button>
        </div>
      </div>
    );
  }
  return (
    <form class="crm-form" onSubmit={submit} noValidate>
      {deals === null && !error ? (
        <p role="status">Counting the stage’s deals…</p>
      ) : deals ? (
        <div class="field">
          <p>
            “{stage.name}” has {deals.toLocaleString()} {deals === 1 ? "deal" : "deals"}. They move to the stage you choose, then the stage is deleted.
          </p>
          <label for={selectId}>Move its deals to</label>
          <select id={selectId} value={target} onChange={(e) => setTarget((e.target as HTMLSelectElement).value)}>
            {others.map((s) => (
              <option key={s.id} value={s.key}>
                {s.name}
              </option>
            ))}
          </select>
        </div>
      ) : deals === 0 ? (
        <p>“{stage.name}” has no deals. Delete it?</p>
      ) : null}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <div class="actions">
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
        <button type="submit" class="danger" disabled={busy || deals === null}>
          {busy ? "Deleting…" : "Delete stage"}
        </button>
      </div>
    </form>
  );
}
