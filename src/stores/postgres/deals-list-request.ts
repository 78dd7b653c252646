import type { DealJoined } from "../../crm/deals-repo";
import { DEAL_COLUMNS, SORT_COLUMN } from "../../crm/deal-columns";
import type { DealListQuery } from "../../crm/model";
import type { Pg } from "./database";
import type { PostgresDealsPlan } from "./deals-plan";

const dealColumns = (alias: string) =>
  DEAL_COLUMNS.split(",")
    .map((c) => `${alias}.${c.trim()}`)
    .join(", ");
export const ROW_COLUMNS = dealColumns("d");

type Arg = string | number | string[];

/** One statement's parameters: each placeholder is added as the SQL text names it, so none is left unused. */
export class Params {
  readonly list: Arg[] = [];
  add(v: Arg): string {
    this.list.push(v);
    return `$${this.list.length}`;
  }
}

/** What the deal list reads with: the connection and the plan that chooses its strategies. */
export interface DealsReads {
  pg: Pg;
  plan: PostgresDealsPlan;
}

/**
 * One request of the deal list (a page at `offset` of `size`: stage order within several stages
 * asks for one stage's part at a time): its filters as SQL, its order, its counters, its rows.
 */
export function describeRequest(reads: DealsReads, tenantId: string, q: DealListQuery, offset: number, size: number) {
  const { pg } = reads;
  const number = async (sql: string, p: Params): Promise<number> => Number((await pg.unsafe<{ n: number }>(sql, p.list))[0]?.n ?? 0);
  /** New parameters, the tenant id first ($1). */
  const withTenant = (): Params => {
    const p = new Params();
    p.add(tenantId);
    return p;
  };
  /** The filters over deals (d), with their parameters added to `p`. */
  // One stage is `=`: an index leading with the stage then yields its rows in order, where
  // `= ANY(array)` (the array unknown to a generic plan) reads them all and sorts them.
  // Unassigned deals have no assignee sort key: said outright, the assignee order's index
  // starts at them instead of walking every assigned deal first.
  const stageFilter = (p: Params): string =>
    q.stages === null ? "" : q.stages.length === 1 ? ` AND d.stage = ${p.add(q.stages[0]!)}` : ` AND d.stage = ANY(${p.add(q.stages)}::text[])`;
  const assigneeFilter = (p: Params): string =>
    q.assignee === "" ? ` AND d.assigned_to IS NULL${q.sortBy === "assignee_name" ? " AND (d.assignee_key IS NULL)" : ""}` : q.assignee !== null ? ` AND d.assigned_to = ${p.add(q.assignee)}` : "";
  const filters = (p: Params): string => stageFilter(p) + assigneeFilter(p);
  /** The same filters over a counters table (assignee '' = unassigned; `any` when any assignee will do, or none). */
  const counterFilters = (p: Params, any: string | null): string =>
    (q.stages !== null ? ` AND stage = ANY(${p.add(q.stages)}::text[])` : "") +
    (q.assignee !== null ? ` AND assignee = ${p.add(q.assignee)}` : any !== null ? ` AND assignee = ${p.add(any)}` : "");
  const countsOf = (assignee: string | null, stages: boolean) => {
    const p = withTenant();
    const w = (stages && q.stages !== null ? ` AND stage = ANY(${p.add(q.stages)}::text[])` : "") + ` AND assignee = ${p.add(assignee ?? "*")}`;
    return number(`SELECT coalesce(sum(n), 0)::bigint AS n FROM deal_counts WHERE tenant_id = $1${w}`, p);
  };

  const { column, nullable } = SORT_COLUMN[q.sortBy];
  const dir = q.sortDir === "asc" ? "ASC" : "DESC";
  const orderBy = `${nullable ? `(d.${column} IS NULL), ` : ""}d.${column} ${dir}, d.id ${dir}`;

  /** The page's rows, given the SQL of their ids (ids first: a deep page skips index entries, not rows). */
  const rowsOf = async (idsSql: string, p: Params): Promise<{ seqs: number[]; rows: DealJoined[] }> => {
    const rows = await pg.unsafe<DealJoined>(`SELECT ${ROW_COLUMNS} FROM (${idsSql}) k JOIN deals d ON d.tenant_id = $1 AND d.id = k.id ORDER BY ${orderBy}`, p.list);
    return { seqs: rows.map((r) => r.seq), rows };
  };

  /**
   * Assignee order under one assignee's filter: their deals share one sort key (a copy of their
   * name), so the order's index is sought at that key (id order within it) instead of walked
   * past every other assignee's deals. The key is read from one of their deals; a user without
   * a name has the null key, which unassigned deals share (the filter tells them apart). The
   * filter itself is written so that no index serves it: the planner, taking the key and the
   * assignee for independent, would read all of the assignee's rows by their own index and sort
   * them (14k rows at 1M deals: 17 ms warm, 170 cold) instead of seeking the key's range. "IS
   * FALSE": `NOT (key IS NULL)` is folded into `key IS NOT NULL`, which no longer matches the
   * index's `(key IS NULL)` column, and the seek would start at the tenant's first entry.
   */
  const assigneeRange = async (p: Params): Promise<string | null> => {
    if (q.sortBy !== "assignee_name" || q.assignee === null) return null;
    if (q.assignee === "") return " AND (d.assignee_key IS NULL) AND coalesce(d.assigned_to, '') = ''";
    const row = await pg.unsafe<{ k: string | null }>("SELECT assignee_key AS k FROM deals WHERE tenant_id = $1 AND assigned_to = $2 LIMIT 1", [tenantId, q.assignee]);
    if (row.length === 0) return null;
    const key = row[0]!.k === null ? " AND (d.assignee_key IS NULL)" : ` AND (d.assignee_key IS NULL) IS FALSE AND d.assignee_key = ${p.add(row[0]!.k)}`;
    return `${key} AND (d.assigned_to || '') = ${p.add(q.assignee)}`;
  };

  return {
    tenantId,
    q,
    pg,
    plan: reads.plan,
    offset,
    size,
    column,
    orderBy,
    filtered: q.stages !== null || q.assignee !== null,
    number,
    withTenant,
    stageFilter,
    assigneeFilter,
    filters,
    counterFilters,
    countsOf,
    rowsOf,
    assigneeRange,
  };
}

export type ListRequest = ReturnType<typeof describeRequest>;
