import type { StagesStore } from "../../crm/pipeline-repo";
import type { PipelineStageRow } from "../../crm/repo";
import type { AuditEntry } from "../../security/repo";
import type { Pg, PgTx } from "./database";
import { lockCrmExclusive } from "./deals";
import { appendEventsInTx } from "./events";
import { actorOfAudit } from "../../events/repo";
import { STAGE_EVENT_FIELDS, changesOf } from "../../events/changes";

/** What the stages store needs of the security store (its PostgreSQL twin's auditInTx). */
export interface PgAuditWriter {
  auditInTx(tx: PgTx, e: AuditEntry, now: number): Promise<void>;
}

/**
 * PostgreSQL twin of src/crm/pipeline-repo.ts. Every change of a tenant's stages takes the tenant's
 * CRM lock exclusively first (deals.ts): "is this the last stage?", "is `order` every stage?" and
 * "does the target exist?" read several rows, so two changes at once must not both pass their
 * checks on the same picture (two deletions leaving no stage at all); and a deletion moves deals,
 * so no deal write may be naming the stage meanwhile. The deal list's counters follow the deals'
 * UPDATE of `stage` by 51-deal-search.sql's triggers, which also drop a deleted stage's counters.
 */
export function createPostgresStagesStore(pg: Pg, deps: { security: PgAuditWriter }) {
  const store = {
    byId: async (tenantId: string, id: string) => pg.one<PipelineStageRow>`SELECT * FROM pipeline_stages WHERE tenant_id = ${tenantId} AND id = ${id}`,
    hasDeals: async (tenantId: string, key: string) =>
      (await pg.one`SELECT 1 AS one FROM deals WHERE tenant_id = ${tenantId} AND stage = ${key} LIMIT 1`) !== null,
    async update(s: PipelineStageRow, audit: AuditEntry, now: number): Promise<void> {
      await pg.begin(async (tx) => {
        const before = await tx.one<PipelineStageRow>`SELECT * FROM pipeline_stages WHERE tenant_id = ${s.tenant_id} AND id = ${s.id} FOR UPDATE`;
        await tx.run`UPDATE pipeline_stages SET name = ${s.name}, color = ${s.color}, probability = ${s.probability}, is_won = ${s.is_won}, is_lost = ${s.is_lost}
          WHERE tenant_id = ${s.tenant_id} AND id = ${s.id}`;
        await deps.security.auditInTx(tx, audit, now);
        const changes = before ? changesOf(before, s, STAGE_EVENT_FIELDS) : {};
        if (Object.keys(changes).length > 0)
          await appendEventsInTx(tx, s.tenant_id, [{ type: "pipeline_stage.updated", actor: actorOfAudit(audit), data: { id: s.id, key: s.key, changes } }], now);
      });
    },
    /** False when `order` is not every stage id of the tenant exactly once (read under the lock). */
    async reorder(tenantId: string, order: string[], audit: AuditEntry, now: number): Promise<boolean> {
      return pg.begin(async (tx) => {
        await lockCrmExclusive(tx, tenantId);
        const known = new Set((await tx.all<{ id: string }>`SELECT id FROM pipeline_stages WHERE tenant_id = ${tenantId}`).map((r) => r.id));
        if (order.length !== known.size || new Set(order).size !== order.length || !order.every((id) => known.has(id))) return false;
        await tx.run`UPDATE pipeline_stages p SET position = u.n - 1
          FROM unnest(${order}::text[]) WITH ORDINALITY AS u(id, n) WHERE p.tenant_id = ${tenantId} AND p.id = u.id`;
        await deps.security.auditInTx(tx, audit, now);
        await appendEventsInTx(tx, tenantId, [{ type: "pipeline_stage.reordered", actor: actorOfAudit(audit), data: { order } }], now);
        return true;
      });
    },
    /**
     * Deletes a stage, first moving its deals to `moveTo`. Answers what stopped it: "last" when it is
     * the organization's only stage, "needs_target" when it has deals and no target was given,
     * "unknown_target" when the target is no stage of the organization, or how many deals moved.
     * Checked under the lock, so a deal added before it moves too, and one added after is refused.
     */
    async remove(s: PipelineStageRow, moveTo: string | null, audit: (moved: number) => AuditEntry, now: number): Promise<"last" | "needs_target" | "unknown_target" | number> {
      return pg.begin(async (tx) => {
        await lockCrmExclusive(tx, s.tenant_id);
        const { n } = (await tx.one<{ n: number }>`SELECT count(*) AS n FROM pipeline_stages WHERE tenant_id = ${s.tenant_id}`)!;
        if (n <= 1) return "last";
        if (moveTo !== null && !(await tx.one`SELECT 1 AS one FROM pipeline_stages WHERE tenant_id = ${s.tenant_id} AND key = ${moveTo}`)) return "unknown_target";
        const any = (await tx.one`SELECT 1 AS one FROM deals WHERE tenant_id = ${s.tenant_id} AND stage = ${s.key} LIMIT 1`) !== null;
        if (any && moveTo === null) return "needs_target";
        const moved = any && moveTo !== null ? await tx.run`UPDATE deals SET stage = ${moveTo}, updated_at = ${now} WHERE tenant_id = ${s.tenant_id} AND stage = ${s.key}` : 0;
        await tx.run`DELETE FROM pipeline_stages WHERE tenant_id = ${s.tenant_id} AND id = ${s.id}`;
        // Its counters are all zero now that its deals moved: they go with it, as on SQLite, so a
        // stage made again with the key starts from no rows. Its search grams' counters add up to
        // zero with its pending rows (the moves' -1s among them): both go, once a fold under way
        // has committed (search-fold.ts).
        await tx.run`DELETE FROM deal_counts WHERE tenant_id = ${s.tenant_id} AND stage = ${s.key}`;
        await tx.run`SELECT deal_search_fold_lock(${s.tenant_id})`;
        await tx.run`DELETE FROM deal_gram_counts WHERE tenant_id = ${s.tenant_id} AND stage = ${s.key}`;
        await tx.run`DELETE FROM deal_search_pending WHERE tenant_id = ${s.tenant_id} AND stage = ${s.key}`;
        await deps.security.auditInTx(tx, audit(moved), now);
        await appendEventsInTx(tx, s.tenant_id, [{ type: "pipeline_stage.deleted", actor: actorOfAudit(audit(moved)), data: { id: s.id, key: s.key, moved_to: moved > 0 ? moveTo : null, moved } }], now);
        return moved;
      });
    },
  };
  return store satisfies StagesStore;
}

export type PostgresStagesStore = ReturnType<typeof createPostgresStagesStore>;
