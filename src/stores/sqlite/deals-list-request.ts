import type { Statement } from "bun:sqlite";
import type { DealJoined } from "../../crm/deals-repo";
import { SORT_COLUMN } from "../../crm/deal-columns";
import type { DealListQuery } from "../../crm/model";
import { offsetOf } from "../../kernel/paging";
import type { TextWalk } from "./deals-text-walk";
import type { SqliteDealsPlan } from "./deals-plan";

/** What the deal list reads with, prepared once per store (deals-query.ts). */
export interface DealsReads {
  /** A statement for this SQL text, prepared once and kept. */
  stmt(sql: string): Statement;
  tenantNo: Statement<{ tenant_no: number }, [string]>;
  /** An assignee's sort key, as their deals carry it (NULL for a user without a full name). */
  assigneeKeyOf: Statement<{ assignee_key: string | null }, [string, string]>;
  withStages(tenantId: string, rows: DealJoined[]): DealJoined[];
  walkBuckets(w: TextWalk): number[] | null;
  stageMatch(tenantId: string, stages: string[]): string;
  shortTermTotal(tenantId: string, term: string, q: DealListQuery): number;
  plan: SqliteDealsPlan;
}

/**
 * How a search walks the order's index: which filters the index serves (they select the entries
 * walked), which are tested on each entry, and how many entries the walk is among.
 */
export interface WalkShape {
  served: string;
  servedArgs: Array<string | number>;
  tested: string;
  testedArgs: Array<string | number>;
  indexed: string;
  order: string;
  among: () => number;
}

const placeholders = (values: string[]) => values.map(() => "?").join(", ");

