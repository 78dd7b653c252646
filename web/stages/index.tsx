/**
 * The pipeline: its stages in order, with their colours. Admins add, edit, reorder (move up and
 * down, by keyboard too: focus stays on the moved stage's button) and delete stages; members see the list.
 */
import { useLiveEvents } from "../shared/live-events";
import "../deals/crm.css";
import "./stages.css";
import { useEffect, useState } from "preact/hooks";
import { api, type Stage } from "../api/client";
import { Modal } from "../shared/dialog";
import { Link } from "../shared/router";
import { useSession } from "../shared/session";
import { Empty, ErrorBox, Loading, errorMessage } from "../shared/states";
import { toast } from "../shared/toast";
import { StageDeleteForm } from "./stage-delete";
import { StageEditForm } from "./stage-edit";
import { StageForm } from "./stage-form";
import { stagesChanged, useStages } from "./store";

export default function PipelineScreen() {
  const admin = useSession().me?.user.role === "admin";
  const { stages, error, reload } = useStages();
  // Another admin's change to the pipeline: every screen showing stages reloads them.
  useLiveEvents(["pipeline_stage."], useSession().me?.user.id, () => stagesChanged());
  const [adding, setAdding] = useState(false);
  const [editing, setEditing] = useState<Stage | null>(null);
  const [deleting, setDeleting] = useState<Stage | null>(null);
  const [moving, setMoving] = useState(false);
  // The button to focus once the reordered list is on screen (the moved stage's, in its new row).
  // Only once the list read again has the stage at its new place: focused in the old list, the
  // button lost its focus when the new order moved its row (a keyboard user's next Enter went nowhere).
  const [focusNext, setFocusNext] = useState<{ selector: string; id: string; at: number } | null>(null);
  useEffect(() => {
    if (!focusNext || !stages || stages[focusNext.at]?.id !== focusNext.id) return;
    const b = document.querySelector<HTMLButtonElement>(focusNext.selector);
    if (b && !b.disabled) {
      b.focus();
      setFocusNext(null);
    }
  }, [stages, focusNext]);

  /** Swaps a stage with its neighbour; focus stays on the stage's button in its new row. */
  const move = async (i: number, by: -1 | 1) => {
    if (!stages || moving) return;
    const ids = stages.map((s) => s.id);
    const id = ids[i]!;
    [ids[i], ids[i + by]] = [ids[i + by]!, ids[i]!];
    setMoving(true);
    try {
      await api.post("/api/v1/crm/pipeline-stages/reorder", { body: { ids } });
      const dir = by < 0 ? "up" : "down";
      const at = i + by;
      // The button itself may now be disabled (first or last row): its neighbour takes the focus.
      const pick = (at === 0 && dir === "up") || (at === ids.length - 1 && dir === "down") ? (dir === "up" ? "down" : "up") : dir;
      setFocusNext({ selector: `button[data-move="${pick}"][data-stage="${id}"]`, id, at });
      stagesChanged();
      toast(`Moved “${stages[i]!.name}” ${dir}.`);
    } catch (e) {
      toast(errorMessage(e));
    } finally {
      setMoving(false);
    }
  };
  return (
    <section class="crm" aria-labelledby="pipeline-title">
      <div class="screen-head">
        <h1 id="pipeline-title">Pipeline</h1>
        {admin && (
          <button type="button" class="primary" onClick={() => setAdding(true)}>
            Add stage
          </button>
        )}
      </div>
      <p class="muted">
        The stages a deal moves through, in order.{admin ? "" : " Only administrators can add stages."}
      </p>
      {error ? (
        <ErrorBox error={error} retry={reload} />
      ) : !stages ? (
        <Loading label="Loading stages…" />
      ) : stages.length === 0 ? (
        <Empty>
          <p>No stages yet.</p>
        </Empty>
      ) : (
        <div class="table-wrap" tabIndex={0} role="region" aria-label="Pipeline stages">
          <table class="stages-table">
            <caption class="visually-hidden">Pipeline stages</caption>
            <thead>
              <tr>
                <th scope="col" class="num">#</th>
                <th scope="col">Stage</th>
                <th scope="col" class="hide-narrow">Key</th>
                <th scope="col" class="num">Probability</th>
                <th scope="col">Outcome</th>
                <th scope="col">
                  <span class="visually-hidden">Deals</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {stages.map((s, i) => (
                <tr key={s.id}>
                  <td class="num">{i + 1}</td>
                  <td>
                    <span class="badge">
                      <span class="swatch" style={{ background: s.color }} aria-hidden="true" />
                      <strong>{s.name}</strong>
                    </span>
                  </td>
                  <td class="hide-narrow">
                    <code>{s.key}</code>
                  </td>
                  <td class="num">{s.probability}%</td>
                  <td>{s.is_won ? <span class="tag ok">Won</span> : s.is_lost ? <span class="tag lost">Lost</span> : <span class="tag">Open</span>}</td>
                  <td class="actions-cell">
                    <Link href={`/deals?stage=${encodeURIComponent(s.key)}`}>
                      Deals<span class="visually-hidden"> in {s.name}</span>
                    </Link>
                    {admin && (
                      <span class="stage-actions">
                        <button type="button" data-move="up" data-stage={s.id} disabled={i === 0} onClick={() => void move(i, -1)} aria-label={`Move ${s.name} up`}>
                          ↑
                        </button>
                        <button
                          type="button"
                          data-move="down"
                          data-stage={s.id}
                          disabled={i === stages.length - 1}
                          onClick={() => void move(i, 1)}
                          aria-label={`Move ${s.name} down`}
                        >
                          ↓
                        </button>
                        <button type="button" onClick={() => setEditing(s)}>
                          Edit<span class="visually-hidden"> {s.name}</span>
                        </button>
                        <button type="button" class="danger" onClick={() => setDeleting(s)}>
                          Delete<span class="visually-hidden"> {s.name}</span>
                        </button>
                      </span>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {admin && editing && (
        <Modal open title={`Edit the stage “${editing.name}”`} onClose={() => setEditing(null)}>
          <StageEditForm
            stage={editing}
            onCancel={() => setEditing(null)}
            onSaved={(s) => {
              setEditing(null);
              toast(`Saved the stage “${s.name}”.`);
              stagesChanged();
            }}
          />
        </Modal>
      )}
      {admin && deleting && stages && (
        <Modal open title={`Delete the stage “${deleting.name}”`} onClose={() => setDeleting(null)}>
          <StageDeleteForm
            stage={deleting}
            stages={stages}
            onCancel={() => setDeleting(null)}
            onDeleted={() => {
              toast(`Deleted the stage “${deleting.name}”.`);
              setDeleting(null);
              stagesChanged();
            }}
          />
        </Modal>
      )}
      {admin && (
        <Modal open={adding} title="Add a stage" onClose={() => setAdding(false)}>
          <StageForm
            onCancel={() => setAdding(false)}
            onSaved={(s) => {
              setAdding(false);
              toast(`Added the stage “${s.name}”.`);
              stagesChanged();
            }}
          />
        </Modal>
      )}
    </section>
  );
}
