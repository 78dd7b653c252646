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
import { addActivitiesInTx, lockCrmShared } from "./deals";
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

const isForeignKeyViolation = (err: unknown) => (err as { errno?: string }).errno === "23503" || (err as { code?: string }).code === "23503";

/**
 * Bulk changes of deals on PostgreSQL (src/crm/bulk-repo.ts), the same answers as SQLite's
 * (src/stores/sqlite/bulk-deals.ts). A batch takes the tenant's CRM lock shared, as single deal
 * writes do, locks its deals (FOR UPDATE) and the assignee (FOR SHARE, waiting for a rename in
 * flight), and writes deal by deal; the counters' row triggers are off and the batch's changes
 * added up once (as an import's batch).
 */
export function createPostgresBulkDealsStore(pg: Pg) {
  /** Writes a deal's new stage and/or assignee with its timeline entries; answers its event. */
  async function changeDeal(tx: PgTx, tenantId: string, cur: Row, next: { stage?: string; stageAt?: number | null; assignee?: { id: string | null; user: User | null } }, now: number, actor: EventActor, job: { job_id: string; undo_of?: string }, counters: CounterChange[]): Promise<NewEvent | null> {
    const stage = next.stage ?? cur.stage;
    const stageAt = next.stage !== undefined ? (next.stageAt === undefined ? now : next.stageAt) : (cur.stage_changed_at ?? cur.updated_at);
    const a = next.assignee;
    const assigned = a ? a.id : cur.assigned_to;
    const name = a ? (a.user?.full_name ?? null) : (cur.assignee_name as string | null);
    const email = a ? (a.user?.email ?? null) : (cur.assignee_email as string | null);
    const key = a ? (a.user?.full_name ? sortKey(a.user.full_name) : null) : (cur.assignee_key as string | null);
    await tx.run`UPDATE deals SET stage = ${stage}, stage_changed_at = ${stageAt}, updated_at = ${now}, assigned_to = ${assigned},
      assignee_key = ${key}, assignee_name = ${name}, assignee_email = ${email} WHERE tenant_id = ${tenantId} AND id = ${cur.id}`;
    const after: Row = { ...cur, stage, assigned_to: assigned, assignee_name: name, assignee_email: email };
    counters.push({ sign: -1, v: cur }, { sign: 1, v: after });
    await addActivitiesInTx(tx, tenantId, cur.id, bulkEntries(newId, actor.id, now, job, cur, after));
    const event = dealChangedEvent(cur.id, cur, after, actor);
    return event ? { ...event, data: { ...event.data, ...job } } : null;
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
        const counters: CounterChange[] = [];
        let n = (await tx.one<{ n: number | null }>`SELECT max(n) AS n FROM crm_job_undo WHERE tenant_id = ${tenantId} AND job_id = ${jobId}`)?.n ?? 0;
        const set = "set" in change ? change.set : null;
        if (set?.stage !== undefined && !(await stageExists(tx, tenantId, set.stage))) throw new BulkTargetGone("stage");
        let user: User | null = null;
        if (typeof set?.assigned_to === "string" && !(user = await userOf(tx, tenantId, set.assigned_to))) throw new BulkTargetGone("assigned_to");
        const rows = await tx.unsafe<Row>("SELECT * FROM deals WHERE tenant_id = $1 AND seq = ANY($2::bigint[]) ORDER BY seq FOR UPDATE", [tenantId, targets.map((t) => t.seq)]);
        const undo: object[] = [];
        const events: NewEvent[] = [];
        const job = { job_id: jobId };
        let updated = 0;
        for (const cur of rows) {
          if (!set) {
            const activities = await tx.all<Record<string, unknown>>`SELECT * FROM deal_activities WHERE tenant_id = ${tenantId} AND deal_id = ${cur.id}`;
            const notes = await tx.all<Record<string, unknown>>`SELECT * FROM deal_notes WHERE tenant_id = ${tenantId} AND deal_id = ${cur.id}`;
            const entry: DeletedEntry = { row: cur, activities: [...activities], notes: [...notes] };
            undo.push({ tenant_id: tenantId, job_id: jobId, n: ++n, entity: "deal_deleted", record_id: cur.id, before: JSON.stringify(entry) });
            await tx.run`DELETE FROM deals WHERE tenant_id = ${tenantId} AND id = ${cur.id}`;
            counters.push({ sign: -1, v: cur });
            events.push({ type: "deal.deleted", actor, data: { id: cur.id, title: cur.title, ...job } });
            updated++;
            continue;
          }
          const stage = set.stage !== undefined && set.stage !== cur.stage ? set.stage : undefined;
          const assignee = set.assigned_to !== undefined && set.assigned_to !== cur.assigned_to ? { id: set.assigned_to, user } : undefined;
          if (stage === undefined && assignee === undefined) continue;
          const entry: SetEntry = {
            before: { stage: cur.stage, stage_changed_at: cur.stage_changed_at === null ? null : Number(cur.stage_changed_at), assigned_to: cur.assigned_to },
            set: { ...(stage !== undefined ? { stage } : {}), ...(assignee ? { assigned_to: assignee.id } : {}) },
          };
          undo.push({ tenant_id: tenantId, job_id: jobId, n: ++n, entity: "deal_set", record_id: cur.id, before: JSON.stringify(entry) });
          const event = await changeDeal(tx, tenantId, cur, { stage, assignee }, now, actor, job, counters);
          if (event) events.push(event);
          updated++;
        }
        await insertJson(tx, "crm_job_undo", undo);
        await applyDealCounters(tx, tenantId, counters);
        const changed = await tx.run`UPDATE crm_jobs SET done = done + ${targets.length}, updated = updated + ${updated}, unchanged = unchanged + ${targets.length - updated},
          lease_until = ${leaseUntil} WHERE tenant_id = ${tenantId} AND id = ${jobId} AND status = 'running'`;
        if (changed !== 1) throw new Error("the job is no longer running");
        await appendEventsInTx(tx, tenantId, events, now);
        return { updated, unchanged: targets.length - updated };
      }),

    revert: (tenantId: string, jobId: string, undoJobId: string | null, now: number, leaseUntil: number, limit: number, actor: EventActor): Promise<Reverted> =>
      pg.begin(async (tx) => {
        await lockCrmShared(tx, tenantId);
        await countersByBatch(tx);
        const counters: CounterChange[] = [];
        const entries = await tx.all<{ n: number; entity: string; record_id: string; before: string }>`
          SELECT n, entity, record_id, before FROM crm_job_undo WHERE tenant_id = ${tenantId} AND job_id = ${jobId} ORDER BY n DESC LIMIT ${limit}`;
        const out: Reverted = { entries: entries.length, reverted: 0, restored: 0, skipped: 0 };
        const job = { job_id: undoJobId ?? jobId, undo_of: jobId };
        const events: NewEvent[] = [];
        for (const u of entries) {
          const cur = await tx.one<Row>`SELECT * FROM deals WHERE tenant_id = ${tenantId} AND id = ${u.record_id} FOR UPDATE`;
          if (u.entity === "deal_deleted") {
            const e = JSON.parse(u.before) as DeletedEntry;
            e.row = withNoteText(e.row, e.notes);
            if (cur || !(await restore(tx, e))) {
              out.skipped++;
              continue;
            }
            counters.push({ sign: 1, v: e.row });
            const entry: NewActivity = restoredEntry(newId, actor.id, now, job);
            await addActivitiesInTx(tx, tenantId, u.record_id, [entry]);
            events.push({ type: "deal.created", actor, data: { id: u.record_id, ...pick(e.row as never, DEAL_EVENT_FIELDS), ...job } });
            out.restored++;
            continue;
          }
          const e = JSON.parse(u.before) as SetEntry;
          if (!cur) {
            out.skipped++;
            continue;
          }
          // Only what still holds the change's value goes back: a value someone set since stays.
          const stage = e.set.stage !== undefined && cur.stage === e.set.stage && (await stageExists(tx, tenantId, e.before.stage)) ? e.before.stage : undefined;
          let assignee: { id: string | null; user: User | null } | undefined;
          if (e.set.assigned_to !== undefined && cur.assigned_to === e.set.assigned_to) {
            const was = e.before.assigned_to;
            const user = was === null ? null : await userOf(tx, tenantId, was);
            if (was === null || user) assignee = { id: was, user };
          }
          if (stage === undefined && assignee === undefined) {
            out.skipped++;
            continue;
          }
          const event = await changeDeal(tx, tenantId, cur, { stage, stageAt: e.before.stage_changed_at, assignee }, now, actor, job, counters);
          if (event) events.push(event);
          out.reverted++;
        }
        await applyDealCounters(tx, tenantId, counters);
        if (entries.length > 0) await tx.run`DELETE FROM crm_job_undo WHERE tenant_id = ${tenantId} AND job_id = ${jobId} AND n >= ${entries.at(-1)!.n}`;
        if (undoJobId !== null) {
          const changed = await tx.run`UPDATE crm_jobs SET done = done + ${entries.length}, updated = updated + ${out.reverted}, added = added + ${out.restored},
            unchanged = unchanged + ${out.skipped}, lease_until = ${leaseUntil} WHERE tenant_id = ${tenantId} AND id = ${undoJobId} AND status = 'running'`;
          if (changed !== 1) throw new Error("the undo job is no longer running");
        } else await tx.run`UPDATE crm_jobs SET lease_until = ${leaseUntil} WHERE tenant_id = ${tenantId} AND id = ${jobId} AND status = 'running'`;
        await appendEventsInTx(tx, tenantId, events, now);
        return out;
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