/** One request of the deal list: its filters as SQL, its order, its counters and its walk's shape. */
export function describeRequest(reads: DealsReads, tenantId: string, q: DealListQuery) {
  const { stmt } = reads;
  // Filters over deals (d), and the same over deal_counts.
  const where: string[] = [];
  const args: Array<string | number> = [];
  const countWhere: string[] = [];
  const countArgs: Array<string | number> = [];
  if (q.stages !== null) {
    where.push(`d.stage IN (${placeholders(q.stages)})`);
    args.push(...q.stages);
    countWhere.push(`stage IN (${placeholders(q.stages)})`);
    countArgs.push(...q.stages);
  }
  if (q.assignee === "") where.push("d.assigned_to IS NULL");
  else if (q.assignee !== null) {
    where.push("d.assigned_to = ?");
    args.push(q.assignee);
  }
  // '*' rows hold every assignee together.
  countWhere.unshift("assignee = ?");
  countArgs.unshift(q.assignee ?? "*");
  const filterSql = where.map((w) => ` AND ${w}`).join("");
  const { column, nullable } = SORT_COLUMN[q.sortBy];
  const dir = q.sortDir === "asc" ? "ASC" : "DESC";
  const orderBy = `${nullable ? `d.${column} IS NULL, ` : ""}d.${column} ${dir}, d.id ${dir}`;
  const offset = offsetOf(q.page, q.size);

  /** The deals within the filters (deal_counts). */
  const unsearchedTotal = (): number =>
    (stmt(`SELECT coalesce(sum(n), 0) AS n FROM deal_counts WHERE tenant_id = ?${countWhere.map((w) => ` AND ${w}`).join("")}`).get(tenantId, ...countArgs) as { n: number }).n;
  const tenantTotal = (): number => (stmt("SELECT coalesce(sum(n), 0) AS n FROM deal_counts WHERE tenant_id = ? AND assignee = '*'").get(tenantId) as { n: number }).n;
  const countOf = (stages: string[] | null, assignee: string) =>
    (stmt(`SELECT coalesce(sum(n), 0) AS n FROM deal_counts WHERE tenant_id = ? AND assignee = ?${stages ? ` AND stage IN (${placeholders(stages)})` : ""}`).get(
      tenantId,
      assignee,
      ...(stages ?? []),
    ) as { n: number }).n;

  /**
   * Creation order: the assignee and stage indexes lead with them, they serve every filter. Stage
   * order: the stage index, one requested stage after another, the assignee tested. Assignee order
   * under an assignee filter: that assignee's range of the index is sought (below). Any other order
   * walks the tenant's entries, the filters tested on each.
   */
  function shapeOfWalk(): WalkShape {
    if (q.sortBy === "created_at") return { served: filterSql, servedArgs: args, tested: "", testedArgs: [], indexed: "", order: orderBy, among: () => unsearchedTotal() };
    if (q.sortBy === "stage" && q.stages !== null) {
      const assigneeSql = q.assignee === null ? "" : q.assignee === "" ? " AND d.assigned_to IS NULL" : " AND d.assigned_to = ?";
      const assigneeArgs = q.assignee === null || q.assignee === "" ? [] : [q.assignee];
      return {
        served: ` AND d.stage IN (${placeholders(q.stages)})`,
        servedArgs: q.stages,
        tested: assigneeSql,
        testedArgs: assigneeArgs,
        indexed: "",
        order: orderBy,
        among: () => countOf(q.stages, "*"),
      };
    }
    // One assignee's entries share one key (the unassigned: NULL, last both ways): that range of
    // the assignee index is sought, ordered by key and id (SQLite sorts anew if the IS NULL term stays).
    // A user without a full name has a NULL key too: their range is the unassigned one, their
    // deals told apart by the tested assignee filter.
    if (q.sortBy === "assignee_name" && q.assignee !== null) {
      const nullKey = q.assignee === "" || reads.assigneeKeyOf.get(tenantId, q.assignee)?.assignee_key === null;
      return {
        served: nullKey
          ? " AND (d.assignee_key IS NULL) = 1"
          : " AND (d.assignee_key IS NULL) = 0 AND d.assignee_key = (SELECT assignee_key FROM deals INDEXED BY deals_by_assignee_created WHERE tenant_id = ? AND assigned_to = ? LIMIT 1)",
        servedArgs: nullKey ? [] : [tenantId, q.assignee],
        tested: filterSql,
        testedArgs: args,
        // Walked backwards for a descending order (schema version 25 dropped the descending index).
        indexed: " INDEXED BY deals_by_assignee_asc",
        order: `d.assignee_key ${dir}, d.id ${dir}`,
        among: () => countOf(null, q.assignee!),
      };
    }
    return { served: "", servedArgs: [], tested: filterSql, testedArgs: args, indexed: "", order: orderBy, among: () => tenantTotal() };
  }
  /**
   * SQL reading `select` of the tenant's entries that `where` keeps (over deals d), in the list's
   * order, `limit` of them after `offset` (null: no OFFSET): one walk of the order's index. A
   * nullable key sorted descending keeps its deals without a key last, as ascending does; its one
   * index (key IS NULL, key, id) is walked backwards twice, over the keyed entries and then the
   * keyless ones, which take its place in the order (schema version 25: one index fewer to write
   * for each of the four nullable sorts). `bind` is a placeholder ("?" or "(SELECT ?)", see
   * deals-page-reads.ts); `selectArgs` are the placeholders of `select`.
   */
  function inOrder(p: {
    select: string;
    selectArgs?: Array<string | number>;
    where: string;
    whereArgs: Array<string | number>;
    limit: number;
    offset?: number | null;
    bind?: string;
  }): { sql: string; args: Array<string | number> } {
    const bind = p.bind ?? "?";
    const selectArgs = p.selectArgs ?? [];
    const offset = p.offset ?? null;
    const skip = offset === null ? "" : ` OFFSET ${bind}`;
    const arm = (keyless: string, order: string, limit: string) => `SELECT ${p.select} FROM deals d WHERE d.tenant_id = ${bind}${keyless}${p.where} ORDER BY ${order} LIMIT ${limit}`;
    if (!(nullable && dir === "DESC"))
      return { sql: arm("", orderBy, `${bind}${skip}`), args: [...selectArgs, tenantId, ...p.whereArgs, p.limit, ...(offset === null ? [] : [offset])] };
    const order = `d.${column} DESC, d.id DESC`;
    const reach = p.limit + (offset ?? 0);
    const armArgs = [...selectArgs, tenantId, ...p.whereArgs, reach];
    return {
      sql: `SELECT * FROM (SELECT * FROM (${arm(` AND (d.${column} IS NULL) = 0`, order, bind)}) UNION ALL SELECT * FROM (${arm(` AND (d.${column} IS NULL) = 1`, order, bind)})) LIMIT ${bind}${skip}`,
      args: [...armArgs, ...armArgs, p.limit, ...(offset === null ? [] : [offset])],
    };
  }

  let shape: WalkShape | null = null;
  /** The walk's shape, worked out once (the assignee order's reads its assignee's key). */
  const walkShape = (): WalkShape => (shape ??= shapeOfWalk());

  /** Rows walked in order before the page is full, if the `total` matches were spread evenly among `among`. */
  const expectedWalk = (total: number, among: number): number => ((offset + q.size) * among) / total;

  return {
    tenantId,
    q,
    reads,
    /** The filters over deals (d), each ` AND …`, and their arguments. */
    filterSql,
    args,
    hasFilters: where.length > 0,
    orderBy,
    dir,
    offset,
    unsearchedTotal,
    tenantTotal,
    walkShape,
    inOrder,
    expectedWalk,
    /** Index entries walked in order before the page is full, if the `total` matches were spread evenly. */
    expectedEntries: (total: number): number => expectedWalk(total, walkShape().among()),
  };
}

export type ListRequest = ReturnType<typeof describeRequest>;
