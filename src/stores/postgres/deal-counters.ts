/**
 * The deal list's counters on PostgreSQL, recounted from the deals themselves: deal_counts (per
 * assignee and stage) and deal_gram_counts (per 1-3 character piece of the search text). Live
 * writes keep them with the triggers of 51-deal-search.sql (the grams through the pending rows of
 * 73-deal-search-pending.sql and search-fold.ts); these functions rebuild them after a bulk seed
 * and a copy-to-postgres, which write deals with the triggers off.
 */
import { type Pg, type PgQueries, insertJson } from "./database";

/**
 * Recounts deal_counts and deal_gram_counts from the deals themselves, for some tenants or all:
 * the afterCopy hook of `suite copy-to-postgres` (the copy writes deals with the triggers off).
 * The grams are counted here in JS, reading the deals in pages: about 10 µs a deal, where the
 * same count in SQL (deal_grams per row) takes about 60.
 */
export async function rebuildDealCounters(pg: Pg, tenantIds?: string[]): Promise<void> {
  const ids = tenantIds ?? (await pg.all<{ id: string }>`SELECT id FROM tenants ORDER BY id`).map((t) => t.id);
  // One transaction per tenant: a big database is not recounted in one long transaction.
  for (const tenantId of ids) await pg.begin((tx) => rebuildDealCountersInTx(tx, [tenantId]));
}

/** The same inside a transaction the caller holds (copy-to-postgres runs its AFTER_COPY steps in the copy's). */
export async function rebuildDealCountersInTx(tx: PgQueries, tenantIds?: string[]): Promise<void> {
  const ids = tenantIds ?? (await tx.all<{ id: string }>`SELECT id FROM tenants ORDER BY id`).map((t) => t.id);
  for (const tenantId of ids) {
    await rebuildDealCountsIn(tx, [tenantId]);
    // The recount replaces the gram counters and what was pending for them (search-fold.ts), once
    // a fold under way has committed. A copy into an older schema has no pending table.
    const pending = (await tx.one<{ t: string | null }>`SELECT to_regclass('deal_search_pending')::text AS t`)?.t != null;
    if (pending) {
      await tx.run`SELECT deal_search_fold_lock(${tenantId})`;
      await tx.run`DELETE FROM deal_search_pending WHERE tenant_id = ${tenantId}`;
    }
    const grams = new GramCounts(tenantId);
    let after = -1;
    for (;;) {
      const rows = await tx.all<{ seq: number; stage: string; assigned_to: string | null; search_text: string }>`
        SELECT seq, stage, assigned_to, search_text FROM deals WHERE tenant_id = ${tenantId} AND seq > ${after} ORDER BY seq LIMIT 20000`;
      if (rows.length === 0) break;
      for (const r of rows) grams.add(r.stage, r.assigned_to, r.search_text);
      after = rows.at(-1)!.seq;
    }
    await grams.write(tx);
  }
}

/** copy-to-postgres's AFTER_COPY step (shape of its AfterCopyStep): the deal list's counters, from the copied deals. */
export const dealCountersAfterCopy = {
  name: "deal_counts, deal_gram_counts (the deal list's counters)",
  run: (tx: PgQueries): Promise<void> => rebuildDealCountersInTx(tx),
};

export async function rebuildDealCountsIn(tx: PgQueries, tenantIds: string[]): Promise<void> {
  await tx.run`DELETE FROM deal_counts WHERE tenant_id = ANY(${tenantIds}::text[])`;
  await tx.run`INSERT INTO deal_counts (tenant_id, assignee, stage, n)
    SELECT tenant_id, coalesce(assigned_to, ''), stage, count(*) FROM deals
    WHERE tenant_id = ANY(${tenantIds}::text[]) GROUP BY tenant_id, coalesce(assigned_to, ''), stage`;
  await tx.run`INSERT INTO deal_counts (tenant_id, assignee, stage, n)
    SELECT tenant_id, '*', stage, sum(n) FROM deal_counts WHERE tenant_id = ANY(${tenantIds}::text[]) GROUP BY tenant_id, stage`;
  // The board's sums (65-deal-sums.sql) alongside, once the schema has them (a copy into an older database has not).
  if ((await tx.one<{ t: string | null }>`SELECT to_regclass('deal_sums')::text AS t`)?.t == null) return;
  await tx.run`DELETE FROM deal_sums WHERE tenant_id = ANY(${tenantIds}::text[])`;
  await tx.run`INSERT INTO deal_sums (tenant_id, assignee, stage, currency, n, cents)
    SELECT tenant_id, coalesce(assigned_to, ''), stage, currency, count(*), sum(value_cents) FROM deals
    WHERE tenant_id = ANY(${tenantIds}::text[]) GROUP BY tenant_id, coalesce(assigned_to, ''), stage, currency`;
}

const SURROGATE = /[\uD800-\uDFFF]/;

