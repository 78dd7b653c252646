import type { DealsQuery, ListedSeqs } from "../../crm/deals-query";
import type { Statement } from "bun:sqlite";
import type { Db } from "../../db/database";
import { offsetOf } from "../../kernel/paging";
import { type DealJoined } from "../../crm/deals-repo";
import { DEAL_COLUMNS, SORT_COLUMN, TENANT_SPAN } from "../../crm/deal-columns";
import { stagesJoiner } from "./deals";
import { readTx } from "./read-tx";
import { createTextWalk, isBucketedOrder } from "./deals-text-walk";
import { MIN_FTS_TERM, UNASSIGNED_TOKEN, createSearchTerms, ftsPhrase, globContaining } from "./deals-search-terms";

import type { DealListQuery } from "../../crm/model";

/** A term with fewer matches than this in a tenant is rare: its rows are looked up one by one. */
const RARE = 10_000;
/** Index entries walked (each tested against a set of matches) that cost as much as one row looked up. */
const WALK_STEP_COST = 1 / 10;
/** An index entry walked and its filters tested on it, without its row: about a twentieth of a row read (0.09 µs a step against 2.3 µs a sorted match, 1M deals). */
const INDEX_STEP = 1 / 20;
/**
 * Rows a page may read walking an order's index before it gives up and sorts the matches instead:
 * matches are seldom spread evenly along an order (a term in a title clusters in title order), so a
 * walk that looked short can read the whole tenant. Capped, a wrong guess costs a few milliseconds.
 */
const WALK_BUDGET = 8_000;

/**
 * A listed deal's columns, read by rowid (`r`) after the page's rowids were walked along the
 * order's index (`p.page_seq`): one statement for a page at any depth. Skipped entries cost an
 * index step each, never a row read. CROSS JOIN keeps the walk outermost, so the rows come in its
 * order (tests/stores/deals-list.test.ts checks every order at several depths); an outer ORDER BY
 * would sort whole rows again, 5 µs. Issue 15: a page 100 to 200 deep took about 12 µs more as
 * rowids first and rows by rowid in a second statement.
 */
