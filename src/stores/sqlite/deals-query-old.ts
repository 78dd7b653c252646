import type { DealsQuery, ListedSeqs } from "../../crm/deals-query";
import type { Statement } from "bun:sqlite";
import type { Db } from "../../db/database";
import { offsetOf } from "../../http/paging";
import { type DealJoined } from "../../crm/deals-repo";
import { DEAL_COLUMNS, TENANT_SPAN } from "./deals";
import type { DealListQuery, SortField } from "../../crm/model";

/** Below this many characters trigrams cannot match: the search reads the rows instead. */
const MIN_FTS_TERM = 3;
/** A term with fewer matches than this in a tenant is rare: its rows are looked up one by one. */
const RARE = 10_000;
/** Index entries walked (each tested against a set of matches) that cost as much as one row looked up. */
const WALK_STEP_COST = 1 / 10;
/**
 * Rows a page may read walking an order's index before it gives up and sorts the matches instead:
 * matches are seldom spread evenly along an order (a term in a title clusters in title order), so a
 * walk that looked short can read the whole tenant. Capped, a wrong guess costs a few milliseconds.
 */
const WALK_BUDGET = 8_000;

/** The one trigram deals_fts holds in unassigned_token for a deal nobody is assigned to (schema.sql, version 10). */
const UNASSIGNED_TOKEN = "\x01-\x01";

/** A GLOB pattern matching `term` anywhere, its wildcards taken literally. */
const globContaining = (term: string): string => `*${term.replace(/[*?[]/g, (c) => `[${c}]`)}*`;

/** The trigrams the search index holds for a stage ("\x01ne", "new", "ew\x01" for "new"). */
const stageTrigrams = (stage: string): string[] => {
  const c = [...`\x01${stage}\x01`];
  return c.slice(2).map((_, i) => c[i]! + c[i + 1]! + c[i + 2]!);
};

/**
 * Sort key column of each sortable field; the nullable ones sort nulls last both ways. Exported:
 * the CSV export (transfer-repo.ts) walks the same orders, so the two can never sort differently.
 */
