import type { Principal, RequestInfo } from "../auth/service";
import { RequestValidationError, errors } from "../kernel/errors";
import type { AuditEntry } from "../security/repo";
import type { StagePatch, StageRead } from "./model";
import { toStageRead } from "./read";
import type { CrmStore, PipelineStageRow } from "./repo";
import type { StagesStore } from "./pipeline-repo";

export interface StagesDeps {
  now: () => number;
  repo: CrmStore;
  stages: StagesStore;
}

const bothOutcomes = () =>
  new RequestValidationError([{ loc: ["body", "is_lost"], msg: "Value error, a stage cannot be both won and lost", type: "value_error", input: true }]);

/** Admins change, reorder and delete pipeline stages; every change leaves an audit row in its transaction. */
export function createStagesService(d: StagesDeps) {
  const adminOnly = (auth: Principal) => {
    if (auth.role !== "admin") throw errors.forbidden();
  };
  const stageOr404 = async (tenantId: string, id: string): Promise<PipelineStageRow> => {
    const s = await d.stages.byId(tenantId, id);
    if (!s) throw errors.notFound("Pipeline stage not found.");
    return s;
  };
  const entry = (auth: Principal, req: RequestInfo, action: string, detail: Record<string, unknown>): AuditEntry => ({
    tenantId: auth.tenantId,
    userId: auth.userId,
    action,
    ip: req.ip,
    userAgent: req.userAgent,
    detail,
  });

  async function patch(auth: Principal, id: string, body: StagePatch, req: RequestInfo): Promise<StageRead> {
    adminOnly(auth);
    const current = await stageOr404(auth.tenantId, id);
    const next: PipelineStageRow = {
      ...current,
      name: body.name !== undefined ? body.name.trim() : current.name,
      color: body.color !== undefined ? body.color.toLowerCase() : current.color,
      probability: body.probability ?? current.probability,
      is_won: body.is_won === undefined ? current.is_won : body.is_won ? 1 : 0,
      is_lost: body.is_lost === undefined ? current.is_lost : body.is_lost ? 1 : 0,
    };
    // Marking a stage won clears lost unless both are asked for (and the reverse), as a toggle would.
    if (body.is_won === true && body.is_lost === undefined) next.is_lost = 0;
    if (body.is_lost === true && body.is_won === undefined) next.is_won = 0;
    if (next.is_won && next.is_lost) throw bothOutcomes();
    const changed = (["name", "color", "probability", "is_won", "is_lost"] as const).filter((k) => next[k] !== current[k]);
    if (changed.length > 0) {
      const detail = { stage_id: id, key: current.key, changed: Object.fromEntries(changed.map((k) => [k, { from: current[k], to: next[k] }])) };
      await d.stages.update(next, entry(auth, req, "crm.stage_updated", detail), d.now());
    }
    return toStageRead(next);
  }

  async function reorder(auth: Principal, ids: string[], req: RequestInfo): Promise<StageRead[]> {
    adminOnly(auth);
    const ok = await d.stages.reorder(auth.tenantId, ids, entry(auth, req, "crm.stages_reordered", { ids }), d.now());
    if (!ok) {
      throw new RequestValidationError([
        { loc: ["body", "ids"], msg: "Value error, give every pipeline stage id of the organization exactly once", type: "value_error", input: ids },
      ]);
    }
    return (await d.repo.stages(auth.tenantId)).map(toStageRead);
  }

  async function remove(auth: Principal, id: string, moveTo: string | null, req: RequestInfo): Promise<void> {
    adminOnly(auth);
    const stage = await stageOr404(auth.tenantId, id);
    const badTarget = (msg: string, type = "value_error") => new RequestValidationError([{ loc: ["query", "move_to"], msg, type, input: moveTo }]);
    if (moveTo === stage.key) throw badTarget("Value error, move_to names the stage being deleted");
    const audit = (moved: number) => entry(auth, req, "crm.stage_deleted", { stage_id: id, key: stage.key, name: stage.name, move_to: moveTo, moved_deals: moved });
    const r = await d.stages.remove(stage, moveTo, audit, d.now());
    if (r === "last") throw errors.conflict("last_stage", "The pipeline needs at least one stage; this is the last one.");
    if (r === "needs_target") {
      throw new RequestValidationError([
        { loc: ["query", "move_to"], msg: "Field required: this stage has deals; name the stage they move to", type: "missing", input: null },
      ]);
    }
    if (r === "unknown_target") {
      const keys = (await d.repo.stages(auth.tenantId)).filter((s) => s.key !== stage.key).map((s) => `'${s.key}'`);
      const expected = keys.join(", ").replace(/, ([^,]*)$/, " or $1");
      throw new RequestValidationError([{ loc: ["query", "move_to"], msg: `Input should be ${expected}`, type: "literal_error", input: moveTo, ctx: { expected } }]);
    }
  }

  return { patch, reorder, remove };
}

export type StagesService = ReturnType<typeof createStagesService>;
