import type { Statement } from "bun:sqlite";
import type { SortField } from "../../crm/model";
import type { KeyOrd } from "../../db/deal-key-grams";
import { KEY_BUCKET } from "../../db/deal-key-grams";
import { sweptKeys } from "./deals-search-terms";

/** The text sorts deal_key_grams counts (schema version 13): their ord, key column and index for each direction. */
const TEXT_ORDERS: Partial<Record<SortField, { ord: KeyOrd; column: string; nullable: boolean; index: () => string }>> = {
  title: { ord: "t", column: "title_key", nullable: false, index: () => "deals_by_title" },
  account_name: { ord: "a", column: "account_key", nullable: false, index: () => "deals_by_account" },
  // One index each way: a descending walk reads it backwards (schema version 25).
  contact_name: { ord: "c", column: "contact_key", nullable: true, index: () => "deals_by_contact_asc" },
};

/** Whether deal_key_grams counts the order's buckets. */
export const isBucketedOrder = (sortBy: SortField): boolean => TEXT_ORDERS[sortBy] !== undefined;

/** Entries a bucket's own statement costs beyond the entries it walks (its preparation-free run, the seek). */
const BUCKET_STEP = 20;

/**
 * The least string above every key that starts with `prefix` (its last code point plus one, past
 * the surrogates), or null when there is none (the prefix is all U+10FFFF).
 */
export function keyAfter(prefix: string): string | null {
  const cps = [...prefix];
  while (cps.length > 0) {
    const last = cps.pop()!.codePointAt(0)!;
    if (last < 0x10ffff) return cps.join("") + String.fromCodePoint(last + 1 === 0xd800 ? 0xe000 : last + 1);
  }
  return null;
}

/** The keys a bucket holds: [lo, hi) (hi null: no bound). A bucket shorter than KEY_BUCKET is a whole key, and holds only that key ("\0" sorts before any other character). */
export function bucketRange(bucket: string): [string, string | null] {
  return [bucket, [...bucket].length < KEY_BUCKET ? `${bucket}\u0000` : keyAfter(bucket)];
}

export interface TextWalk {
  tenantId: string;
  sortBy: SortField;
  desc: boolean;
  /** The term (lowercase, 3 characters) and the filters the walk tests on each entry (over deals d). */
  term: string;
  filterSql: string;
  filterArgs: Array<string | number>;
  offset: number;
  size: number;
  /** Matches within the filters, and of the term alone (deal_gram_counts). */
  total: number;
  termAll: number;
  /** Entries the walk may read (planned and walked): past it, null (the caller sorts). */
  maxEntries: number;
}

/**
 * A text order's page of a 3-letter search, walked only through the buckets of the order where
 * deal_key_grams says the term occurs, in order: the walk seeks to each (a range of the order's
 * index) instead of crossing the entries between them, which a term clustered along the order
 * (a word of some titles) makes most of the index. The plan reads the buckets in order until the
 * matches expected within the filters (the term's matches in the bucket × total / termAll) fill
 * the page, and gives up (null) when their entries exceed half of maxEntries; the walk itself stops
 * at maxEntries. Deals without a contact (not counted by bucket) are walked last, in contact order,
 * only if some of the term's matches are among them.
 */
