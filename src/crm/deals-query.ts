import type { Statement } from "bun:sqlite";
import type { Db } from "../db/database";
import { offsetOf } from "../http/paging";
import { TENANT_SPAN } from "./deals-repo";
import type { DealListQuery, SortField } from "./model";

/** Below this many characters trigrams cannot match: the search reads the rows instead. */
const MIN_FTS_TERM = 3;
/** A term with fewer matches than this in a tenant is rare: its rows are looked up one by one. */
const RARE = 10_000;
/** Index entries walked (each tested against a set of matches) that cost as much as one row looked up. */
const WALK_STEP_COST = 1 / 10;

/** Sort key column of each sortable field; the nullable ones sort nulls last both ways. */
const SORT_COLUMN: Record<SortField, { column: string; nullable: boolean }> = {
  title: { column: "title_key", nullable: false },
  value: { column: "value_cents", nullable: false },
  stage: { column: "stage", nullable: false },
  probability: { column: "probability", nullable: true },
  close_date: { column: "close_date", nullable: true },
  created_at: { column: "created_at", nullable: false },
  updated_at: { column: "updated_at", nullable: false },
  account_name: { column: "account_key", nullable: false },
  contact_name: { column: "contact_key", nullable: true },
  assignee_name: { column: "assignee_key", nullable: true },
};

/** An FTS5 query matching `term` as one literal phrase: quotes doubled, operators inert. */
export const ftsPhrase = (term: string): string => `"${term.replace(/"/g, '""')}"`;

export interface ListedSeqs {
  seqs: number[];
  total: number;
}

/**
 * The deal list's SQL. Totals come from the deal_counts table when there is no search (a sum of
 * a few rows), else from the trigram index limited to the tenant's rowid range. The page is read
 * from the index of the requested order; a search either walks that order testing each row's
 * text (when matches are dense, the first page is near) or sorts the matching rows (when rare),
 * whichever touches fewer rows. Statements are prepared once per shape and kept.
 */
