import type { DealJoined } from "../../crm/deals-repo";
import { DEAL_COLUMNS, SORT_COLUMN } from "../../crm/deal-columns";
import type { DealsQuery, ListedSeqs } from "../../crm/deals-query";
import type { DealListQuery } from "../../crm/model";
import { offsetOf } from "../../kernel/paging";
import type { Pg } from "./database";

/** Terms up to this many characters are one gram of deal_gram_counts: their totals are sums of counters. */
const MAX_GRAM = 3;
/**
 * Index entries a search page may walk along its order before it gives up and collects the
 * matches instead. A walk is chosen when the matches look dense enough to fill the page early;
 * matches cluster along an order (a term in titles, in title order), so the walk is capped.
 */
const WALK_BUDGET = 6_000;

/** A LIKE pattern matching `term` anywhere, its wildcards taken literally (LIKE's default escape is \). */
const containing = (term: string): string => `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

const dealColumns = (alias: string) =>
  DEAL_COLUMNS.split(",")
    .map((c) => `${alias}.${c.trim()}`)
    .join(", ");
const ROW_COLUMNS = dealColumns("d");

type Arg = string | number | string[];

/**
 * The tenant filter of a statement the trigram index serves: that index (deals_search_by_tenant,
 * schema 52) holds the tenant and the stage beside the trigrams, so the three are one index scan.
 */
const TRIGRAM_TENANT = "d.tenant_id = $1";

/** One statement's parameters: each placeholder is added as the SQL text names it, so none is left unused. */
class Params {
  readonly list: Arg[] = [];
  add(v: Arg): string {
    this.list.push(v);
    return `$${this.list.length}`;
  }
}

/**
 * The deal list on PostgreSQL: the same answers as SQLite's (src/stores/sqlite/deals-query.ts).
 * Totals are sums of counters kept by triggers (51-deal-search.sql): deal_counts without a search,
 * deal_gram_counts for a term of one to three characters; a longer term is counted and paged from
 * one read of the trigram index's matches. The page is walked along its order's index (testing
 * each row) when the matches look dense enough, within a budget, else the matches are collected
 * (trigram index, or the rows within the filters from the narrow deals_text_by_filters, schema
 * 52) and sorted. Stage order within several stages goes stage by stage. Each answer carries its rows.
 */
export function createPostgresDealsQuery(
  pg: Pg,
  opts: { walkBudget?: number; pageBy?: "cost" | "walk" | "collect"; collectBy?: "cost" | "trigrams" | "filters" } = {},
) {
  const collectBy = opts.collectBy ?? "cost";
  const walkBudget = opts.walkBudget ?? WALK_BUDGET;
  const pageBy = opts.pageBy ?? "cost";
  const number = async (sql: string, p: Params): Promise<number> => Number((await pg.unsafe<{ n: number }>(sql, p.list))[0]?.n ?? 0);
  const withTenant = (tenantId: string): Params => {
    const p = new Params();
    p.add(tenantId);
    return p;
  };

  /** A page at any offset (the stage order takes its page from one stage after another). */
  async function listAt(tenantId: string, q: DealListQuery, offset: number, size: number): Promise<ListedSeqs> {
    if (q.stages !== null && q.stages.length === 0) return { seqs: [], total: 0 };
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
      const p = withTenant(tenantId);
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
    const filtered = q.stages !== null || q.assignee !== null;

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

    if (q.search === null) {
      const total = await countsOf(q.assignee, true);
      if (offset >= total) return { seqs: [], total };
      const p = withTenant(tenantId);
      const range = await assigneeRange(p);
      const page = await rowsOf(`SELECT d.id FROM deals d WHERE d.tenant_id = $1${range === null ? filters(p) : range + stageFilter(p)} ORDER BY ${orderBy} LIMIT ${p.add(size)} OFFSET ${p.add(offset)}`, p);
      return { ...page, total };
    }

    const term = q.search.toLowerCase();
    const length = [...term].length;
    /** The row test of a walk (row by row); the collecting test, which the trigram index serves from three characters. */
    const test = (p: Params) => `strpos(d.search_text, ${p.add(term)}) > 0`;
    const collectTest = (p: Params) => (length >= 3 ? `d.search_text LIKE ${p.add(containing(term))}` : test(p));
    if (length > MAX_GRAM && pageBy !== "walk") {
      // Counted and paged from ONE read of the trigram matches (they are few for such a term):
      // counting them, then collecting them again for the page, read the same rows twice.
      const p = withTenant(tenantId);
      const rows = await pg.unsafe<DealJoined & { total_: number }>(
        `WITH m AS MATERIALIZED (SELECT d.id, d.${column} FROM deals d WHERE ${TRIGRAM_TENANT}${filters(p)} AND ${collectTest(p)}),
           k AS (SELECT d.id FROM m d ORDER BY ${orderBy} LIMIT ${p.add(size)} OFFSET ${p.add(offset)})
         SELECT (SELECT count(*) FROM m)::bigint AS total_, ${ROW_COLUMNS}
         FROM (SELECT 1) one LEFT JOIN (k JOIN deals d ON d.tenant_id = $1 AND d.id = k.id) ON true ORDER BY ${orderBy}`,
        p.list,
      );
      const total = Number(rows[0]?.total_ ?? 0);
      const found = rows.filter((r) => r.seq !== null).map(({ total_, ...r }) => r as DealJoined);
      return { seqs: found.map((r) => r.seq), rows: found, total };
    }
    let total: number;
    if (length <= MAX_GRAM) {
      const p = withTenant(tenantId);
      total = await number(`SELECT coalesce(sum(n), 0)::bigint AS n FROM deal_gram_counts WHERE tenant_id = $1 AND gram = ${p.add(term)}${counterFilters(p, null)}`, p);
    } else {
      const p = withTenant(tenantId);
      total = await number(`SELECT count(*)::bigint AS n FROM deals d WHERE ${TRIGRAM_TENANT}${filters(p)} AND ${collectTest(p)}`, p);
    }
    if (offset >= total) return { seqs: [], total };
    const wanted = Math.min(total, offset + size);

    // Walk the order, or collect the matches and sort them? A walk reads about `among / total`
    // index entries per match found (among: the rows its index yields; the creation order's
    // stage and assignee indexes, and the stage order's, yield only the filtered rows). Collecting
    // reads the candidates: the trigram index's matches, or for a short term the assignee's rows
    // (its index), else every row of the tenant.
    // The counters the choice needs, in one read: the tenant's deals, those within the filters,
    // the assignee's (any stage) and the stages' (any assignee).
    const c = withTenant(tenantId);
    const inStages = q.stages === null ? "true" : `stage = ANY(${c.add(q.stages)}::text[])`;
    const who = c.add(q.assignee ?? "*");
    const [counts] = await pg.unsafe<{ tenant: number; within: number; assignee: number; stages: number }>(
      `SELECT coalesce(sum(n) FILTER (WHERE assignee = '*'), 0)::bigint AS tenant,
              coalesce(sum(n) FILTER (WHERE assignee = ${who} AND ${inStages}), 0)::bigint AS within,
              coalesce(sum(n) FILTER (WHERE assignee = ${who}), 0)::bigint AS assignee,
              coalesce(sum(n) FILTER (WHERE assignee = '*' AND ${inStages}), 0)::bigint AS stages
       FROM deal_counts WHERE tenant_id = $1`,
      c.list,
    );
    const tenantTotal = Number(counts!.tenant);
    const unsearched = Number(counts!.within);
    const oneStage = q.stages === null || q.stages.length === 1;
    const served =
      (q.sortBy === "created_at" && (q.stages === null || (q.stages.length === 1 && q.assignee === null))) ||
      (q.sortBy === "stage" && q.assignee === null && oneStage) ||
      (q.sortBy === "assignee_name" && q.assignee === "" && q.stages === null);
    // Assignee order under an assignee filter: that assignee's key range is walked (assigneeRange).
    const keyed = q.sortBy === "assignee_name" && q.assignee !== null;
    // Stage order within one stage and an assignee: that stage's range is walked, the assignee tested.
    const staged = q.sortBy === "stage" && q.stages !== null && q.stages.length === 1 && q.assignee !== null;
    const among = keyed ? Number(counts!.assignee) : staged ? Number(counts!.stages) : served && filtered ? unsearched : tenantTotal;
    const expected = (wanted * among) / total;
    // Collecting costs, in row visits: the trigram index's matches (each a visit, in every
    // tenant: the tenant is tested on the row), or the rows within the filters read from the
    // narrow index deals_text_by_filters alone (about a quarter of a visit each), plus a visit
    // to each match for its sort key (none for title, account and contact: in the index).
    const trigramRows = length >= 3 ? (total * tenantTotal) / Math.max(1, unsearched) : Number.POSITIVE_INFINITY;
    // The sort keys the narrow index holds (the orders a term clusters in): no visit for those.
    const inIndex = ["title_key", "account_key", "contact_key"].includes(column);
    const filterCost = unsearched / 4 + (inIndex ? 0 : total);
    const byTrigrams = length >= 3 && (collectBy === "cost" ? trigramRows < filterCost : collectBy === "trigrams");
    const candidates = Math.min(trigramRows, filterCost);
    if (pageBy === "walk" || (pageBy === "cost" && expected <= candidates)) {
      const p = withTenant(tenantId);
      const budget = pageBy === "walk" ? Number.MAX_SAFE_INTEGER : Math.ceil(Math.max(walkBudget, 3 * expected));
      // The budget counts index entries walked: filters the order's index does not serve are part
      // of the row test (in WHERE, the walk would skip unmatched entries unbudgeted: unassigned
      // deals sorted by assignee come after every assigned one).
      const range = keyed ? await assigneeRange(p) : null;
      const walkFilters = range !== null ? range : staged ? stageFilter(p) : served ? filters(p) : "";
      const rowTest =
        range !== null ? `(${test(p)}${stageFilter(p)})` : staged ? `(${test(p)}${assigneeFilter(p)})` : served ? test(p) : `(${test(p)}${filters(p)})`;
      const found = await pg.unsafe<{ id: string }>(
        `SELECT id FROM (SELECT d.id, ${rowTest} AS ok FROM deals d WHERE d.tenant_id = $1${walkFilters} ORDER BY ${orderBy} LIMIT ${p.add(budget)}) w WHERE ok LIMIT ${p.add(wanted)}`,
        p.list,
      );
      if (found.length >= wanted) {
        const ids = withTenant(tenantId);
        return { ...(await rowsOf(`SELECT unnest(${ids.add(found.slice(offset).map((r) => r.id))}::text[]) AS id`, ids)), total };
      }
    }
    // Collected first (MATERIALIZED: the planner may not turn it back into a walk), then sorted.
    const p = withTenant(tenantId);
    if (byTrigrams) {
      const page = await rowsOf(
        `WITH m AS MATERIALIZED (SELECT d.id, d.${column} FROM deals d WHERE ${TRIGRAM_TENANT}${filters(p)} AND ${collectTest(p)})
         SELECT d.id FROM m d ORDER BY ${orderBy} LIMIT ${p.add(size)} OFFSET ${p.add(offset)}`,
        p,
      );
      return { ...page, total };
    }
    // From deals_text_by_filters alone (tenant, stage, assignee: every stage's range when no
    // stage is chosen), then a visit to each match for its sort key.
    const stages = q.stages === null ? `ARRAY(SELECT stage FROM deal_counts WHERE tenant_id = $1 AND assignee = '*')` : `${p.add(q.stages)}::text[]`;
    const assignee = q.assignee === "" ? " AND d.assigned_to IS NULL" : q.assignee !== null ? ` AND d.assigned_to = ${p.add(q.assignee)}` : "";
    const page = await rowsOf(
      `WITH f AS MATERIALIZED (SELECT d.id${inIndex ? `, d.${column}` : ""} FROM deals d WHERE d.tenant_id = $1 AND d.stage = ANY(${stages})${assignee} AND ${test(p)}),
            m AS MATERIALIZED (${inIndex ? "SELECT * FROM f" : `SELECT d.id, d.${column} FROM f JOIN deals d ON d.tenant_id = $1 AND d.id = f.id`})
       SELECT d.id FROM m d ORDER BY ${orderBy} LIMIT ${p.add(size)} OFFSET ${p.add(offset)}`,
      p,
    );
    return { ...page, total };
  }

  /** Byte order, as the stage keys compare (COLLATE "C"). */
  const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

  /**
   * Stage order within several stages: the page is taken from one stage after another (each
   * stage's rows are one range of the stage index, in id order), its offset found from the
   * stages' totals (counters). PostgreSQL 15 cannot read `stage = ANY(...)` from an index in
   * order: it would read every row of those stages and sort them.
   */
  async function byStages(tenantId: string, q: DealListQuery, stages: string[]): Promise<ListedSeqs> {
    const p = new Params();
    const where = `tenant_id = ${p.add(tenantId)} AND stage = ANY(${p.add(stages)}::text[])`;
    const perStage = await pg.unsafe<{ stage: string; n: number }>(
      q.search === null
        ? `SELECT stage, sum(n)::bigint AS n FROM deal_counts WHERE ${where} AND assignee = ${p.add(q.assignee ?? "*")} GROUP BY stage`
        : `SELECT stage, sum(n)::bigint AS n FROM deal_gram_counts WHERE ${where} AND gram = ${p.add(q.search.toLowerCase())}${q.assignee === null ? "" : ` AND assignee = ${p.add(q.assignee)}`} GROUP BY stage`,
      p.list,
    );
    const totals = new Map(perStage.map((r) => [r.stage, Number(r.n)]));
    const total = [...totals.values()].reduce((a, b) => a + b, 0);
    const ordered = [...new Set(stages)].sort(byteOrder);
    if (q.sortDir === "desc") ordered.reverse();
    let skip = offsetOf(q.page, q.size);
    let need = q.size;
    const seqs: number[] = [];
    const rows: DealJoined[] = [];
    for (const stage of ordered) {
      const n = totals.get(stage) ?? 0;
      if (need === 0) break;
      if (skip >= n) {
        skip -= n;
        continue;
      }
      const part = await listAt(tenantId, { ...q, stages: [stage] }, skip, Math.min(need, n - skip));
      seqs.push(...part.seqs);
      rows.push(...(part.rows ?? []));
      need -= part.seqs.length;
      skip = 0;
    }
    return { seqs, rows, total };
  }

  const store = {
    async list(tenantId: string, q: DealListQuery): Promise<ListedSeqs> {
      const stages = q.stages === null ? [] : [...new Set(q.stages)];
      const termLength = q.search === null ? 0 : [...q.search.toLowerCase()].length;
      if (q.sortBy === "stage" && stages.length > 1 && termLength <= MAX_GRAM) return byStages(tenantId, q, stages);
      return listAt(tenantId, q, offsetOf(q.page, q.size), q.size);
    },
  };
  return store satisfies DealsQuery;
}

export type PostgresDealsQuery = ReturnType<typeof createPostgresDealsQuery>;