/** The 1-, 2- and 3-character substrings of a text, each once (as deal_grams in 51-deal-search.sql, deduplicated). */
export function gramsOf(text: string): Set<string> {
  const out = new Set<string>();
  if (!SURROGATE.test(text)) {
    // One UTF-16 unit per character: plain slices.
    for (let i = 0; i < text.length; i++) {
      out.add(text[i]!);
      if (i + 1 < text.length) out.add(text.slice(i, i + 2));
      if (i + 2 < text.length) out.add(text.slice(i, i + 3));
    }
    return out;
  }
  const c = [...text];
  for (let i = 0; i < c.length; i++) {
    out.add(c[i]!);
    if (i + 1 < c.length) out.add(c[i]! + c[i + 1]!);
    if (i + 2 < c.length) out.add(c[i]! + c[i + 1]! + c[i + 2]!);
  }
  return out;
}

const B = 65_536;
/** A gram of one to three UTF-16 units (no surrogates) as one number: its units in base 2^16, times 4, plus its length (below 2^53). */
const gramCode = (a: number, b = -1, c = -1): number => (b < 0 ? a * 4 + 1 : c < 0 ? (a * B + b) * 4 + 2 : ((a * B + b) * B + c) * 4 + 3);
const gramText = (code: number): string => {
  const kind = code % 4;
  const v = (code - kind) / 4;
  if (kind === 1) return String.fromCharCode(v);
  return kind === 2 ? String.fromCharCode(Math.floor(v / B), v % B) : String.fromCharCode(Math.floor(v / B / B), Math.floor(v / B) % B, v % B);
};

/**
 * One tenant's deal_gram_counts, added up in memory and written in one go (replacing the old
 * ones). Grams are numbers (gramCode) rather than strings: about five times faster at 1M deals.
 */
export class GramCounts {
  /** By stage and assignee ('' = unassigned), then gram code; texts with surrogate pairs by gram text. */
  private readonly counts = new Map<string, Map<number | string, number>>();
  /** The deal a gram was last counted for: each deal counts a gram once. */
  private readonly lastSeen = new Map<number, number>();
  private deal = 0;
  constructor(private readonly tenantId: string) {}
  /** Counts a deal's text once per gram; `sign` -1 takes a state away (a fold's pending rows). */
  add(stage: string, assignee: string | null, text: string, sign = 1): void {
    const key = `${stage}\u0000${assignee ?? ""}`;
    let m = this.counts.get(key);
    if (!m) this.counts.set(key, (m = new Map()));
    if (SURROGATE.test(text)) {
      for (const g of gramsOf(text)) m.set(g, (m.get(g) ?? 0) + sign);
      return;
    }
    const deal = ++this.deal;
    const seen = this.lastSeen;
    const count = (g: number) => {
      if (seen.get(g) === deal) return;
      seen.set(g, deal);
      m.set(g, (m.get(g) ?? 0) + sign);
    };
    const n = text.length;
    for (let i = 0; i < n; i++) {
      const a = text.charCodeAt(i);
      count(gramCode(a));
      if (i + 1 < n) {
        const b = text.charCodeAt(i + 1);
        count(gramCode(a, b));
        if (i + 2 < n) count(gramCode(a, b, text.charCodeAt(i + 2)));
      }
    }
  }
  /** The counts by gram text, stage and assignee, those that added up to zero left out. */
  *rows(): Generator<{ gram: string; stage: string; assignee: string; n: number }> {
    for (const [key, m] of this.counts) {
      const [stage, assignee] = key.split("\u0000") as [string, string];
      // Counted by number only (no text with surrogate pairs): one row a key, yielded as it is
      // read (a merged copy of a big group took this thread for tens of ms at once).
      let mixed = false;
      for (const g of m.keys()) if (typeof g === "string") mixed = true;
      if (!mixed) {
        for (const [g, n] of m) if (n !== 0) yield { gram: gramText(g as number), stage, assignee, n };
        continue;
      }
      // Merged by gram text: a surrogate-free gram may have been counted both ways.
      const merged = new Map<string, number>();
      for (const [g, n] of m) {
        const text = typeof g === "number" ? gramText(g) : g;
        merged.set(text, (merged.get(text) ?? 0) + n);
      }
      for (const [gram, n] of merged) if (n !== 0) yield { gram, stage, assignee, n };
    }
  }
  async write(tx: PgQueries): Promise<void> {
    await tx.run`DELETE FROM deal_gram_counts WHERE tenant_id = ${this.tenantId}`;
    let rows: Array<{ tenant_id: string; gram: string; stage: string; assignee: string; n: number }> = [];
    const flush = async () => {
      await insertJson(tx, "deal_gram_counts", rows);
      rows = [];
    };
    for (const r of this.rows()) {
      rows.push({ tenant_id: this.tenantId, ...r });
      if (rows.length >= 20_000) await flush();
    }
    await flush();
  }
}
