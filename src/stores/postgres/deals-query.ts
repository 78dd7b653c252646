import { DEAL_COLUMNS, type DealJoined } from "../../crm/deals-repo";
import { type ListedSeqs, SORT_COLUMN } from "../../crm/deals-query";
import type { DealListQuery } from "../../crm/model";
import { offsetOf } from "../../http/paging";
import type { Pg } from "./database";

/** Below this many characters trigrams cannot match: the search reads the tenant's text instead. */
const MIN_TRIGRAM_TERM = 3;

/** A LIKE pattern matching `term` anywhere, its wildcards taken literally (LIKE's default escape is \). */
const containing = (term: string): string => `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

const dealColumns = (alias: string) =>
  DEAL_COLUMNS.split(",")
    .map((c) => `${alias}.${c.trim()}`)
    .join(", ");

/**
 * The deal list on PostgreSQL: the same answers as SQLite's createDealsQuery (src/crm/deals-query.ts).
 * Totals without a search are sums of a few deal_counts rows (kept by triggers); with a search, a
 * count over the trigram index (51-deal-search.sql) or, for a one- or two-letter term, over the
 * tenant's narrow (seq, stage, assignee, text) index. Pages come from the order's index; each
 * answer carries its rows.
 */
export function createPostgresDealsQuery(pg: Pg) {
  return {
    async list(tenantId: string, q: DealListQuery): Promise<ListedSeqs> {
      if (q.stages !== null && q.stages.length === 0) return { seqs: [], total: 0 };
      const args: unknown[] = [tenantId];
      const arg = (v: unknown): string => {
        args.push(v);
        return `$${args.length}`;
      };
      // Filters over deals (d).
      const where: string[] = [];
      if (q.stages !== null) where.push(`d.stage = ANY(${arg(q.stages)}::text[])`);
      if (q.assignee === "") where.push("d.assigned_to IS NULL");
      else if (q.assignee !== null) where.push(`d.assigned_to = ${arg(q.assignee)}`);

      const { column, nullable } = SORT_COLUMN[q.sortBy];
      const dir = q.sortDir === "asc" ? "ASC" : "DESC";
      const orderOf = (a: string) => `${nullable ? `(${a}.${column} IS NULL), ` : ""}${a}.${column} ${dir}, ${a}.id ${dir}`;
      const offset = offsetOf(q.page, q.size);

      let total: number;
      if (q.search === null) {
        const countArgs: unknown[] = [tenantId, q.assignee ?? "*"];
        const stageSql = q.stages !== null ? ` AND stage = ANY($3::text[])` : "";
        if (q.stages !== null) countArgs.push(q.stages);
        total = Number(
          (await pg.unsafe<{ n: number }>(`SELECT coalesce(sum(n), 0)::bigint AS n FROM deal_counts WHERE tenant_id = $1 AND assignee = $2${stageSql}`, countArgs))[0]!.n,
        );
      } else {
        const term = q.search.toLowerCase();
        if ([...term].length < MIN_TRIGRAM_TERM) where.push(`strpos(d.search_text, ${arg(term)}) > 0`);
        else where.push(`d.search_text LIKE ${arg(containing(term))}`);
        const filterSql = where.map((w) => ` AND ${w}`).join("");
        total = Number((await pg.unsafe<{ n: number }>(`SELECT count(*)::bigint AS n FROM deals d WHERE d.tenant_id = $1${filterSql}`, args))[0]!.n);
      }
      if (offset >= total) return { seqs: [], total };
      const filterSql = where.map((w) => ` AND ${w}`).join("");
      const limit = arg(q.size);
      const off = arg(offset);
      // The page's ids from the order's index, then their rows (a deep page skips ids, not rows).
      const rows = await pg.unsafe<DealJoined>(
        `SELECT ${dealColumns("d")} FROM (SELECT d.id FROM deals d WHERE d.tenant_id = $1${filterSql} ORDER BY ${orderOf("d")} LIMIT ${limit} OFFSET ${off}) k
         JOIN deals d ON d.tenant_id = $1 AND d.id = k.id ORDER BY ${orderOf("d")}`,
        args,
      );
      return { seqs: rows.map((r) => r.seq), total, rows };
    },
  };
}

export type PostgresDealsQuery = ReturnType<typeof createPostgresDealsQuery>;
