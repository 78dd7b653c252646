/** The pipeline: its stages in order, with their colours. Admins add stages; members see the list. */
import "../deals/crm.css";
import { useState } from "preact/hooks";
import { Modal } from "../shared/dialog";
import { Link } from "../shared/router";
import { useSession } from "../shared/session";
import { Empty, ErrorBox, Loading } from "../shared/states";
import { toast } from "../shared/toast";
import { StageForm } from "./stage-form";
import { stagesChanged, useStages } from "./store";

export default function PipelineScreen() {
  const admin = useSession().me?.user.role === "admin";
  const { stages, error, reload } = useStages();
  const [adding, setAdding] = useState(false);
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
        <div class="table-wrap">
          <table>
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
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
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