export function createDealsQuery(db: Db, opts: { rare?: number; pageBy?: "cost" | "walk" | "sort" } = {}) {
  const rare = opts.rare ?? RARE;
  const pageBy = opts.pageBy ?? "cost";
  const prepared = new Map<string, Statement>();
  const stmt = (sql: string): Statement => {
    let s = prepared.get(sql);
    if (!s) {
      s = db.prepare(sql);
      prepared.set(sql, s);
    }
    return s;
  };
  const tenantNo = db.prepare<{ tenant_no: number }, [string]>("SELECT tenant_no FROM crm_tenants WHERE tenant_id = ?1");

  return {
    async list(tenantId: string, q: DealListQuery): Promise<ListedSeqs> {
      const t = tenantNo.get(tenantId);
      if (!t || (q.stages !== null && q.stages.length === 0)) return { seqs: [], total: 0 };
      const lo = t.tenant_no * TENANT_SPAN;
      const hi = lo + TENANT_SPAN - 1;

      // Filters over deals (d), and the same over deal_counts.
      const where: string[] = [];
      const args: Array<string | number> = [];
      const countWhere: string[] = [];
      const countArgs: Array<string | number> = [];
      if (q.stages !== null) {
        where.push(`d.stage IN (${q.stages.map(() => "?").join(", ")})`);
        args.push(...q.stages);
        countWhere.push(`stage IN (${q.stages.map(() => "?").join(", ")})`);
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
      const unsearchedTotal = (): number =>
        (stmt(`SELECT coalesce(sum(n), 0) AS n FROM deal_counts WHERE tenant_id = ?${countWhere.map((w) => ` AND ${w}`).join("")}`).get(
          tenantId,
          ...countArgs,
        ) as { n: number }).n;

      const tenantTotal = (): number => (stmt("SELECT coalesce(sum(n), 0) AS n FROM deal_counts WHERE tenant_id = ? AND assignee = '*'").get(tenantId) as { n: number }).n;

      const { column, nullable } = SORT_COLUMN[q.sortBy];
      const dir = q.sortDir === "asc" ? "ASC" : "DESC";
      const orderBy = `${nullable ? `d.${column} IS NULL, ` : ""}d.${column} ${dir}, d.id ${dir}`;
      const offset = offsetOf(q.page, q.size);
      /** A page walked along the order's index, keeping the rows `extra` accepts. */
      const page = (extra: string, extraArgs: Array<string | number>): number[] =>
        (
          stmt(`SELECT d.seq FROM deals d WHERE d.tenant_id = ?${extra}${filterSql} ORDER BY ${orderBy} LIMIT ? OFFSET ?`).values(
            tenantId,
            ...extraArgs,
            ...args,
            q.size,
            offset,
          ) as number[][]
        ).map((r) => r[0]!);
      /**
       * A page of a set of rowids: each is looked up, then the few are sorted. CROSS JOIN pins that
       * order, which the planner, without statistics, may otherwise turn into a walk of the whole index.
       */
      const pageOfSet = (set: string, setArgs: Array<string | number>): number[] =>
        (
          stmt(
            `SELECT d.seq FROM (${set}) m CROSS JOIN deals d ON d.seq = m.seq WHERE d.tenant_id = ?${filterSql} ORDER BY ${orderBy} LIMIT ? OFFSET ?`,
          ).values(...setArgs, tenantId, ...args, q.size, offset) as number[][]
        ).map((r) => r[0]!);

      /**
       * A page of a set of (already filtered) rowids found by walking the order's index: `+` keeps
       * the planner from looking the set up by rowid, so each index entry is tested against the set
       * and no row is read.
       */
      const walkSet = (set: string): number[] =>
        (
          stmt(
            `SELECT d.seq FROM deals d WHERE d.tenant_id = ? AND +d.seq IN (SELECT value FROM json_each(?)) ORDER BY ${orderBy} LIMIT ? OFFSET ?`,
          ).values(tenantId, set, q.size, offset) as number[][]
        ).map((r) => r[0]!);

      if (q.search === null) {
        const total = unsearchedTotal();
        return { seqs: offset >= total ? [] : page("", []), total };
      }

      const term = q.search.toLowerCase();
      const scan = " AND instr(d.search_text, ?) > 0";
      if ([...term].length < MIN_FTS_TERM) {
        // The tenant's rowid range is read in order: a sequential scan, not a lookup per row.
        const total = (stmt(`SELECT count(*) AS n FROM deals d WHERE d.seq BETWEEN ? AND ?${scan}${filterSql}`).get(lo, hi, term, ...args) as { n: number })
          .n;
        return { seqs: offset >= total ? [] : page(scan, [term]), total };
      }

      const termOnly = `search_text : ${ftsPhrase(term)}`;
      const matching = "SELECT rowid FROM deals_fts WHERE deals_fts MATCH ? AND rowid BETWEEN ? AND ?";
      const count = (sql: string, ...a: Array<string | number>) => (stmt(sql).get(...a) as { n: number }).n;
      // How common is the term? Reading at most RARE matches costs little either way, and a rare
      // term's matches are all there is to filter, count and sort: the index is read once.
      const hits = (stmt(`${matching} LIMIT ?`).values(termOnly, lo, hi, rare) as number[][]).map((r) => r[0]!);
      if (hits.length < rare) {
        // Filters read the small (seq, stage, assigned_to) index, not the rows; every hit is in the tenant's range.
        const found =
          where.length === 0
            ? hits
            : (
                stmt(
                  `SELECT d.seq FROM json_each(?) m CROSS JOIN deals d INDEXED BY deals_filters_by_seq ON d.seq = m.value WHERE 1${filterSql}`,
                ).values(JSON.stringify(hits), ...args) as number[][]
              ).map((r) => r[0]!);
        const total = found.length;
        if (offset >= total) return { seqs: [], total };
        const set = JSON.stringify(found);
        // Either look up every match and sort them (a random read each), or walk the order's index
        // from its start testing each entry against the set (no row read), whichever costs less.
        const walkedEntries = ((offset + q.size) * tenantTotal()) / total;
        if (pageBy === "walk" || (pageBy === "cost" && walkedEntries * WALK_STEP_COST < total)) return { seqs: walkSet(set), total };
        return { seqs: pageOfSet("SELECT value AS seq FROM json_each(?)", [set]), total };
      }
      // Stages are matched inside the index (stage_token): no row is read to filter them.
      const match = termOnly + (q.stages !== null ? ` AND stage_token : (${q.stages.map((s) => ftsPhrase(`\x01${s}\x01`)).join(" OR ")})` : "");
      let total: number;
      if (q.assignee === null) {
        total = count("SELECT count(*) AS n FROM deals_fts WHERE deals_fts MATCH ? AND rowid BETWEEN ? AND ?", match, lo, hi);
      } else if (q.assignee !== "") {
        // A common term for one user: the index's matches (within the stages) are tested against
        // the user's few deals, read once from the assignee index (ion/mine: 49 -> 28 ms at 1M).
        total = count(
          `SELECT count(*) AS n FROM deals_fts WHERE deals_fts MATCH ? AND rowid BETWEEN ? AND ?
             AND +rowid IN (SELECT seq FROM deals INDEXED BY deals_by_assignee_created WHERE tenant_id = ? AND assigned_to = ?)`,
          match,
          lo,
          hi,
          tenantId,
          q.assignee,
        );
      } else {
        // A common term among the unassigned (a large set either way): walk them, probing the set of matches.
        total = count(
          `SELECT count(*) AS n FROM deals d INDEXED BY deals_by_assignee_created WHERE d.tenant_id = ?${filterSql} AND d.seq IN (${matching})`,
          tenantId,
          ...args,
          termOnly,
          lo,
          hi,
        );
      }
      if (offset >= total) return { seqs: [], total };
      // Rows walked in order before the page is full, if matches are spread evenly, against rows sorted.
      const walked = ((offset + q.size) * unsearchedTotal()) / total;
      if (walked < total) return { seqs: page(scan, [term]), total };
      return { seqs: pageOfSet("SELECT rowid AS seq FROM deals_fts WHERE deals_fts MATCH ? AND rowid BETWEEN ? AND ?", [match, lo, hi]), total };
    },
  };
}

export type DealsQuery = ReturnType<typeof createDealsQuery>;
