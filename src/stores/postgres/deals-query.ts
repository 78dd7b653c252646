import type { DealJoined } from "../../crm/deals-repo";
import type { DealSummaryQuery, DealsQuery, ListedSeqs, SummaryRow } from "../../crm/deals-query";
import type { DealListQuery } from "../../crm/model";
import { offsetOf } from "../../kernel/paging";
import type { Pg } from "./database";
import { type PostgresDealsPlan, costPlan } from "./deals-plan";
import { type DealsReads, type ListRequest, Params, describeRequest } from "./deals-list-request";
import { MAX_GRAM, searchPage } from "./deals-search-page";
import { summaryRows } from "./deals-summary";

/**
 * The deal list on PostgreSQL: the same answers as SQLite's (src/stores/sqlite/deals-query.ts).
 * Totals are sums of counters kept by triggers (51-deal-search.sql): deal_counts without a search,
 * deal_gram_counts and its pending rows not folded yet (search-fold.ts) for a term of one to three
 * characters; a longer term is counted and paged from one read of the trigram index's matches.
 * The page is walked along its order's index (testing each row) when the matches look dense
 * enough, within a budget, else the matches are collected (trigram index, or the rows within the
 * filters from the narrow deals_text_by_filters, schema 52) and sorted: `plan`'s choice
 * (deals-plan.ts: the server's cost rules, or a test's forced strategy). Stage order within
 * several stages goes stage by stage. Each answer carries its rows.
 *
 * The parts: deals-list-request.ts (one request's filters, order, counters and rows),
 * deals-search-page.ts (a search: one read, the index walk, collecting and sorting).
 */
export function createPostgresDealsQuery(pg: Pg, plan: PostgresDealsPlan = costPlan()) {
  const reads: DealsReads = { pg, plan };

  /** A page at any offset (the stage order takes its page from one stage after another). */
  async function listAt(tenantId: string, q: DealListQuery, offset: number, size: number): Promise<ListedSeqs> {
    if (q.stages !== null && q.stages.length === 0) return { seqs: [], total: 0 };
    const request = describeRequest(reads, tenantId, q, offset, size);
    if ((q.account ?? null) !== null || (q.contact ?? null) !== null) return recordDealsPage(request);
    if (q.search === null) return unsearchedPage(request);
    return searchPage(request, q.search);
  }

  /** Byte order, as the stage keys compare (COLLATE "C"). */
  const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

  /**
   * Stage order within several stages: the page is taken from one stage after another (each
   * stage's rows are one range of the stage index, in id order), its offset found from the
   * stages' totals (counters). PostgreSQL 15 cannot read `stage = ANY(...)` from an index in
   * order: it would read every row of those stages and sort them. A term longer than a gram has
   * no per-stage counters: it is listed as any other search (deals-search-page.ts).
   */
  async function byStages(tenantId: string, q: DealListQuery, stages: string[]): Promise<ListedSeqs> {
    const p = new Params();
    const where = `tenant_id = ${p.add(tenantId)} AND stage = ANY(${p.add(stages)}::text[])`;
    const perStage = await pg.unsafe<{ stage: string; n: number }>(
      q.search === null
        ? `SELECT stage, sum(n)::bigint AS n FROM deal_counts WHERE ${where} AND assignee = ${p.add(q.assignee ?? "*")} GROUP BY stage`
        : gramsByStage(where, p.add(q.search.toLowerCase()), q.assignee === null ? "" : ` AND assignee = ${p.add(q.assignee)}`),
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
      const ofRecord = (q.account ?? null) !== null || (q.contact ?? null) !== null;
      if (!ofRecord && q.sortBy === "stage" && stages.length > 1 && termLength <= MAX_GRAM) return byStages(tenantId, q, stages);
      return listAt(tenantId, q, offsetOf(q.page, q.size), q.size);
    },
    summary: (tenantId: string, q: DealSummaryQuery): Promise<SummaryRow[]> => summaryRows(pg, tenantId, q),
  };
  return store satisfies DealsQuery;
}

/** A gram's matches by stage: its counters and its pending rows not folded yet (search-fold.ts), in one statement. */
const gramsByStage = (where: string, gram: string, assignee: string): string =>
  `SELECT stage, sum(n)::bigint AS n FROM (
     SELECT stage, n FROM deal_gram_counts WHERE ${where} AND gram = ${gram}${assignee}
     UNION ALL
     SELECT stage, sign AS n FROM deal_search_pending WHERE ${where} AND strpos(search_text, ${gram}) > 0${assignee}) x GROUP BY stage`;

/** A list without a search: its total a sum of deal_counts rows, its page one walk of the order's index (an assignee's key range sought). */
async function unsearchedPage(r: ListRequest): Promise<ListedSeqs> {
  const total = await r.countsOf(r.q.assignee, true);
  if (r.offset >= total) return { seqs: [], total };
  const p = r.withTenant();
  const range = await r.assigneeRange(p);
  const page = await r.rowsOf(
    `SELECT d.id FROM deals d WHERE d.tenant_id = $1${range === null ? r.filters(p) : range + r.stageFilter(p)} ORDER BY ${r.orderBy} LIMIT ${p.add(r.size)} OFFSET ${p.add(r.offset)}`,
    p,
  );
  return { ...page, total };
}

/**
 * The deals of one account or contact (their pages' lists): the record's range of its index
 * (deals_by_account_id / deals_by_contact_id), the other filters and the search tested on each of
 * its rows, counted exactly and sorted for the page. A record's deals are few next to the
 * tenant's: no counter or walk is needed.
 */
async function recordDealsPage(r: ListRequest): Promise<ListedSeqs> {
  const where = (p: Params): string => {
    let w = "";
    if ((r.q.account ?? null) !== null) w += ` AND d.account_id = ${p.add(r.q.account!)}`;
    if ((r.q.contact ?? null) !== null) w += ` AND d.contact_id = ${p.add(r.q.contact!)}`;
    if (r.q.search !== null) w += ` AND strpos(d.search_text, ${p.add(r.q.search.toLowerCase())}) > 0`;
    return w + r.filters(p);
  };
  const c = r.withTenant();
  const total = await r.number(`SELECT count(*)::bigint AS n FROM deals d WHERE d.tenant_id = $1${where(c)}`, c);
  if (r.offset >= total) return { seqs: [], total };
  const p = r.withTenant();
  const page = await r.rowsOf(`SELECT d.id FROM deals d WHERE d.tenant_id = $1${where(p)} ORDER BY ${r.orderBy} LIMIT ${p.add(r.size)} OFFSET ${p.add(r.offset)}`, p);
  return { ...page, total };
}

export type PostgresDealsQuery = ReturnType<typeof createPostgresDealsQuery>;
