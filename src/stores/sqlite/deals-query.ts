import type { DealSummaryQuery, DealsQuery, ListedSeqs, SummaryRow } from "../../crm/deals-query";
import type { Statement } from "bun:sqlite";
import type { Db } from "../../db/database";
import { TENANT_SPAN } from "../../crm/deal-columns";
import { stagesJoiner } from "./deals";
import { readTx } from "./read-tx";
import { createTextWalk } from "./deals-text-walk";
import { MIN_FTS_TERM, createSearchTerms } from "./deals-search-terms";
import { type SqliteDealsPlan, costPlan } from "./deals-plan";
import { type DealsReads, describeRequest } from "./deals-list-request";
import { unsearchedPage } from "./deals-page-reads";
import { recordDealsPage } from "./deals-record-page";
import { shortTermPage, threeLetterPage, trigramTermPage } from "./deals-search-pages";
import { SUMMARY_TUNING, type SummaryTuning, summaryRows } from "./deals-summary";

import type { DealListQuery } from "../../crm/model";

/**
 * The deal list's SQL. Totals come from the deal_counts table when there is no search (a sum of
 * a few rows), else from deal_gram_counts for a term of 1-3 characters, or from the trigram index
 * limited to the tenant's rowid range. The page is read from the index of the requested order; a
 * search either walks that order testing each row (when matches are dense, the first page is
 * near), with a budget, or sorts the matching rows (when rare, or when the walk ran out of
 * budget). The choice is `plan`'s (deals-plan.ts: the server's cost rules, or a test's forced
 * strategy). Statements are prepared once per shape and kept.
 *
 * The parts: deals-list-request.ts (one request's filters, order, counters and walk shape),
 * deals-search-pages.ts (a search by the term's length), deals-page-reads.ts (the plain page, the
 * index walk and the sort fallback), deals-text-walk.ts (the bucket walk), deals-search-terms.ts
 * (the index's query text and the gram-count totals).
 */
export function createSqliteDealsQuery(db: Db, plan: SqliteDealsPlan = costPlan(), summaryTuning: SummaryTuning = SUMMARY_TUNING) {
  const prepared = new Map<string, Statement>();
  const stmt = (sql: string): Statement => {
    let s = prepared.get(sql);
    if (!s) {
      s = db.prepare(sql);
      prepared.set(sql, s);
    }
    return s;
  };
  const reads: DealsReads = {
    stmt,
    tenantNo: db.prepare<{ tenant_no: number }, [string]>("SELECT tenant_no FROM crm_tenants WHERE tenant_id = ?1"),
    assigneeKeyOf: db.prepare<{ assignee_key: string | null }, [string, string]>(
      "SELECT assignee_key FROM deals INDEXED BY deals_by_assignee_created WHERE tenant_id = ?1 AND assigned_to = ?2 LIMIT 1",
    ),
    withStages: stagesJoiner(db),
    walkBuckets: createTextWalk(stmt),
    ...createSearchTerms(db, stmt),
    plan,
  };

  function listNow(tenantId: string, q: DealListQuery): ListedSeqs {
    if (q.stages !== null && q.stages.length === 0) return { seqs: [], total: 0 };
    const request = describeRequest(reads, tenantId, q);
    if ((q.account ?? null) !== null || (q.contact ?? null) !== null) return recordDealsPage(request);
    if (q.search === null) return unsearchedPage(request);
    // A search's matches are bounded by the tenant's rowid range (read here: a list without a
    // search does not need it, and each statement is about 1.5 µs of a request in the server).
    const t = reads.tenantNo.get(tenantId);
    if (!t) return { seqs: [], total: 0 };
    const lo = t.tenant_no * TENANT_SPAN;
    const search = { term: q.search.toLowerCase(), lo, hi: lo + TENANT_SPAN - 1 };
    const length = [...search.term].length;
    if (length < MIN_FTS_TERM) return shortTermPage(request, search);
    if (length === MIN_FTS_TERM && plan.threeLettersCounted) return threeLetterPage(request, search);
    return trigramTermPage(request, search);
  }

  // The tenant's number, the total and the page (a search's several reads) in one read transaction.
  const read = readTx(db);
  const store = {
    list: async (tenantId: string, q: DealListQuery): Promise<ListedSeqs> => read(() => listNow(tenantId, q)),
    summary: (tenantId: string, q: DealSummaryQuery): Promise<SummaryRow[]> =>
      summaryRows({ stmt, tenantNo: (id) => reads.tenantNo.get(id)?.tenant_no ?? null, read, tuning: summaryTuning }, tenantId, q),
  };
  return store satisfies DealsQuery;
}

export type SqliteDealsQuery = ReturnType<typeof createSqliteDealsQuery>;