export function createTextWalk(stmt: (sql: string) => Statement) {
  return function walkBuckets(w: TextWalk): number[] | null {
    const o = TEXT_ORDERS[w.sortBy]!;
    const dir = w.desc ? "DESC" : "ASC";
    // Deal changes not folded into the counters yet (schema version 15) are added to their buckets:
    // one more statement, merged in SQL so the buckets keep SQLite's order, only while there are any.
    // A row a sweep under way covers (version 34) counts where its counter's key is past the cursor:
    // the term's (ord, term, bucket) for its hits, the bucket's (ord, '', bucket) for its deals.
    const pending = stmt("SELECT 1 AS x FROM deal_search_pending WHERE tenant_id = ? LIMIT 1").get(w.tenantId) !== null;
    const bucketOfRow = `substr(${o.column}, 1, ${KEY_BUCKET})`;
    const unswept = (gram: string) => `(r.id > w.upto OR (w.done = 0 AND (?2, ${gram}, ${bucketOfRow}) > (w.k1, w.k2, w.k3)))`;
    const buckets = stmt(
      pending
        ? `WITH w AS (${sweptKeys("?1")}),
            p AS (SELECT ${bucketOfRow} AS bucket, sum(sign * (instr(search_text, ?3) > 0) * ${unswept("?3")}) AS hits, sum(sign * ${unswept("''")}) AS deals
              FROM deal_search_pending r, w WHERE tenant_id = ?1 AND ${o.column} IS NOT NULL GROUP BY 1),
            b AS (SELECT bucket FROM deal_key_grams WHERE tenant_id = ?1 AND ord = ?2 AND gram = ?3 AND n > 0 UNION SELECT bucket FROM p)
          SELECT bucket, sum(hits) AS hits, sum(deals) AS deals FROM (
            SELECT bucket, n AS hits, 0 AS deals FROM deal_key_grams WHERE tenant_id = ?1 AND ord = ?2 AND gram = ?3
            UNION ALL SELECT bucket, 0, n FROM deal_key_grams WHERE tenant_id = ?1 AND ord = ?2 AND gram = '' AND bucket IN (SELECT bucket FROM b)
            UNION ALL SELECT bucket, hits, deals FROM p)
          GROUP BY bucket HAVING sum(hits) > 0 ORDER BY bucket ${dir}`
        : `SELECT g.bucket AS bucket, g.n AS hits, s.n AS deals FROM deal_key_grams g CROSS JOIN deal_key_grams s ON s.tenant_id = g.tenant_id AND s.ord = g.ord AND s.gram = '' AND s.bucket = g.bucket
        WHERE g.tenant_id = ?1 AND g.ord = ?2 AND g.gram = ?3 AND g.n > 0 ORDER BY g.bucket ${dir}`,
    ).iterate(w.tenantId, o.ord, w.term) as IterableIterator<unknown>;
    const wanted = w.offset + w.size;
    const density = w.total / Math.max(1, w.termAll);
    // The plan: the buckets whose expected matches fill the page, and their entries.
    const read: Array<[string, number, number]> = [];
    let expected = 0;
    let planned = 0;
    let hitsSeen = 0;
    let exhausted = false;
    const next = (): [string, number, number] | null => {
      if (exhausted) return null;
      const r = buckets.next();
      if (r.done) {
        exhausted = true;
        return null;
      }
      const v = r.value as { bucket: string; hits: number; deals: number };
      const row: [string, number, number] = [v.bucket, v.hits, v.deals];
      hitsSeen += row[1];
      read.push(row);
      return row;
    };
    while (expected < wanted) {
      const b = next();
      if (!b) break;
      // The bucket's entries walked: all of them, or (the page filling within it) the share of its
      // expected matches still wanted.
      const inBucket = b[1] * density;
      planned += (inBucket > wanted - expected ? (b[2] * (wanted - expected)) / inBucket : b[2]) + BUCKET_STEP;
      expected += inBucket;
      if (planned * 2 > w.maxEntries) {
        buckets.return?.();
        return null;
      }
    }
    // A walk of the order's index over the entries `where` keeps: at most LIMIT entries read, the
    // filters tested on each entry before the term (on the row), the matches kept up to the last LIMIT.
    const walkSql = (where: string, order: string) =>
      `SELECT seq FROM (SELECT d.seq AS seq, CASE WHEN 1${w.filterSql} THEN instr(d.search_text, ?) > 0 ELSE 0 END AS ok FROM deals d INDEXED BY ${o.index()}
        WHERE d.tenant_id = ?${where} ORDER BY ${order} LIMIT ?) WHERE ok LIMIT ?`;
    const served = o.nullable ? ` AND (d.${o.column} IS NULL) = 0` : "";
    const bucketWalkSql = (bounded: boolean) => walkSql(`${served} AND d.${o.column} >= ?${bounded ? ` AND d.${o.column} < ?` : ""}`, `d.${o.column} ${dir}, d.id ${dir}`);
    const entries = (n: number) => Math.max(0, Math.floor(Math.min(n, Number.MAX_SAFE_INTEGER)));
    const found: number[] = [];
    let spent = 0;
    for (let i = 0; found.length < wanted; i++) {
      const b = i < read.length ? read[i]! : next();
      if (!b) break;
      const [lo, hi] = bucketRange(b[0]);
      const room = w.maxEntries - spent;
      const rows = stmt(bucketWalkSql(hi !== null)).values(...w.filterArgs, w.term, w.tenantId, lo, ...(hi !== null ? [hi] : []), entries(room), wanted - found.length) as number[][];
      for (const r of rows) found.push(r[0]!);
      spent += Math.min(b[2], room) + BUCKET_STEP;
      if (found.length < wanted && b[2] > room) {
        buckets.return?.();
        return null;
      }
    }
    buckets.return?.();
    if (found.length < wanted && o.nullable) {
      // Every bucket read: the term's matches not among them have no contact (sorted last both ways).
      while (next());
      if (w.termAll > hitsSeen) {
        const rows = stmt(walkSql(` AND (d.${o.column} IS NULL) = 1`, `d.${o.column} ${dir}, d.id ${dir}`)).values(
          ...w.filterArgs,
          w.term,
          w.tenantId,
          entries(w.maxEntries - spent),
          wanted - found.length,
        ) as number[][];
        for (const r of rows) found.push(r[0]!);
        if (found.length < Math.min(wanted, w.total)) return null;
      }
    }
    // Fewer than wanted only at the end of the matches: the page is what is left of them.
    if (found.length < Math.min(wanted, w.total)) return null;
    return found.slice(w.offset);
  };
}