const PAGE_COLUMNS = DEAL_COLUMNS.split(",").map((c) => `r.${c.trim()}`).join(", ");

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
  opts: { rare?: number; pageBy?: "cost" | "walk" | "sort" | "buckets"; walkBudget?: number; unassignedBy?: "token" | "walk"; threeBy?: "counts" | "fts" } = {},
) {
  // threeBy "fts": a 3-letter term counted over the trigram index's matches, as before version 12 (kept for the tests and the probe to compare).
  const threeBy = opts.threeBy ?? "counts";
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
  const withStages = stagesJoiner(db);
  const walkBuckets = createTextWalk(stmt);
  // An assignee's sort key, as their deals carry it (NULL for a user without a full name).
  const assigneeKeyOf = db.prepare<{ assignee_key: string | null }, [string, string]>(
    "SELECT assignee_key FROM deals INDEXED BY deals_by_assignee_created WHERE tenant_id = ?1 AND assigned_to = ?2 LIMIT 1",
  );
  const { stageMatch, shortTermTotal } = createSearchTerms(db, stmt);

  function listNow(tenantId: string, q: DealListQuery): ListedSeqs {
    if (q.stages !== null && q.stages.length === 0) return { seqs: [], total: 0 };

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
    /**
     * The first `offset + size` of the order's first `budget` index entries that `test` accepts
     * (the subquery's LIMIT stops the walk), sliced to the page; null when the walk ran out of
     * budget before it found them.
     */
    const budgetedWalk = (test: string, testArgs: Array<string | number>, total: number, budget: number, filtered = true): number[] | null => {
      const wanted = Math.min(total, offset + q.size);
      // The filters an index serves select the entries walked (walk.served); the others are part
      // of the test (walk.tested), and every entry walked counts against the budget. The tested
      // filters come first (CASE): read from the index entry (each order's index holds the stage and
      // the assignee since version 13), they spare the row of every entry outside them.
      const w = filtered ? walk() : { served: "", servedArgs: [], tested: "", testedArgs: [], indexed: "", order: orderBy };
      const found = seqsOf(
        stmt(
          `SELECT seq FROM (SELECT d.seq AS seq, CASE WHEN 1${w.tested} THEN ${test} ELSE 0 END AS ok FROM deals d${w.indexed} WHERE d.tenant_id = ?${w.served} ORDER BY ${w.order ?? orderBy} LIMIT ?) WHERE ok LIMIT ?`,
        ).values(...w.testedArgs, ...testArgs, tenantId, ...w.servedArgs, Math.ceil(Math.min(budget, Number.MAX_SAFE_INTEGER)), wanted),
      );
      return found.length < wanted ? null : found.slice(offset);
    };
    const stageSql = q.stages !== null ? ` AND d.stage IN (${q.stages.map(() => "?").join(", ")})` : "";
    const assigneeSql = q.assignee === null ? "" : q.assignee === "" ? " AND d.assigned_to IS NULL" : " AND d.assigned_to = ?";
    const assigneeArgs = q.assignee === null || q.assignee === "" ? [] : [q.assignee];
    const countOf = (stages: string[] | null, assignee: string) =>
      (stmt(`SELECT coalesce(sum(n), 0) AS n FROM deal_counts WHERE tenant_id = ? AND assignee = ?${stages ? ` AND stage IN (${stages.map(() => "?").join(", ")})` : ""}`).get(
        tenantId,
        assignee,
        ...(stages ?? []),
      ) as { n: number }).n;
    /**
     * How a search walks the order's index: which filters the index serves (they select the
     * entries walked), which are tested on each entry, and how many entries the walk is among.
     * Creation order: the assignee and stage indexes lead with them. Stage order: the stage index,
     * one requested stage after another. Assignee order among the unassigned: their entries are
     * the index's tail (a NULL key sorts last both ways), sought directly instead of walked to.
     */
    const walk = () => {
      if (q.sortBy === "created_at")
        return { served: filterSql, servedArgs: args, tested: "", testedArgs: [], indexed: "", order: orderBy, among: () => unsearchedTotal() };
      if (q.sortBy === "stage" && q.stages !== null)
        return { served: stageSql, servedArgs: q.stages, tested: assigneeSql, testedArgs: assigneeArgs, indexed: "", order: orderBy, among: () => countOf(q.stages, "*") };
      // One assignee's entries share one key (the unassigned: NULL, last both ways): that range of
      // the assignee index is sought, ordered by key and id (SQLite sorts anew if the IS NULL term stays).
      // A user without a full name has a NULL key too: their range is the unassigned one, their
      // deals told apart by the tested assignee filter.
      if (q.sortBy === "assignee_name" && q.assignee !== null) {
        const nullKey = q.assignee === "" || assigneeKeyOf.get(tenantId, q.assignee)?.assignee_key === null;
        return {
          served:
            nullKey
              ? " AND (d.assignee_key IS NULL) = 1"
              : " AND (d.assignee_key IS NULL) = 0 AND d.assignee_key = (SELECT assignee_key FROM deals INDEXED BY deals_by_assignee_created WHERE tenant_id = ? AND assigned_to = ? LIMIT 1)",
          servedArgs: nullKey ? [] : [tenantId, q.assignee],
          tested: filterSql,
          testedArgs: args,
          indexed: ` INDEXED BY deals_by_assignee_${q.sortDir}`,
          order: `d.assignee_key ${dir}, d.id ${dir}`,
          among: () => countOf(null, q.assignee!),
        };
      }
      return { served: "", servedArgs: [], tested: filterSql, testedArgs: args, indexed: "", order: orderBy, among: () => tenantTotal() };
    };
    /** Index entries walked in order before the page is full, if the `total` matches were spread evenly. */
    const expectedEntries = (total: number): number => expectedWalk(total, walk().among());
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
      // Assignee order under an assignee filter: that assignee's range of the index is sought (as a
      // search walk does, see walk()) instead of walked to past every other assignee's deals.
      const seek = q.sortBy === "assignee_name" && q.assignee !== null ? walk() : null;
      // The tenant id, the size and the offset as `(SELECT ?)`: compared or limited by a bound value
      // directly, SQLite (as Bun builds it) plans the statement anew at every execution, about
      // 190,000 instructions of a 1M-instruction request (callgrind, issue 15); the same plan
      // either way (every sort and filter compared).
      const from = seek
        ? `deals d${seek.indexed} WHERE d.tenant_id = (SELECT ?)${seek.served}${filterSql} ORDER BY ${seek.order}`
        : `deals d WHERE d.tenant_id = (SELECT ?)${filterSql} ORDER BY ${orderBy}`;
      const fromArgs = seek ? [tenantId, ...seek.servedArgs, ...args] : [tenantId, ...args];
      const rows = stmt(
        `SELECT ${PAGE_COLUMNS} FROM (SELECT d.seq AS page_seq FROM ${from} LIMIT (SELECT ?) OFFSET (SELECT ?)) p CROSS JOIN deals r ON r.seq = p.page_seq`,
      ).all(...fromArgs, q.size, offset) as DealJoined[];
      // Their stage data too, in this read transaction: the store's withStages then reads nothing.
      return { seqs: rows.map((r) => r.seq), total, rows: withStages(tenantId, rows) };
    }

    // A search's matches are bounded by the tenant's rowid range (read here: a list without a
    // search does not need it, and each statement is about 1.5 µs of a request in the server).
    const t = tenantNo.get(tenantId);
    if (!t) return { seqs: [], total: 0 };
    const lo = t.tenant_no * TENANT_SPAN;
    const hi = lo + TENANT_SPAN - 1;
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

    /**
     * A term's matches within the filters, as a set of rowids (counted, or sorted for the page):
     * stages are matched inside the index (stage_token), and so is "unassigned" when
     * `unassignedToken` (unassigned_token, migration 10); one user's matches are the index's,
     * tested against the user's few deals read once from the assignee index (ion/mine: 49 -> 28
     * ms at 1M). Null for the unassigned without the token: the caller walks them.
     */
    const matchSet = (termOnly: string, unassignedToken: boolean): [string, Array<string | number>] | null => {
      const match =
        termOnly + (q.stages !== null ? stageMatch(tenantId, q.stages) : "") + (q.assignee === "" && unassignedToken ? ` AND unassigned_token : ${ftsPhrase(UNASSIGNED_TOKEN)}` : "");
      const matching = "SELECT rowid AS seq FROM deals_fts WHERE deals_fts MATCH ? AND rowid BETWEEN ? AND ?";
      if (q.assignee === null || (q.assignee === "" && unassignedToken)) return [matching, [match, lo, hi]];
      if (q.assignee === "") return null;
      return [`${matching} AND +rowid IN (SELECT seq FROM deals INDEXED BY deals_by_assignee_created WHERE tenant_id = ? AND assigned_to = ?)`, [match, lo, hi, tenantId, q.assignee]];
    };

    /**
     * A 3-letter term (schema version 12): its exact total within the filters is a sum of
     * deal_gram_counts rows, no match read. That total also gives the real density of matches
     * among the entries a walk of the order's index crosses, so walk and sort are chosen by their
     * expected cost: the walk reads about (offset + size) × among / total rows; sorting reads the
     * index's matches within the filters (a few bytes each) and looks up and sorts those rows.
     */
    function threeLetters(term: string, termOnly: string): ListedSeqs {
      const total = shortTermTotal(tenantId, term, q);
      if (offset >= total) return { seqs: [], total };
      const [set, setArgs] = matchSet(termOnly, true)!;
      const sorted = () => pageOfSet(set, setArgs);
      if (pageBy === "sort") return { seqs: sorted(), total };
      const entries = expectedEntries(total);
      // Sorting's cost, in entries walked (each a row looked up at random, about 2.8 µs of CPU at
      // 1M deals): each match within the filters looked up in rowid order and sorted (0.7), and the
      // index's matches of the term read to find them (0.015 each; 0.03 when each is also probed
      // against one user's deals).
      const termAll = shortTermTotal(tenantId, term, { ...q, stages: null, assignee: null });
      const sortCost = 0.7 * total + termAll * (q.assignee === null || q.assignee === "" ? 0.015 : 0.03);
      // A walk entry's cost (a row read is 1): the filters the order's index does not serve are
      // tested on the entry, and only the share of entries within them read their row.
      const w = walk();
      const entryCost = w.tested === "" ? 1 : INDEX_STEP + unsearchedTotal() / Math.max(1, w.among());
      // A text order (schema version 13): the walk crosses only the order's buckets where the term
      // occurs (deal_key_grams), planned from their counts, and sorts when that costs less.
      if (isBucketedOrder(q.sortBy) && pageBy !== "walk") {
        const walked = walkBuckets({
          tenantId,
          sortBy: q.sortBy,
          desc: q.sortDir === "desc",
          term,
          filterSql,
          filterArgs: args,
          offset,
          size: q.size,
          total,
          termAll,
          maxEntries: pageBy === "buckets" ? Number.POSITIVE_INFINITY : Math.min(opts.walkBudget ?? Number.MAX_SAFE_INTEGER, sortCost / entryCost),
        });
        // Forced and unbudgeted (the tests' "buckets"), the walk must answer on its own.
        if (!walked && pageBy === "buckets") throw new Error("the bucket walk gave up without a budget");
        return { seqs: walked ?? sorted(), total };
      }
      // Matches cluster along some orders (a term of the titles in title order), so a walk is tried
      // only when expected to cost under half of sorting, and gives up past twice its expected
      // length, or a quarter of what sorting costs up to 8,000 entries if that is more (clusters
      // a few thousand entries in are common: "ati" within two stages in title order, 4.7 ms
      // walked against 108 ms sorted); then the matches are sorted.
      if (pageBy === "walk" || 2 * entries * entryCost <= sortCost) {
        const budget =
          pageBy === "walk"
            ? Number.MAX_SAFE_INTEGER
            : Math.min(opts.walkBudget ?? Number.MAX_SAFE_INTEGER, sortCost / entryCost, Math.max(2 * entries, Math.min(8000, sortCost / 4) / entryCost));
        const walked = budgetedWalk(rowTest, [term], total, budget);
        if (walked) return { seqs: walked, total };
      }
      return { seqs: sorted(), total };
    }

    if ([...term].length < MIN_FTS_TERM) {
      // Too short for trigrams: the narrow (seq, stage, assignee, text) index is read in the
      // tenant's rowid range, in order (a sequential read, not a lookup per row).
      const matching = `SELECT d.seq FROM deals d INDEXED BY deals_text_by_seq WHERE d.seq BETWEEN ? AND ? AND d.search_text GLOB ?${filterSql}`;
      const matchArgs = [lo, hi, globContaining(term), ...args];
      // The exact total is a sum of deal_gram_counts rows (schema version 11), never a read of the text.
      const total = shortTermTotal(tenantId, term, q);
      if (offset >= total) return { seqs: [], total };
      // Sorted: one user's deals are read from the assignee index (thousands), not the tenant's text.
      const sorted =
        q.assignee !== null && q.assignee !== ""
          ? () =>
              pageOfSet(`SELECT seq FROM deals INDEXED BY deals_by_assignee_created WHERE tenant_id = ? AND assigned_to = ? AND instr(search_text, ?) > 0`, [
                tenantId,
                q.assignee!,
                term,
              ])
          : () => pageOfSet(matching, matchArgs);
      return { seqs: searchPage(total, sorted), total };
    }

    const termOnly = `search_text : ${ftsPhrase(term)}`;
    if (threeBy === "counts" && [...term].length === MIN_FTS_TERM) return threeLetters(term, termOnly);
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
    // A common term: its matches within the filters (matchSet), or for the unassigned without the
    // token the plain path it replaced (kept for the tests to compare): the unassigned deals walked, each probed against the matches.
    const [set, setArgs] = matchSet(termOnly, unassignedBy === "token") ?? [
      `SELECT d.seq FROM deals d INDEXED BY deals_by_assignee_created WHERE d.tenant_id = ?${filterSql} AND d.seq IN (${matching})`,
      [tenantId, ...args, termOnly, lo, hi],
    ];
    const total = count(`SELECT count(*) AS n FROM (${set})`, ...setArgs);
    if (offset >= total) return { seqs: [], total };
    return { seqs: searchPage(total, () => pageOfSet(set, setArgs)), total };
  }

  // The tenant's number, the total and the page (a search's several reads) in one read transaction.
  const read = readTx(db);
  const store = {
    list: async (tenantId: string, q: DealListQuery): Promise<ListedSeqs> => read(() => listNow(tenantId, q)),
  };
  return store satisfies DealsQuery;
}

export type SqliteDealsQuery = ReturnType<typeof createSqliteDealsQuery>;
