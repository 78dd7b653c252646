import { runAs } from "../../db/stall-monitor";
import type { Pg, PgQueries } from "./database";
import { GramCounts } from "./deal-counters";

/**
 * The fold of the deal search's gram counters on PostgreSQL (schema version 23,
 * 73-deal-search-pending.sql). Deal writes append their counted states to deal_search_pending; a
 * fold takes up to FOLD_ROWS of one organization's oldest rows, deleting them as it reads them,
 * adds their grams up in memory and upserts each changed counter once, all in one transaction: a
 * search (which adds the pending rows it matches to the counters, in one statement) sees the rows
 * or their fold. The fold is the only writer of an organization's counters, so its transaction may
 * last seconds without holding anyone up: deal writes only append, readers read their snapshot,
 * and what else rewrites the counters (a stage deleted, a recount) takes the same lock and waits.
 * Instances take turns by organization: a fold only tries the lock, another instance's organization
 * is skipped.
 *
 * Added up over thousands of rows, most grams are shared (a stage's): a bulk change's batches of
 * 15 deals wrote 269 counter rows a deal; 2,000 deals, 58; here 50,000 rows come to a few hundred
 * thousand counters, each upserted once.
 */

/** Pending rows one fold's transaction takes at most. */
export const FOLD_ROWS = 50_000;
/** Rows read (and deleted) by a statement: their tally is one stretch of this thread (10-25 µs a row; 2,000 held it up to 80 ms). */
const PAGE_ROWS = 1_000;
/** Counter rows upserted by a statement. */
const WRITE_ROWS = 2_500;

type PendingRow = { id: string | number; stage: string; assignee: string; search_text: string; sign: number };

/** The next organization after `after` with pending rows, in key order (one seek of the key). */
async function tenantAfter(pg: PgQueries, after: string): Promise<string | null> {
  return (await pg.one<{ tenant_id: string }>`SELECT tenant_id FROM deal_search_pending WHERE tenant_id > ${after} ORDER BY tenant_id LIMIT 1`)?.tenant_id ?? null;
}

/**
 * Folds up to `maxRows` of an organization's pending rows into its counters, in one transaction.
 * Answers how many it folded: 0 when none were pending or another fold holds the organization.
 */
export async function foldTenant(pg: Pg, tenantId: string, maxRows = FOLD_ROWS): Promise<number> {
  return pg.begin(async (tx) => {
    const lock = await tx.one<{ ok: boolean }>`SELECT deal_search_fold_try_lock(${tenantId}) AS ok`;
    if (!lock?.ok) return 0;
    const tally = new GramCounts(tenantId);
    let after = 0;
    let folded = 0;
    while (folded < maxRows) {
      // Read and deleted by one statement, by id: a row whose writer commits meanwhile with a
      // lower id than the last read is not taken, and is folded next time.
      const rows = await tx.unsafe<PendingRow>(
        `DELETE FROM deal_search_pending WHERE tenant_id = $1 AND id = ANY(ARRAY(
           SELECT id FROM deal_search_pending WHERE tenant_id = $1 AND id > $2 ORDER BY id LIMIT $3))
         RETURNING id, stage, assignee, search_text, sign`,
        [tenantId, after, Math.min(PAGE_ROWS, maxRows - folded)],
      );
      if (rows.length === 0) break;
      for (const r of rows) {
        tally.add(r.stage, r.assignee, r.search_text, Number(r.sign));
        after = Math.max(after, Number(r.id));
      }
      folded += rows.length;
    }
    if (folded === 0) return 0;
    let chunk: Array<{ gram: string; stage: string; assignee: string; n: number }> = [];
    const flush = async () => {
      if (chunk.length === 0) return;
      await tx.unsafe(
        `INSERT INTO deal_gram_counts AS c (tenant_id, gram, stage, assignee, n)
         SELECT $1, u.g, u.s, u.a, u.n FROM unnest($2::text[], $3::text[], $4::text[], $5::bigint[]) AS u(g, s, a, n)
         ORDER BY u.g COLLATE "C", u.s COLLATE "C", u.a COLLATE "C"
         ON CONFLICT (tenant_id, gram, stage, assignee) DO UPDATE SET n = c.n + excluded.n`,
        [tenantId, chunk.map((r) => r.gram), chunk.map((r) => r.stage), chunk.map((r) => r.assignee), chunk.map((r) => r.n)],
      );
      chunk = [];
    };
    for (const r of tally.rows()) {
      chunk.push(r);
      if (chunk.length >= WRITE_ROWS) await flush();
    }
    await flush();
    return folded;
  });
}

