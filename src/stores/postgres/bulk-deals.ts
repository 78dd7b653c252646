import { type BulkChange, type BulkDealsStore, type BulkFilter, type BulkTarget, BulkTargetGone, type Reverted } from "../../crm/bulk-repo";
import { type NewActivity, bulkEntries, restoredEntry } from "../../crm/deal-activity";
import { TENANT_SPAN, withNoteText } from "../../crm/deal-columns";
import type { DealRow } from "../../crm/deals-repo";
import type { JobRow } from "../../crm/export-import/jobs-repo";
import { sortKey } from "../../crm/model";
import { DEAL_EVENT_FIELDS, dealChangedEvent, pick } from "../../events/changes";
import type { EventActor, NewEvent } from "../../events/repo";
import { newId } from "../../kernel/ids";
import { type Pg, type PgTx, insertJson } from "./database";
import { addDealsActivitiesInTx, lockCrmShared } from "./deals";
import { appendEventsInTx } from "./events";
import { Params } from "./deals-list-request";
import { applyDealCounters } from "./jobs";

type CounterChange = { sign: 1 | -1; v: Record<string, unknown> };
/**
 * The row triggers of the deal counters (counts, sums, search grams) are off for a batch's
 * transaction and its changes added up once at its end, as an import's batch does: row by row,
 * each deal rewrote its ~120 counter rows.
 */
const countersByBatch = (tx: PgTx) => tx.run`SELECT set_config('suite.counters_by_batch', 'on', true)`;

type Row = DealRow & Record<string, unknown>;
interface SetEntry {
  before: { stage: string; stage_changed_at: number | null; assigned_to: string | null };
  set: { stage?: string; assigned_to?: string | null };
}
interface DeletedEntry {
  row: Record<string, unknown>;
  activities: Array<Record<string, unknown>>;
  notes: Array<Record<string, unknown>>;
}
type User = { full_name: string | null; email: string };

/** Rows grouped by their deal_id (a batch's deals' timeline entries or notes, read at once). */
function groupByDeal(rows: Array<Record<string, unknown>>): Map<string, Array<Record<string, unknown>>> {
  const out = new Map<string, Array<Record<string, unknown>>>();
  for (const r of rows) {
    const id = r.deal_id as string;
    const list = out.get(id);
    if (list) list.push(r);
    else out.set(id, [r]);
  }
  return out;
}

const isForeignKeyViolation = (err: unknown) => (err as { errno?: string }).errno === "23503" || (err as { code?: string }).code === "23503";

/** A deal's new stage and assignee columns, written with the batch's others in one UPDATE. */
interface DealWrite {
  id: string;
  stage: string;
  stage_at: number | null;
  assigned_to: string | null;
  assignee_key: string | null;
  assignee_name: string | null;
  assignee_email: string | null;
}
/** What a batch writes, gathered deal by deal and sent in a few set-based statements at its end. */
interface BatchWrites {
  deals: DealWrite[];
  activities: Array<NewActivity & { deal_id: string }>;
  counters: CounterChange[];
  events: NewEvent[];
}
const newBatch = (): BatchWrites => ({ deals: [], activities: [], counters: [], events: [] });

/**
 * Bulk changes of deals on PostgreSQL (src/crm/bulk-repo.ts), the same answers as SQLite's
 * (src/stores/sqlite/bulk-deals.ts). A batch takes the tenant's CRM lock shared, as single deal
 * writes do, locks its deals (FOR UPDATE) and the assignee (FOR SHARE, waiting for a rename in
 * flight), works out every deal's change here, then writes them set-based: one UPDATE of the
 * deals, one INSERT of their timeline entries. Statement by statement (two or three a deal) a
 * batch's deals cost the server 0.56 ms of CPU each, so the batches (sized by that CPU) held ~18
 * deals, and the counters' upsert, which adds a batch's changes up once (the row triggers are off,
 * as an import's batch), wrote ~210 counter rows a deal: 68k deals took 200 s (bench/probes/pg-bulk.ts).
 */
