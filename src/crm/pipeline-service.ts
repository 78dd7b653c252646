import type { Principal, RequestInfo } from "../auth/service";
import { RequestValidationError, errors } from "../kernel/errors";
import { newId } from "../kernel/ids";
import { userActor } from "../events/repo";
import { isUniqueViolation } from "../kernel/unique-violation";
import type { AuditEntry } from "../security/repo";
import type { StageCreate, StagePatch, StageRead } from "./model";
import { toStageRead } from "./read";
import type { CrmStore, PipelineStageRow } from "./repo";
import type { StagesStore } from "./pipeline-repo";

export interface PipelineDeps {
  now: () => number;
  repo: CrmStore;
  stages: StagesStore;
}

const bothOutcomes = () =>
  new RequestValidationError([{ loc: ["body", "is_lost"], msg: "Value error, a stage cannot be both won and lost", type: "value_error", input: true }]);

/**
 * The pipeline's stages (/api/v1/crm/pipeline-stages): everyone reads them; admins create, change,
 * reorder and delete them, and every change but a create leaves an audit row in its transaction.
 */
export function createPipelineService(d: PipelineDeps) {
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

  async function list(auth: Principal): Promise<StageRead[]> {
    return (await d.repo.stages(auth.tenantId)).map(toStageRead);
  }

  /** Admins shape the pipeline; everyone works in it. */
  async function create(auth: Principal, body: StageCreate): Promise<StageRead> {
    if (auth.role !== "admin") throw errors.forbidden();
    if (body.is_won && body.is_lost) {
      throw new RequestValidationError([
        { loc: ["body", "is_lost"], msg: "Value error, a stage cannot be both won and lost", type: "value_error", input: true },
      ]);
    }
    try {
      const row = await d.repo.insertStage({
        id: newId(),
        tenant_id: auth.tenantId,
        key: body.key,
        name: body.name.trim(),
        color: (body.color ?? "#64748b").toLowerCase(),
        position: body.position ?? null,
        probability: body.probability ?? 0,
        is_won: body.is_won ? 1 : 0,
        is_lost: body.is_lost ? 1 : 0,
        created_at: d.now(),
      }, userActor(auth));
      return toStageRead(row);
    } catch (e) {
      if (isUniqueViolation(e)) throw errors.conflict("stage_exists", "This organization already has a stage with this key.");
      throw e;
    }
  }

  /** One stage by id (a keyed create's answer rebuilt: src/idempotency/create-once.ts). */
  async function get(auth: Principal, id: string): Promise<StageRead> {
    const s = (await d.repo.stages(auth.tenantId)).find((x) => x.id === id);
    if (!s) throw errors.notFound("Pipeline stage not found.");
    return toStageRead(s);
  }

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

  return { list, create, get, patch, reorder, remove };
}

export type PipelineService = ReturnType<typeof createPipelineService>;
