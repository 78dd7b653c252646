import type { StagesStore } from "../../crm/pipeline-repo";
import { type Db, writeTxAsync } from "../../db/database";
import type { AuditEntry } from "../../security/repo";
import { type SqliteSecurityStore } from "./security";
import type { PipelineStageRow } from "../../crm/repo";
import type { AppendEventsInTx } from "./deals";
import { actorOfAudit } from "../../events/repo";
import { STAGE_EVENT_FIELDS, changesOf } from "../../events/changes";


/**
 * SQL of changing, reordering and deleting pipeline stages. Deals hold a stage's key and read its
 * name, colour and outcome by a join at read time (deals-repo.ts), so a rename shows in every
 * deal at once without rewriting them; a deletion moves the deals' key in its own transaction,
 * and the deal_counts and deals_fts triggers follow the UPDATE of `stage`.
 */
export function createSqliteStagesStore(db: Db, deps: { security: SqliteSecurityStore; appendEventsInTx: AppendEventsInTx }) {
  const byId = db.prepare<PipelineStageRow, [string, string]>("SELECT * FROM pipeline_stages WHERE tenant_id = ?1 AND id = ?2");
  const ids = db.prepare<{ id: string }, [string]>("SELECT id FROM pipeline_stages WHERE tenant_id = ?1");
  const update = db.prepare<never, [string, string, string, string, number, number, number]>(
    "UPDATE pipeline_stages SET name = ?3, color = ?4, probability = ?5, is_won = ?6, is_lost = ?7 WHERE tenant_id = ?1 AND id = ?2",
  );
  const setPosition = db.prepare<never, [string, string, number]>("UPDATE pipeline_stages SET position = ?3 WHERE tenant_id = ?1 AND id = ?2");
  const count = db.prepare<{ n: number }, [string]>("SELECT count(*) AS n FROM pipeline_stages WHERE tenant_id = ?1");
  const hasDeals = db.prepare<{ one: number }, [string, string]>("SELECT 1 AS one FROM deals WHERE tenant_id = ?1 AND stage = ?2 LIMIT 1");
  const moveDeals = db.prepare<never, [string, string, string, number]>("UPDATE deals SET stage = ?3, updated_at = ?4 WHERE tenant_id = ?1 AND stage = ?2");
  // The moved stage's counters are all zero now; a stage made later with the same key starts afresh.
  const dropCounts = db.prepare<never, [string, string]>("DELETE FROM deal_counts WHERE tenant_id = ?1 AND stage = ?2");
  const keyExists = db.prepare<{ one: number }, [string, string]>("SELECT 1 AS one FROM pipeline_stages WHERE tenant_id = ?1 AND key = ?2");
  const remove = db.prepare<never, [string, string]>("DELETE FROM pipeline_stages WHERE tenant_id = ?1 AND id = ?2");

  const store = {
    byId: async (tenantId: string, id: string) => byId.get(tenantId, id),
    hasDeals: async (tenantId: string, key: string) => hasDeals.get(tenantId, key) !== null,
    async update(s: PipelineStageRow, audit: AuditEntry, now: number): Promise<void> {
      await writeTxAsync(db, () => {
        const before = byId.get(s.tenant_id, s.id);
        update.run(s.tenant_id, s.id, s.name, s.color, s.probability, s.is_won, s.is_lost);
        deps.security.auditInTx(audit, now);
        const changes = before ? changesOf(before, s, STAGE_EVENT_FIELDS) : {};
        if (Object.keys(changes).length > 0)
          deps.appendEventsInTx(s.tenant_id, [{ type: "pipeline_stage.updated", actor: actorOfAudit(audit), data: { id: s.id, key: s.key, changes } }], now);
      });
    },
    /** False when `order` is not every stage id of the tenant exactly once (read in the same transaction). */
    async reorder(tenantId: string, order: string[], audit: AuditEntry, now: number): Promise<boolean> {
      return writeTxAsync(db, () => {
        const known = new Set(ids.all(tenantId).map((r) => r.id));
        if (order.length !== known.size || new Set(order).size !== order.length || !order.every((id) => known.has(id))) return false;
        order.forEach((id, i) => setPosition.run(tenantId, id, i));
        deps.security.auditInTx(audit, now);
        deps.appendEventsInTx(tenantId, [{ type: "pipeline_stage.reordered", actor: actorOfAudit(audit), data: { order } }], now);
        return true;
      });
    },
    /**
     * Deletes a stage, first moving its deals to `moveTo`. Answers what stopped it: "last" when it is
     * the organization's only stage, "needs_target" when it has deals and no target was given,
   * "unknown_target" when the target is no stage of the organization,
     * or how many deals moved. Checked inside the transaction, so a deal added meanwhile moves too.
     */
    async remove(s: PipelineStageRow, moveTo: string | null, audit: (moved: number) => AuditEntry, now: number): Promise<"last" | "needs_target" | "unknown_target" | number> {
      return writeTxAsync(db, () => {
        if (count.get(s.tenant_id)!.n <= 1) return "last";
        if (moveTo !== null && !keyExists.get(s.tenant_id, moveTo)) return "unknown_target";
        const any = hasDeals.get(s.tenant_id, s.key) !== null;
        if (any && moveTo === null) return "needs_target";
        const n = any && moveTo !== null ? moveDeals.run(s.tenant_id, s.key, moveTo, now).changes : 0;
        dropCounts.run(s.tenant_id, s.key);
        remove.run(s.tenant_id, s.id);
        deps.security.auditInTx(audit(n), now);
        // One event for the stage; the deals it moved are named by count, not one event each.
        deps.appendEventsInTx(s.tenant_id, [{ type: "pipeline_stage.deleted", actor: actorOfAudit(audit(n)), data: { id: s.id, key: s.key, moved_to: n > 0 ? moveTo : null, moved: n } }], now);
        return n;
      });
    },
  };
  return store satisfies StagesStore;
}

export type SqliteStagesStore = ReturnType<typeof createSqliteStagesStore>;