export function createPostgresBulkDealsStore(pg: Pg) {
  /** Works out a deal's new stage and/or assignee with its timeline entries and event, into `out`. */
  function changeDeal(cur: Row, next: { stage?: string; stageAt?: number | null; assignee?: { id: string | null; user: User | null } }, now: number, actor: EventActor, job: { job_id: string; undo_of?: string }, out: BatchWrites): void {
    const stage = next.stage ?? cur.stage;
    const stageAt = next.stage !== undefined ? (next.stageAt === undefined ? now : next.stageAt) : (cur.stage_changed_at ?? cur.updated_at);
    const a = next.assignee;
    const assigned = a ? a.id : cur.assigned_to;
    const name = a ? (a.user?.full_name ?? null) : (cur.assignee_name as string | null);
    const email = a ? (a.user?.email ?? null) : (cur.assignee_email as string | null);
    const key = a ? (a.user?.full_name ? sortKey(a.user.full_name) : null) : (cur.assignee_key as string | null);
    out.deals.push({ id: cur.id, stage, stage_at: stageAt === null ? null : Number(stageAt), assigned_to: assigned, assignee_key: key, assignee_name: name, assignee_email: email });
    const after: Row = { ...cur, stage, assigned_to: assigned, assignee_name: name, assignee_email: email };
    out.counters.push({ sign: -1, v: cur }, { sign: 1, v: after });
    for (const entry of bulkEntries(newId, actor.id, now, job, cur, after)) out.activities.push({ ...entry, deal_id: cur.id });
    const event = dealChangedEvent(cur.id, cur, after, actor);
    if (event) out.events.push({ ...event, data: { ...event.data, ...job } });
  }

  /** The batch's deal changes and timeline entries (each deal's numbered after its last), a statement each, then its counters. */
  async function writeBatch(tx: PgTx, tenantId: string, now: number, out: BatchWrites): Promise<void> {
    if (out.deals.length > 0) {
      await tx.unsafe(
        `UPDATE deals d SET stage = u.stage, stage_changed_at = u.stage_at, updated_at = $2, assigned_to = u.assigned_to,
           assignee_key = u.assignee_key, assignee_name = u.assignee_name, assignee_email = u.assignee_email
         FROM json_to_recordset($3::text::json) AS u(id text, stage text, stage_at bigint, assigned_to text, assignee_key text, assignee_name text, assignee_email text)
         WHERE d.tenant_id = $1 AND d.id = u.id COLLATE "C"`,
        [tenantId, now, JSON.stringify(out.deals)],
      );
    }
    await addDealsActivitiesInTx(tx, tenantId, out.activities);
    await applyDealCounters(tx, tenantId, out.counters);
  }

  const userOf = (tx: PgTx, tenantId: string, id: string) => tx.one<User>`SELECT full_name, email FROM users WHERE tenant_id = ${tenantId} AND id = ${id} FOR SHARE`;
  const stageExists = async (tx: PgTx, tenantId: string, key: string) => (await tx.one`SELECT 1 AS one FROM pipeline_stages WHERE tenant_id = ${tenantId} AND key = ${key}`) !== null;

  const store = {
    writesOnThisThread: false,
    async seqRange(tenantId: string) {
      const t = await pg.one<{ tenant_no: string | number; next_deal: string | number }>`SELECT tenant_no, next_deal FROM crm_tenants WHERE tenant_id = ${tenantId}`;
      if (!t) return { lo: 0, hi: 0 };
      const lo = Number(t.tenant_no) * TENANT_SPAN;
      return { lo, hi: lo + Number(t.next_deal) };
    },
    async matching(tenantId: string, f: BulkFilter, from: number, to: number): Promise<BulkTarget[]> {
      const p = new Params();
      let where = `d.tenant_id = ${p.add(tenantId)} AND d.seq >= ${p.add(from)} AND d.seq < ${p.add(to)}`;
      if (f.stages !== null) where += ` AND d.stage = ANY(${p.add(f.stages)}::text[])`;
      if (f.assignee === "") where += " AND d.assigned_to IS NULL";
      else if (f.assignee !== null) where += ` AND d.assigned_to = ${p.add(f.assignee)}`;
      // The list's row test: the lowercased term anywhere in search_text.
      if (f.search !== null) where += ` AND strpos(d.search_text, ${p.add(f.search.toLowerCase())}) > 0`;
      const rows = await pg.unsafe<{ seq: string | number; id: string }>(`SELECT d.seq, d.id FROM deals d WHERE ${where} ORDER BY d.seq`, p.list);
      return rows.map((r) => ({ seq: Number(r.seq), id: r.id }));
    },
    async byIds(tenantId: string, ids: string[]): Promise<BulkTarget[]> {
      const rows = await pg.unsafe<{ seq: string | number; id: string }>("SELECT seq, id FROM deals WHERE tenant_id = $1 AND id = ANY($2::text[]) ORDER BY seq", [tenantId, ids]);
      return rows.map((r) => ({ seq: Number(r.seq), id: r.id }));
    },
    memberExists: async (tenantId: string, userId: string) => (await pg.one`SELECT 1 AS one FROM users WHERE tenant_id = ${tenantId} AND id = ${userId}`) !== null,
    async setTotal(tenantId: string, jobId: string, total: number, leaseUntil: number) {
      await pg.run`UPDATE crm_jobs SET total = ${total}, lease_until = ${leaseUntil} WHERE tenant_id = ${tenantId} AND id = ${jobId} AND status = 'running'`;
    },

    apply: (tenantId: string, jobId: string, now: number, leaseUntil: number, targets: BulkTarget[], change: BulkChange, actor: EventActor) =>
      pg.begin(async (tx) => {
        await lockCrmShared(tx, tenantId);
        await countersByBatch(tx);
        const out = newBatch();
        let n = (await tx.one<{ n: number | null }>`SELECT max(n) AS n FROM crm_job_undo WHERE tenant_id = ${tenantId} AND job_id = ${jobId}`)?.n ?? 0;
        const set = "set" in change ? change.set : null;
        if (set?.stage !== undefined && !(await stageExists(tx, tenantId, set.stage))) throw new BulkTargetGone("stage");
        let user: User | null = null;
        if (typeof set?.assigned_to === "string" && !(user = await userOf(tx, tenantId, set.assigned_to))) throw new BulkTargetGone("assigned_to");
        const rows = await tx.unsafe<Row>("SELECT * FROM deals WHERE tenant_id = $1 AND seq = ANY($2::bigint[]) ORDER BY seq FOR UPDATE", [tenantId, targets.map((t) => t.seq)]);
        const undo: object[] = [];
        const job = { job_id: jobId };
        let updated = 0;
        if (!set) {
          const ids = rows.map((r) => r.id);
          const activities = groupByDeal(await tx.unsafe<Record<string, unknown>>("SELECT * FROM deal_activities WHERE tenant_id = $1 AND deal_id = ANY($2::text[])", [tenantId, ids]));
          const notes = groupByDeal(await tx.unsafe<Record<string, unknown>>("SELECT * FROM deal_notes WHERE tenant_id = $1 AND deal_id = ANY($2::text[])", [tenantId, ids]));
          for (const cur of rows) {
            const entry: DeletedEntry = { row: cur, activities: activities.get(cur.id) ?? [], notes: notes.get(cur.id) ?? [] };
            undo.push({ tenant_id: tenantId, job_id: jobId, n: ++n, entity: "deal_deleted", record_id: cur.id, before: JSON.stringify(entry) });
            out.counters.push({ sign: -1, v: cur });
            out.events.push({ type: "deal.deleted", actor, data: { id: cur.id, title: cur.title, ...job } });
          }
          if (ids.length > 0) await tx.unsafe("DELETE FROM deals WHERE tenant_id = $1 AND id = ANY($2::text[])", [tenantId, ids]);
          updated = rows.length;
        } else {
          for (const cur of rows) {
            const stage = set.stage !== undefined && set.stage !== cur.stage ? set.stage : undefined;
            const assignee = set.assigned_to !== undefined && set.assigned_to !== cur.assigned_to ? { id: set.assigned_to, user } : undefined;
            if (stage === undefined && assignee === undefined) continue;
            const entry: SetEntry = {
              before: { stage: cur.stage, stage_changed_at: cur.stage_changed_at === null ? null : Number(cur.stage_changed_at), assigned_to: cur.assigned_to },
              set: { ...(stage !== undefined ? { stage } : {}), ...(assignee ? { assigned_to: assignee.id } : {}) },
            };
            undo.push({ tenant_id: tenantId, job_id: jobId, n: ++n, entity: "deal_set", record_id: cur.id, before: JSON.stringify(entry) });
            changeDeal(cur, { stage, assignee }, now, actor, job, out);
            updated++;
          }
        }
        await insertJson(tx, "crm_job_undo", undo);
        await writeBatch(tx, tenantId, now, out);
        const changed = await tx.run`UPDATE crm_jobs SET done = done + ${targets.length}, updated = updated + ${updated}, unchanged = unchanged + ${targets.length - updated},
          lease_until = ${leaseUntil} WHERE tenant_id = ${tenantId} AND id = ${jobId} AND status = 'running'`;
        if (changed !== 1) throw new Error("the job is no longer running");
        await appendEventsInTx(tx, tenantId, out.events, now);
        return { updated, unchanged: targets.length - updated };
      }),

    revert: (tenantId: string, jobId: string, undoJobId: string | null, now: number, leaseUntil: number, limit: number, actor: EventActor): Promise<Reverted> =>
      pg.begin(async (tx) => {
        await lockCrmShared(tx, tenantId);
        await countersByBatch(tx);
        const out = newBatch();
        const entries = await tx.all<{ n: number; entity: string; record_id: string; before: string }>`
          SELECT n, entity, record_id, before FROM crm_job_undo WHERE tenant_id = ${tenantId} AND job_id = ${jobId} ORDER BY n DESC LIMIT ${limit}`;
        const result: Reverted = { entries: entries.length, reverted: 0, restored: 0, skipped: 0 };
        const job = { job_id: undoJobId ?? jobId, undo_of: jobId };
        // The entries' deals locked at once, in deal-number order as a batch of the change locks them.
        const current = new Map<string, Row>();
        const ids = [...new Set(entries.map((u) => u.record_id))];
        for (const r of await tx.unsafe<Row>("SELECT * FROM deals WHERE tenant_id = $1 AND id = ANY($2::text[]) ORDER BY seq FOR UPDATE", [tenantId, ids])) current.set(r.id, r);
        const stages = new Map<string, boolean>();
        const hasStage = async (key: string) => stages.get(key) ?? stages.set(key, await stageExists(tx, tenantId, key)).get(key)!;
        const users = new Map<string, User | null>();
        const member = async (id: string) => (users.has(id) ? users.get(id)! : users.set(id, await userOf(tx, tenantId, id)).get(id)!);
        for (const u of entries) {
          const cur = current.get(u.record_id);
          if (u.entity === "deal_deleted") {
            const e = JSON.parse(u.before) as DeletedEntry;
            e.row = withNoteText(e.row, e.notes);
            if (cur || !(await restore(tx, e))) {
              result.skipped++;
              continue;
            }
            out.counters.push({ sign: 1, v: e.row });
            out.activities.push({ ...restoredEntry(newId, actor.id, now, job), deal_id: u.record_id });
            out.events.push({ type: "deal.created", actor, data: { id: u.record_id, ...pick(e.row as never, DEAL_EVENT_FIELDS), ...job } });
            result.restored++;
            continue;
          }
          const e = JSON.parse(u.before) as SetEntry;
          if (!cur) {
            result.skipped++;
            continue;
          }
          // Only what still holds the change's value goes back: a value someone set since stays.
          const stage = e.set.stage !== undefined && cur.stage === e.set.stage && (await hasStage(e.before.stage)) ? e.before.stage : undefined;
          let assignee: { id: string | null; user: User | null } | undefined;
          if (e.set.assigned_to !== undefined && cur.assigned_to === e.set.assigned_to) {
            const was = e.before.assigned_to;
            const user = was === null ? null : await member(was);
            if (was === null || user) assignee = { id: was, user };
          }
          if (stage === undefined && assignee === undefined) {
            result.skipped++;
            continue;
          }
          changeDeal(cur, { stage, stageAt: e.before.stage_changed_at, assignee }, now, actor, job, out);
          result.reverted++;
        }
        await writeBatch(tx, tenantId, now, out);
        if (entries.length > 0) await tx.run`DELETE FROM crm_job_undo WHERE tenant_id = ${tenantId} AND job_id = ${jobId} AND n >= ${entries.at(-1)!.n}`;
        if (undoJobId !== null) {
          const changed = await tx.run`UPDATE crm_jobs SET done = done + ${entries.length}, updated = updated + ${result.reverted}, added = added + ${result.restored},
            unchanged = unchanged + ${result.skipped}, lease_until = ${leaseUntil} WHERE tenant_id = ${tenantId} AND id = ${undoJobId} AND status = 'running'`;
          if (changed !== 1) throw new Error("the undo job is no longer running");
        } else await tx.run`UPDATE crm_jobs SET lease_until = ${leaseUntil} WHERE tenant_id = ${tenantId} AND id = ${jobId} AND status = 'running'`;
        await appendEventsInTx(tx, tenantId, out.events, now);
        return result;
      }),

    undoLeft: async (tenantId: string, jobId: string) =>
      (await pg.one<{ n: number }>`SELECT count(*)::int AS n FROM crm_job_undo WHERE tenant_id = ${tenantId} AND job_id = ${jobId}`)?.n ?? 0,
    lastOf: (tenantId: string, userId: string) =>
      pg.one<JobRow>`SELECT * FROM crm_jobs WHERE tenant_id = ${tenantId} AND kind = 'deals_bulk' AND user_id = ${userId} AND status <> 'failed'
        ORDER BY created_at DESC, id DESC LIMIT 1`,
    async setDetail(tenantId: string, jobId: string, detail: string) {
      await pg.run`UPDATE crm_jobs SET detail = ${detail} WHERE tenant_id = ${tenantId} AND id = ${jobId}`;
    },
  };

  /** A deleted deal back with its timeline and notes; false when what it names (account, contact, assignee) is gone since. */
  async function restore(tx: PgTx, e: DeletedEntry): Promise<boolean> {
    await tx.run`SAVEPOINT bulk_restore`;
    try {
      await tx.unsafe("INSERT INTO deals SELECT * FROM json_populate_record(NULL::deals, $1::text::json)", [JSON.stringify(e.row)]);
      await tx.run`RELEASE SAVEPOINT bulk_restore`;
    } catch (err) {
      if (!isForeignKeyViolation(err)) throw err;
      await tx.run`ROLLBACK TO SAVEPOINT bulk_restore`;
      return false;
    }
    await insertJson(tx, "deal_activities", e.activities);
    await insertJson(tx, "deal_notes", e.notes);
    return true;
  }

  return store satisfies BulkDealsStore;
}
