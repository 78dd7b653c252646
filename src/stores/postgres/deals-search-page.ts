import type { DealJoined } from "../../crm/deals-repo";
import type { ListedSeqs } from "../../crm/deals-query";
import type { ListRequest, Params } from "./deals-list-request";
import { ROW_COLUMNS } from "./deals-list-request";
import { costOfFilterCollect, costOfTrigramCollect, expectedWalk } from "./deals-plan";

/** Terms up to this many characters are one gram of deal_gram_counts: their totals are sums of counters. */
export const MAX_GRAM = 3;

/**
 * The tenant filter of a statement the trigram index serves: that index (deals_search_by_tenant,
 * schema 52) holds the tenant and the stage beside the trigrams, so the three are one index scan.
 */
const TRIGRAM_TENANT = "d.tenant_id = $1";

/** A LIKE pattern matching `term` anywhere, its wildcards taken literally (LIKE's default escape is \). */
export const containing = (term: string): string => `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** The term (lowercase); the row test of a walk (row by row); the collecting test, which the trigram index serves from three characters. */
function searchOf(term: string) {
  const length = [...term].length;
  const test = (p: Params) => `strpos(d.search_text, ${p.add(term)}) > 0`;
  return { term, length, test, collectTest: (p: Params) => (length >= 3 ? `d.search_text LIKE ${p.add(containing(term))}` : test(p)) };
}
type Search = ReturnType<typeof searchOf>;

/** A search's total and page: one read for a long term (when the plan says so), else counted, then walked or collected. */
export async function searchPage(r: ListRequest, search: string): Promise<ListedSeqs> {
  const s = searchOf(search.toLowerCase());
  if (s.length > MAX_GRAM && r.plan.longTermsInOneRead) return oneReadPage(r, s);
  const total = await totalOf(r, s);
  if (r.offset >= total) return { seqs: [], total };
  const wanted = Math.min(total, r.offset + r.size);
  const walk = await walkShape(r);
  // Collecting costs, in row visits (deals-plan.ts): the trigram index's matches, or the rows
  // within the filters read from the narrow index deals_text_by_filters.
  const sortKeyInIndex = ["title_key", "account_key", "contact_key"].includes(r.column);
  const choice = r.plan.page({
    walk: expectedWalk(wanted, walk.among, total),
    trigrams: costOfTrigramCollect(s.length, total, walk.tenantTotal, walk.unsearched),
    filters: costOfFilterCollect(walk.unsearched, total, sortKeyInIndex),
  });
  if (choice.walkBudget !== null) {
    const walked = await indexWalk(r, s, walk, choice.walkBudget, wanted);
    if (walked) return { ...walked, total };
  }
  // Collected first (MATERIALIZED: the planner may not turn it back into a walk), then sorted.
  const page = s.length >= 3 && choice.collectFrom === "trigrams" ? await collectFromTrigrams(r, s) : await collectFromFilters(r, s, sortKeyInIndex);
  return { ...page, total };
}

/**
 * A term longer than a gram: counted and paged from ONE read of the trigram matches (they are few
 * for such a term): counting them, then collecting them again for the page, read the same rows twice.
 */
async function oneReadPage(r: ListRequest, s: Search): Promise<ListedSeqs> {
  const p = r.withTenant();
  const rows = await r.pg.unsafe<DealJoined & { total_: number }>(
    `WITH m AS MATERIALIZED (SELECT d.id, d.${r.column} FROM deals d WHERE ${TRIGRAM_TENANT}${r.filters(p)} AND ${s.collectTest(p)}),
           k AS (SELECT d.id FROM m d ORDER BY ${r.orderBy} LIMIT ${p.add(r.size)} OFFSET ${p.add(r.offset)})
         SELECT (SELECT count(*) FROM m)::bigint AS total_, ${ROW_COLUMNS}
         FROM (SELECT 1) one LEFT JOIN (k JOIN deals d ON d.tenant_id = $1 AND d.id = k.id) ON true ORDER BY ${r.orderBy}`,
    p.list,
  );
  const total = Number(rows[0]?.total_ ?? 0);
  const found = rows.filter((x) => x.seq !== null).map(({ total_, ...x }) => x as DealJoined);
  return { seqs: found.map((x) => x.seq), rows: found, total };
}

/**
 * The matches within the filters: for a gram, a sum of deal_gram_counts rows and of the pending
 * rows not folded into them yet (search-fold.ts), in one statement (one snapshot); else a count of
 * the trigram index's matches.
 */
function totalOf(r: ListRequest, s: Search): Promise<number> {
  const p = r.withTenant();
  if (s.length <= MAX_GRAM) {
    const gram = p.add(s.term);
    const filters = r.counterFilters(p, null);
    return r.number(
      `SELECT ((SELECT coalesce(sum(n), 0) FROM deal_gram_counts WHERE tenant_id = $1 AND gram = ${gram}${filters})
             + (SELECT coalesce(sum(sign), 0) FROM deal_search_pending WHERE tenant_id = $1 AND strpos(search_text, ${gram}) > 0${filters}))::bigint AS n`,
      p,
    );
  }
  return r.number(`SELECT count(*)::bigint AS n FROM deals d WHERE ${TRIGRAM_TENANT}${r.filters(p)} AND ${s.collectTest(p)}`, p);
}

/**
 * Which filters the walked order's index serves, and how many entries a walk is among: the
 * creation order's stage and assignee indexes, and the stage order's, yield only the filtered
 * rows; assignee order under an assignee filter walks that assignee's key range (assigneeRange);
 * stage order within one stage and an assignee walks that stage's range, the assignee tested.
 * The counters it needs, in one read: the tenant's deals, those within the filters, the
 * assignee's (any stage) and the stages' (any assignee).
 */
async function walkShape(r: ListRequest) {
  const { q } = r;
  const c = r.withTenant();
  const inStages = q.stages === null ? "true" : `stage = ANY(${c.add(q.stages)}::text[])`;
  const who = c.add(q.assignee ?? "*");
  const [counts] = await r.pg.unsafe<{ tenant: number; within: number; assignee: number; stages: number }>(
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
  const keyed = q.sortBy === "assignee_name" && q.assignee !== null;
  const staged = q.sortBy === "stage" && q.stages !== null && q.stages.length === 1 && q.assignee !== null;
  const among = keyed ? Number(counts!.assignee) : staged ? Number(counts!.stages) : served && r.filtered ? unsearched : tenantTotal;
  return { served, keyed, staged, among, tenantTotal, unsearched };
}
type WalkShape = Awaited<ReturnType<typeof walkShape>>;

/**
 * Index walk: the order's index walked from its start, each row tested, until `wanted` matches
 * or `budget` entries; null when the budget ran out first. The budget counts index entries
 * walked: filters the order's index does not serve are part of the row test (in WHERE, the walk
 * would skip unmatched entries unbudgeted: unassigned deals sorted by assignee come after every
 * assigned one).
 */
async function indexWalk(r: ListRequest, s: Search, w: WalkShape, budget: number, wanted: number): Promise<{ seqs: number[]; rows: DealJoined[] } | null> {
  const p = r.withTenant();
  const range = w.keyed ? await r.assigneeRange(p) : null;
  const walkFilters = range !== null ? range : w.staged ? r.stageFilter(p) : w.served ? r.filters(p) : "";
  const rowTest =
    range !== null ? `(${s.test(p)}${r.stageFilter(p)})` : w.staged ? `(${s.test(p)}${r.assigneeFilter(p)})` : w.served ? s.test(p) : `(${s.test(p)}${r.filters(p)})`;
  const found = await r.pg.unsafe<{ id: string }>(
    `SELECT id FROM (SELECT d.id, ${rowTest} AS ok FROM deals d WHERE d.tenant_id = $1${walkFilters} ORDER BY ${r.orderBy} LIMIT ${p.add(budget)}) w WHERE ok LIMIT ${p.add(wanted)}`,
    p.list,
  );
  if (found.length < wanted) return null;
  const ids = r.withTenant();
  return r.rowsOf(`SELECT unnest(${ids.add(found.slice(r.offset).map((x) => x.id))}::text[]) AS id`, ids);
}

/** Collect from the trigram index (its matches in every tenant, the tenant tested on the row), then sort. */
function collectFromTrigrams(r: ListRequest, s: Search) {
  const p = r.withTenant();
  return r.rowsOf(
    `WITH m AS MATERIALIZED (SELECT d.id, d.${r.column} FROM deals d WHERE ${TRIGRAM_TENANT}${r.filters(p)} AND ${s.collectTest(p)})
         SELECT d.id FROM m d ORDER BY ${r.orderBy} LIMIT ${p.add(r.size)} OFFSET ${p.add(r.offset)}`,
    p,
  );
}

/** A deal's search text is in deals_text_by_filters whole up to this many bytes, else its first 150 characters (schema 71). */
export const SEARCH_HEAD_BYTES = 600;

/** deals.search_head as schema 71's trigger makes it, for writers that run with the triggers off (the bulk seed). */
export const searchHeadOf = (text: string): string => (Buffer.byteLength(text) <= SEARCH_HEAD_BYTES ? text : [...text].slice(0, 150).join(""));

/**
 * Collect from deals_text_by_filters alone (tenant, stage, assignee: every stage's range when no
 * stage is chosen), then a visit to each match for its sort key (none when the index holds it).
 * The index holds each deal's search_head: a match in it is a match; the deals whose text is
 * longer than their head (deals_long_text_by_filters, few) are tested on their whole text, unless
 * their head matched already, so each match is collected once.
 */
function collectFromFilters(r: ListRequest, s: Search, sortKeyInIndex: boolean) {
  const { q, column } = r;
  const p = r.withTenant();
  const stages = q.stages === null ? `ARRAY(SELECT stage FROM deal_counts WHERE tenant_id = $1 AND assignee = '*')` : `${p.add(q.stages)}::text[]`;
  const assignee = q.assignee === "" ? " AND d.assigned_to IS NULL" : q.assignee !== null ? ` AND d.assigned_to = ${p.add(q.assignee)}` : "";
  const term = p.add(s.term);
  const within = `FROM deals d WHERE d.tenant_id = $1 AND d.stage = ANY(${stages})${assignee}`;
  const cols = `d.id${sortKeyInIndex ? `, d.${column}` : ""}`;
  return r.rowsOf(
    `WITH f AS MATERIALIZED (SELECT ${cols} ${within} AND strpos(d.search_head, ${term}) > 0
              UNION ALL
              SELECT ${cols} ${within} AND octet_length(d.search_text) > ${SEARCH_HEAD_BYTES} AND strpos(d.search_head, ${term}) = 0 AND strpos(d.search_text, ${term}) > 0),
            m AS MATERIALIZED (${sortKeyInIndex ? "SELECT * FROM f" : `SELECT d.id, d.${column} FROM f JOIN deals d ON d.tenant_id = $1 AND d.id = f.id`})
       SELECT d.id FROM m d ORDER BY ${r.orderBy} LIMIT ${p.add(r.size)} OFFSET ${p.add(r.offset)}`,
    p,
  );
}