export const SORT_COLUMN: Record<SortField, { column: string; nullable: boolean }> = {
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

/**
 * Pages up to this deep without a search are read with their rows in one statement (the order's
 * index, then each of the page's rows): about 40 µs less than rowids first and rows by rowid after,
 * a fifth of the default list's server time. Deeper, the rowids-first read wins: the direct read
 * looks up the row of every entry it skips.
 */
const DIRECT_PAGE_DEPTH = 100;

/**
 * The deal list's SQL. Totals come from the deal_counts table when there is no search (a sum of
 * a few rows), else from the trigram index limited to the tenant's rowid range, or for a term too
 * short for trigrams from a narrow (seq, stage, assignee, text) index read in that range. The page
 * is read from the index of the requested order; a search either walks that order testing each
 * row (when matches are dense, the first page is near), with a budget, or sorts the matching rows
 * (when rare, or when the walk ran out of budget). Statements are prepared once per shape and kept.
 */
export function createSqliteDealsQuery(
  db: Db,
  opts: { rare?: number; pageBy?: "cost" | "walk" | "sort"; walkBudget?: number; unassignedBy?: "token" | "walk" } = {},
) {
  const rare = opts.rare ?? RARE;
  const unassignedBy = opts.unassignedBy ?? "token";
  const pageBy = opts.pageBy ?? "cost";
  const walkBudget = opts.walkBudget ?? WALK_BUDGET;
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
  // Every stage a deal of the tenant has (or had): deal_counts keeps a row per stage ever used.
  const stagesUsed = db.prepare<{ stage: string }, [string]>("SELECT DISTINCT stage FROM deal_counts WHERE tenant_id = ?1 AND assignee = '*'");

  /**
   * The index query for "within these stages": for each stage, one of its trigrams that no other
   * stage the tenant's deals use has (one token: about half the cost of matching the whole key,
   * a phrase of several tokens), else its whole key.
   */
  function stageMatch(tenantId: string, stages: string[]): string {
    const wanted = new Set(stages);
    const others = new Set(stagesUsed.all(tenantId).flatMap((r) => (wanted.has(r.stage) ? [] : stageTrigrams(r.stage))));
    const tokens = stages.map((s) => stageTrigrams(s).find((x) => !others.has(x)) ?? `\x01${s}\x01`);
    return ` AND stage_token : (${tokens.map(ftsPhrase).join(" OR ")})`;
  }

  const store = {
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
      const seqsOf = (rows: unknown): number[] => (rows as number[][]).map((r) => r[0]!);
      /** A page walked along the order's index, keeping the rows the filters accept. */
      const page = (): number[] =>
        seqsOf(stmt(`SELECT d.seq FROM deals d WHERE d.tenant_id = ?${filterSql} ORDER BY ${orderBy} LIMIT ? OFFSET ?`).values(tenantId, ...args, q.size, offset));
      /**
       * The first `offset + size` of the order's first `budget` index entries that `test` accepts
       * (the subquery's LIMIT stops the walk), sliced to the page; null when the walk ran out of
       * budget before it found them.
       */
      const budgetedWalk = (test: string, testArgs: Array<string | number>, total: number, budget: number, filtered = true): number[] | null => {
        const wanted = Math.min(total, offset + q.size);
        // Where an index serves the filters (filtersServed) they select the entries walked; in any
        // other order they are part of the test, and every entry walked counts against the budget.
        const served = filtered && filtersServed;
        const tested = filtered && !filtersServed;
        const found = seqsOf(
          stmt(
            `SELECT seq FROM (SELECT d.seq AS seq, (${test}${tested ? filterSql : ""}) AS ok FROM deals d WHERE d.tenant_id = ?${served ? filterSql : ""} ORDER BY ${orderBy} LIMIT ?) WHERE ok LIMIT ?`,
          ).values(...testArgs, ...(tested ? args : []), tenantId, ...(served ? args : []), Math.ceil(Math.min(budget, Number.MAX_SAFE_INTEGER)), wanted),
        );
        return found.length < wanted ? null : found.slice(offset);
      };
      // Indexes lead with the assignee or the stage before the creation time, and the stage order is
      // the stage index itself (walked one requested stage after another).
      const filtersServed = q.sortBy === "created_at" || (q.sortBy === "stage" && q.assignee === null);
      /** Index entries walked in order before the page is full, if the `total` matches were spread evenly. */
      const expectedEntries = (total: number): number => expectedWalk(total, filtersServed ? unsearchedTotal() : tenantTotal());
      /** Rows walked in order before the page is full, if the `total` matches were spread evenly. */
      const expectedWalk = (total: number, among: number): number => ((offset + q.size) * among) / total;
      /**
       * A page of a set of rowids: each is looked up, then the few are sorted. CROSS JOIN pins that
       * order, which the planner, without statistics, may otherwise turn into a walk of the whole index.
       */
      const pageOfSet = (set: string, setArgs: Array<string | number>): number[] =>
        seqsOf(
          stmt(
            `SELECT d.seq FROM (${set}) m CROSS JOIN deals d ON d.seq = m.seq WHERE d.tenant_id = ?${filterSql} ORDER BY ${orderBy} LIMIT ? OFFSET ?`,
          ).values(...setArgs, tenantId, ...args, q.size, offset),
        );

      if (q.search === null) {
        const total = unsearchedTotal();
        if (offset >= total) return { seqs: [], total };
        if (offset >= DIRECT_PAGE_DEPTH) return { seqs: page(), total };
        const rows = stmt(`SELECT ${DEAL_COLUMNS} FROM deals d WHERE d.tenant_id = ?${filterSql} ORDER BY ${orderBy} LIMIT ? OFFSET ?`).all(
          tenantId,
          ...args,
          q.size,
          offset,
        ) as DealJoined[];
        return { seqs: rows.map((r) => r.seq), total, rows };
      }

      const term = q.search.toLowerCase();
      /** The walk's test of a row (the filters are the walk's own). */
      const rowTest = "instr(d.search_text, ?) > 0";
      /** The page of a search with `total` matches: a budgeted walk when they look dense enough, else `sorted`. */
      const searchPage = (total: number, sorted: () => number[]): number[] => {
        if (pageBy === "sort") return sorted();
        if (pageBy === "walk" || expectedEntries(total) * 3 <= walkBudget) {
          const walked = budgetedWalk(rowTest, [term], total, pageBy === "walk" ? Number.MAX_SAFE_INTEGER : walkBudget);
          if (walked) return walked;
        }
        return sorted();
      };

      if ([...term].length < MIN_FTS_TERM) {
        // Too short for trigrams: the narrow (seq, stage, assignee, text) index is read in the
        // tenant's rowid range, in order (a sequential read, not a lookup per row).
        const matching = `SELECT d.seq FROM deals d INDEXED BY deals_text_by_seq WHERE d.seq BETWEEN ? AND ? AND d.search_text GLOB ?${filterSql}`;
        const matchArgs = [lo, hi, globContaining(term), ...args];
        const total = (stmt(`SELECT count(*) AS n FROM (${matching})`).get(...matchArgs) as { n: number }).n;
        if (offset >= total) return { seqs: [], total };
        return { seqs: searchPage(total, () => pageOfSet(matching, matchArgs)), total };
      }

      const termOnly = `search_text : ${ftsPhrase(term)}`;
      const matching = "SELECT rowid FROM deals_fts WHERE deals_fts MATCH ? AND rowid BETWEEN ? AND ?";
      const count = (sql: string, ...a: Array<string | number>) => (stmt(sql).get(...a) as { n: number }).n;
      // How common is the term? Reading at most RARE matches costs little either way, and a rare
      // term's matches are all there is to filter, count and sort: the index is read once.
      const hits = seqsOf(stmt(`${matching} LIMIT ?`).values(termOnly, lo, hi, rare));
      if (hits.length < rare) {
        // Filters read the narrow (seq, stage, assigned_to, ...) index, not the rows; every hit is in the tenant's range.
        const found =
          where.length === 0
            ? hits
            : seqsOf(
                stmt(`SELECT d.seq FROM json_each(?) m CROSS JOIN deals d INDEXED BY deals_text_by_seq ON d.seq = m.value WHERE 1${filterSql}`).values(
                  JSON.stringify(hits),
                  ...args,
                ),
              );
        const total = found.length;
        if (offset >= total) return { seqs: [], total };
        const set = JSON.stringify(found);
        const sorted = () => pageOfSet("SELECT value AS seq FROM json_each(?)", [set]);
        // Either look up every match and sort them (a random read each), or walk the order's index
        // from its start testing each entry against the set (no row read), whichever costs less;
        // the walk within a budget, since matches can cluster far along the order.
        const walkedEntries = expectedWalk(total, tenantTotal());
        if (pageBy === "sort") return { seqs: sorted(), total };
        if (pageBy === "walk" || walkedEntries * WALK_STEP_COST < total) {
          const budget = pageBy === "walk" ? Number.MAX_SAFE_INTEGER : Math.max(4 * walkedEntries, walkBudget / WALK_STEP_COST);
          const walked = budgetedWalk("d.seq IN (SELECT value FROM json_each(?))", [set], total, budget, false);
          if (walked) return { seqs: walked, total };
        }
        return { seqs: sorted(), total };
      }
      // Stages are matched inside the index (stage_token), and so is "unassigned" (unassigned_token,
      // migration 10): no row is read to filter them.
      const match =
        termOnly + (q.stages !== null ? stageMatch(tenantId, q.stages) : "") + (q.assignee === "" && unassignedBy === "token" ? ` AND unassigned_token : ${ftsPhrase(UNASSIGNED_TOKEN)}` : "");
      // The matches within the filters, as a set of rowids (counted, or sorted for the page).
      let set: string;
      let setArgs: Array<string | number>;
      if (q.assignee === null || (q.assignee === "" && unassignedBy === "token")) {
        [set, setArgs] = [`${matching.replace("rowid", "rowid AS seq")}`, [match, lo, hi]];
      } else if (q.assignee !== "") {
        // A common term for one user: the index's matches (within the stages) are tested against
        // the user's few deals, read once from the assignee index (ion/mine: 49 -> 28 ms at 1M).
        set = `SELECT rowid AS seq FROM deals_fts WHERE deals_fts MATCH ? AND rowid BETWEEN ? AND ?
             AND +rowid IN (SELECT seq FROM deals INDEXED BY deals_by_assignee_created WHERE tenant_id = ? AND assigned_to = ?)`;
        setArgs = [match, lo, hi, tenantId, q.assignee];
      } else {
        // The plain path the token replaced (kept for the tests to compare): walk the unassigned deals, probing the set of matches.
        set = `SELECT d.seq FROM deals d INDEXED BY deals_by_assignee_created WHERE d.tenant_id = ?${filterSql} AND d.seq IN (${matching})`;
        setArgs = [tenantId, ...args, termOnly, lo, hi];
      }
      const total = count(`SELECT count(*) AS n FROM (${set})`, ...setArgs);
      if (offset >= total) return { seqs: [], total };
      return { seqs: searchPage(total, () => pageOfSet(set, setArgs)), total };
    },
  };
  return store satisfies DealsQuery;
}

export type SqliteDealsQuery = ReturnType<typeof createSqliteDealsQuery>;
