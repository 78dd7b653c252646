import type { Db } from "../db/database";
import { newId } from "../db/ids";
import { DEFAULT_STAGES } from "./model";

export interface PipelineStageRow {
  id: string;
  tenant_id: string;
  key: string;
  name: string;
  color: string;
  position: number;
  probability: number;
  is_won: number;
  is_lost: number;
  created_at: number;
}

/** SQL of the CRM. Every statement is prepared once; every read names the tenant. */
export function createCrmRepo(db: Db) {
  const insertStage = db.prepare<never, [string, string, string, string, string, number, number, number, number, number]>(
    `INSERT INTO pipeline_stages (id, tenant_id, key, name, color, position, probability, is_won, is_lost, created_at)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)`,
  );
  const stages = db.prepare<PipelineStageRow, [string]>("SELECT * FROM pipeline_stages WHERE tenant_id = ?1 ORDER BY position, key");

  return {
    /** Run inside signup's transaction. */
    seedDefaultStagesInTx(tenantId: string, now: number) {
      DEFAULT_STAGES.forEach((s, i) => insertStage.run(newId(), tenantId, s.key, s.name, s.color, i, s.probability, s.is_won, s.is_lost, now));
    },
    stages: async (tenantId: string) => stages.all(tenantId),
  };
}

export type CrmRepo = ReturnType<typeof createCrmRepo>;
