import type { AuditEntry } from "../security/repo";
import type { PipelineStageRow } from "./repo";

/**
 * The store of changing, reordering and deleting pipeline stages. Deals hold a stage's key and read its
 * name, colour and outcome by a join at read time (deals-repo.ts), so a rename shows in every
 * deal at once without rewriting them; a deletion moves the deals' key in its own transaction,
 * and the deal_counts and deals_fts triggers follow the UPDATE of `stage`.
 */
export interface StagesStore {
  byId: (tenantId: string, id: string) => Promise<PipelineStageRow | null>;
  hasDeals: (tenantId: string, key: string) => Promise<boolean>;
  update(s: PipelineStageRow, audit: AuditEntry, now: number): Promise<void>;
  /** False when `order` is not every stage id of the tenant exactly once (read in the same transaction). */
  reorder(tenantId: string, order: string[], audit: AuditEntry, now: number): Promise<boolean>;
  /**
   * Deletes a stage, first moving its deals to `moveTo`. Answers what stopped it: "last" when it is
   * the organization's only stage, "needs_target" when it has deals and no target was given,
   * "unknown_target" when the target is no stage of the organization,
   * or how many deals moved. Checked inside the transaction, so a deal added meanwhile moves too.
   */
  remove(s: PipelineStageRow, moveTo: string | null, audit: (moved: number) => AuditEntry, now: number): Promise<"last" | "needs_target" | "unknown_target" | number>;
}