/**
 * The most rows an organization's running job may leave pending before the fold takes them anyway:
 * a 1-3 letter search of the organization adds its pending rows up meanwhile (a bulk change
 * appends two a deal, an import one).
 */
export const DEFER_ROWS_MAX = 300_000;

/**
 * Whether an organization's rows wait for the end of its running job (an import, a bulk change,
 * an undo): folded as they came, the fold took a few hundred rows at a time, which share few
 * counters (14 upserts a row: 1.9M for a bulk change of 68,000 deals, 37 s of the database's
 * time beside the job's own). One seek of the one-running-job index.
 */
async function waitsForJob(pg: PgQueries, tenantId: string, now: number): Promise<boolean> {
  const job = await pg.one<{ done: number }>`SELECT done FROM crm_jobs WHERE tenant_id = ${tenantId} AND status = 'running' AND lease_until > ${now}`;
  return job !== null && Number(job.done) * 2 < DEFER_ROWS_MAX;
}

/**
 * One fold for the next organization with pending rows after `after` (they take turns), skipping
 * those whose job is running; null when none is to be folded now.
 */
export async function foldNext(pg: Pg, after: string, now = Date.now()): Promise<{ tenantId: string; folded: number } | null> {
  const visit = async (tenantId: string) => ((await waitsForJob(pg, tenantId, now)) ? null : { tenantId, folded: await foldTenant(pg, tenantId) });
  for (let t = await tenantAfter(pg, after); t !== null; t = await tenantAfter(pg, t)) {
    const step = await visit(t);
    if (step) return step;
  }
  // Round again from the first, up to where this round started.
  for (let t = await tenantAfter(pg, ""); t !== null && after !== "" && t <= after; t = await tenantAfter(pg, t)) {
    const step = await visit(t);
    if (step) return step;
  }
  return null;
}

/** Folds every pending row of every organization (tests, and a recount's callers that want none left). */
export async function foldAll(pg: Pg): Promise<number> {
  let total = 0;
  for (let t = await tenantAfter(pg, ""); t !== null; t = await tenantAfter(pg, t)) {
    for (let n = await foldTenant(pg, t); n > 0; n = await foldTenant(pg, t)) total += n;
  }
  return total;
}

/** How long the loop rests when nothing was pending, in ms. */
const IDLE_MS = 500;

/**
 * Folds while this server runs (`suite serve` on PostgreSQL): one organization's fold after
 * another, in turn, back to back while rows are pending, then a rest. Each fold's tally is done
 * in pieces of PAGE_ROWS rows between its statements, so this thread is never held long.
 */
export function startPostgresSearchFold(pg: Pg, log: (message: string) => void): { stop(): Promise<void> } {
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let running: Promise<void> | null = null;
  let after = "";
  const tick = () => {
    timer = null;
    running = (async () => {
      let again = false;
      try {
        // Named in the stall monitor's warnings (a timer runs outside any request's work).
        const step = await runAs("job search fold", () => foldNext(pg, after));
        after = step?.tenantId ?? "";
        again = step !== null && step.folded > 0;
      } catch (e) {
        log(`search counters fold failed, retrying: ${e instanceof Error ? e.message : String(e)}`);
      }
      if (stopped) return;
      timer = setTimeout(tick, again ? 0 : IDLE_MS);
      timer.unref?.();
    })();
  };
  timer = setTimeout(tick, 0);
  timer.unref?.();
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
