import type { Statement } from "bun:sqlite";
import type { Db } from "../../db/database";
import type { DealListQuery } from "../../crm/model";

// A search term as the deal list's statements take it: the trigram index's query text (a literal
// phrase, the stages as tokens of their own), a GLOB for terms too short for trigrams, and the
// exact totals of 1-3 character terms from deal_gram_counts.

/** Below this many characters trigrams cannot match: the search reads the rows instead. */
export const MIN_FTS_TERM = 3;

/** The one trigram deals_fts holds in unassigned_token for a deal nobody is assigned to (schema.sql, version 10). */
export const UNASSIGNED_TOKEN = "\x01-\x01";

/** A GLOB pattern matching `term` anywhere, its wildcards taken literally. */
export const globContaining = (term: string): string => `*${term.replace(/[*?[]/g, (c) => `[${c}]`)}*`;

/** The trigrams the search index holds for a stage ("\x01ne", "new", "ew\x01" for "new"). */
const stageTrigrams = (stage: string): string[] => {
  const c = [...`\x01${stage}\x01`];
  return c.slice(2).map((_, i) => c[i]! + c[i + 1]! + c[i + 2]!);
};

/**
 * The organization's sweep of a counter table as one row (upto: -1 without a sweep; done; the
 * last key written, '' three times for none, which every key is past), `tenant` the statement's
 * parameter for the tenant. A pending row counts where `p.id > w.upto OR (w.done = 0 AND key > (w.k1, w.k2, w.k3))`.
 */
const swept = (done: string, k1: string, k2: string, k3: string) => (tenant: string) =>
  `SELECT coalesce(max(upto_id), -1) AS upto, coalesce(max(${done}), 0) AS done, coalesce(max(${k1}), '') AS k1, coalesce(max(${k2}), '') AS k2,` +
  ` coalesce(max(${k3}), '') AS k3 FROM deal_search_sweeps WHERE tenant_id = ${tenant}`;
/** deal_gram_counts' sweep. */
export const sweptGrams = swept("grams_done", "gram", "gram_stage", "gram_assignee");
/** deal_key_grams' sweep. */
export const sweptKeys = swept("keys_done", "key_ord", "key_gram", "key_bucket");

/** An FTS5 query matching `term` as one literal phrase: quotes doubled, operators inert. */
export const ftsPhrase = (term: string): string => `"${term.replace(/"/g, '""')}"`;

/** The stage match and the gram-count totals, over the list's prepared statements. */
export function createSearchTerms(db: Db, stmt: (sql: string) => Statement) {
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

  /**
   * How many of the tenant's deals within the filters hold a 1-3 character term: deal_gram_counts
   * rows added up (3 characters since version 12), plus the deal changes not folded into them yet
   * (deal_search_pending, version 15: each row tested for the term as the grams count it). A row
   * that a sweep under way covers (version 34, search-sweep.ts) counts only while its counter's key
   * is past the sweep's cursor; read in the same statement, so the cursor and the counters agree.
   */
  function shortTermTotal(tenantId: string, term: string, q: DealListQuery): number {
    const stages = q.stages !== null ? ` AND stage IN (${q.stages.map(() => "?").join(", ")})` : "";
    const args = [...(q.stages ?? []), ...(q.assignee !== null ? [q.assignee] : [])];
    const sql =
      `SELECT (SELECT coalesce(sum(n), 0) FROM deal_gram_counts WHERE tenant_id = ? AND gram = ?${stages}${q.assignee !== null ? " AND assignee = ?" : ""})` +
      ` + (SELECT coalesce(sum(p.sign), 0) FROM deal_search_pending p, (${sweptGrams("?")}) w WHERE p.tenant_id = ? AND instr(p.search_text, ?) > 0${stages}` +
      `${q.assignee !== null ? " AND coalesce(p.assigned_to, '') = ?" : ""} AND (p.id > w.upto OR (w.done = 0 AND (?, p.stage, coalesce(p.assigned_to, '')) > (w.k1, w.k2, w.k3)))) AS n`;
    return (stmt(sql).get(tenantId, term, ...args, tenantId, tenantId, term, ...args, term) as { n: number }).n;
  }

  return { stageMatch, shortTermTotal };
}
