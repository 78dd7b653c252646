import type { Statement } from "bun:sqlite";
import { jobPause } from "../../db/fts-merge";
import { type Db, writeTxAsync } from "../../db/database";
import { type BulkChange, type BulkDealsStore, type BulkFilter, type BulkTarget, BulkTargetGone, type Reverted } from "../../crm/bulk-repo";
import { bulkEntries, restoredEntry } from "../../crm/deal-activity";
import { TENANT_SPAN, withNoteText } from "../../crm/deal-columns";
import type { DealRow } from "../../crm/deals-repo";
import type { JobRow } from "../../crm/export-import/jobs-repo";
import { sortKey } from "../../crm/model";
import { DEAL_EVENT_FIELDS, dealChangedEvent, pick } from "../../events/changes";
import type { EventActor, NewEvent } from "../../events/repo";
import { newId } from "../../kernel/ids";
import { activityWriter } from "./deal-activities";
import type { AppendEventsInTx } from "./deals";

type Row = DealRow & Record<string, unknown>;

/**
 * The deals of one window of deal numbers (rowids) that match a bulk change's filter. The rowid
 * range bounds the read; the filters are the deal list's, tested row by row (the search as the
 * list's own row test: the lowercased term anywhere in search_text). NOT INDEXED keeps it so: the
 * statement is prepared without its values, and SQLite chose the stage's index instead, reading
 * every deal of the stage for each window (7 ms at 100,000 at a million deals, whatever the
 * window's size), so the job's windows shrank to 4 deal numbers and choosing the deals of a bulk
 * change took more than 10 minutes.
 */
export function matchingQuery(tenantId: string, f: BulkFilter, from: number, to: number): { sql: string; args: Array<string | number> } {
  let sql = "SELECT seq, id FROM deals NOT INDEXED WHERE seq >= ? AND seq < ? AND tenant_id = ?";
  const args: Array<string | number> = [from, to, tenantId];
  if (f.stages !== null) {
    sql += ` AND stage IN (${f.stages.map(() => "?").join(", ")})`;
    args.push(...f.stages);
  }
  if (f.assignee === "") sql += " AND assigned_to IS NULL";
  else if (f.assignee !== null) {
    sql += " AND assigned_to = ?";
    args.push(f.assignee);
  }
  if (f.search !== null) {
    sql += " AND instr(search_text, ?) > 0";
    args.push(f.search.toLowerCase());
  }
  return { sql: `${sql} ORDER BY seq`, args };
}
/** A "deal_set" undo entry: the deal's values before, and what the change set. */
interface SetEntry {
  before: { stage: string; stage_changed_at: number | null; assigned_to: string | null };
  set: { stage?: string; assigned_to?: string | null };
}
/** A "deal_deleted" undo entry: the deal's row, timeline and notes as they were. */
interface DeletedEntry {
  row: Record<string, unknown>;
  activities: Array<Record<string, unknown>>;
  notes: Array<Record<string, unknown>>;
}
type User = { full_name: string | null; email: string };

const JOB_COLUMNS = "tenant_id, id, kind, status, user_id, total, done, added, updated, unchanged, error_count, errors, message, created_at, finished_at, lease_until, detail";

/** Bulk changes of deals on SQLite (src/crm/bulk-repo.ts): every batch one IMMEDIATE transaction, nothing awaited inside. */
export function createSqliteBulkDealsStore(db: Db, others: { appendEventsInTx: AppendEventsInTx }) {
  const prepared = new Map<string, Statement>();
  const stmt = (sql: string): Statement => {
    let s = prepared.get(sql);
    if (!s) prepared.set(sql, (s = db.prepare(sql)));
    return s;
  };
  const addActivity = activityWriter(db);
  const numbering = db.prepare<{ tenant_no: number; next_deal: number }, [string]>("SELECT tenant_no, next_deal FROM crm_tenants WHERE tenant_id = ?1");
  const rowBySeq = db.prepare<Row, [number, string]>("SELECT * FROM deals WHERE seq = ?1 AND tenant_id = ?2");
  const rowById = db.prepare<Row, [string, string]>("SELECT * FROM deals WHERE tenant_id = ?1 AND id = ?2");
  const userOf = db.prepare<User, [string, string]>("SELECT full_name, email FROM users WHERE tenant_id = ?1 AND id = ?2");
  const stageExists = db.prepare<{ one: number }, [string, string]>("SELECT 1 AS one FROM pipeline_stages WHERE tenant_id = ?1 AND key = ?2");
  const activitiesOf = db.prepare<Record<string, unknown>, [string, string]>("SELECT * FROM deal_activities WHERE tenant_id = ?1 AND deal_id = ?2");
  const notesOf = db.prepare<Record<string, unknown>, [string, string]>("SELECT * FROM deal_notes WHERE tenant_id = ?1 AND deal_id = ?2");
  // A deleted deal's row as stored: its columns but the generated ones (stage_token, unassigned_token), which an INSERT cannot name.
  let storedColumns: string | null = null;
  const storedRow = (seq: number): Record<string, unknown> => {
    storedColumns ??= (db.query("PRAGMA table_xinfo(deals)").all() as Array<{ name: string; hidden: number }>).filter((c) => c.hidden === 0).map((c) => c.name).join(", ");
    return stmt(`SELECT ${storedColumns} FROM deals WHERE seq = ?1`).get(seq) as Record<string, unknown>;
  };
  const removeDeals = db.prepare<never, [string]>("DELETE FROM deals NOT INDEXED WHERE seq IN (SELECT value FROM json_each(?1))");
  const lastUndo = db.prepare<{ n: number | null }, [string, string]>("SELECT max(n) AS n FROM crm_job_undo WHERE tenant_id = ?1 AND job_id = ?2");
  const addUndo = db.prepare("INSERT INTO crm_job_undo (tenant_id, job_id, n, entity, record_id, before) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  const newestUndo = db.prepare<{ n: number; entity: string; record_id: string; before: string }, [string, string, number]>(
    "SELECT n, entity, record_id, before FROM crm_job_undo WHERE tenant_id = ?1 AND job_id = ?2 ORDER BY n DESC LIMIT ?3",
  );
  const dropUndoFrom = db.prepare("DELETE FROM crm_job_undo WHERE tenant_id = ?1 AND job_id = ?2 AND n >= ?3");
  const progress = db.prepare("UPDATE crm_jobs SET done = done + ?3, updated = updated + ?4, unchanged = unchanged + ?5, lease_until = ?6 WHERE tenant_id = ?1 AND id = ?2 AND status = 'running'");
  const undoProgress = db.prepare(
    "UPDATE crm_jobs SET done = done + ?3, updated = updated + ?4, added = added + ?5, unchanged = unchanged + ?6, lease_until = ?7 WHERE tenant_id = ?1 AND id = ?2 AND status = 'running'",
  );

  /**
   * A batch's stage and assignee writes, one UPDATE statement per shape for all its deals. Only the
   * columns that change are named, since SQLite rewrites every index holding a column named in SET
   * (deals-store's reason). stage_changed_at: the given time when the stage changes; else a deal
   * from before it was kept gets its last write's time. One statement, not one a deal, for the
   * full-text index's sake (deal-batches.ts); its rowids need no order in the array: UPDATE … FROM
   * and an IN list visit the deals in rowid order (tests/stores/sqlite-fts-segments.test.ts
   * reverts newest first).
   */
  function batchUpdates() {
    const shapes = new Map<string, { stage: boolean; assignee: boolean; rows: Array<Array<string | number | null>> }>();
    return {
      add(seq: number, next: { stage?: string; stageAt?: number | null; assignee?: { id: string | null; user: User | null } }, now: number): void {
        const stage = next.stage !== undefined;
        const assignee = next.assignee !== undefined;
        const row: Array<string | number | null> = [seq, now];
        if (next.stage !== undefined) row.push(next.stage, next.stageAt === undefined ? now : next.stageAt);
        if (next.assignee) row.push(...assigneeArgs(next.assignee.id, next.assignee.user));
        const key = `${stage}:${assignee}`;
        const shape = shapes.get(key);
        if (shape) shape.rows.push(row);
        else shapes.set(key, { stage, assignee, rows: [row] });
      },
      write(): void {
        for (const { stage, assignee, rows } of shapes.values()) {
          const at = stage ? 4 : 2;
          const sets = [
            stage ? "stage = u.value ->> 2, stage_changed_at = u.value ->> 3" : "stage_changed_at = coalesce(stage_changed_at, updated_at)",
            "updated_at = u.value ->> 1",
            ...(assignee ? [`assigned_to = u.value ->> ${at}, assignee_key = u.value ->> ${at + 1}, assignee_name = u.value ->> ${at + 2}, assignee_email = u.value ->> ${at + 3}`] : []),
          ];
          stmt(`UPDATE deals NOT INDEXED SET ${sets.join(", ")} FROM json_each(?1) AS u WHERE deals.seq = u.value ->> 0`).run(JSON.stringify(rows));
        }
        shapes.clear();
      },
    };
  }
  const assigneeArgs = (userId: string | null, u: User | null) => [userId, u?.full_name ? sortKey(u.full_name) : null, u?.full_name ?? null, u?.email ?? null];

  /** A deal's new stage and/or assignee (written by `updates`) with its timeline entries; answers its event. */
  function changeDeal(updates: ReturnType<typeof batchUpdates>, tenantId: string, cur: Row, next: { stage?: string; stageAt?: number | null; assignee?: { id: string | null; user: User | null } }, now: number, actor: EventActor, job: { job_id: string; undo_of?: string }): NewEvent | null {
    updates.add(cur.seq, next, now);
    const after: Row = { ...cur, stage: next.stage ?? cur.stage };
    if (next.assignee) {
      after.assigned_to = next.assignee.id;
      after.assignee_name = next.assignee.user?.full_name ?? null;
      after.assignee_email = next.assignee.user?.email ?? null;
    }
    for (const a of bulkEntries(newId, actor.id, now, job, cur, after)) addActivity(tenantId, cur.id, a);
    const event = dealChangedEvent(cur.id, cur, after, actor);
    return event ? { ...event, data: { ...event.data, ...job } } : null;
  }

  const store = {
    writesOnThisThread: true,
    catchUp: () => jobPause(db),
    async seqRange(tenantId: string) {
      const t = numbering.get(tenantId);
      if (!t) return { lo: 0, hi: 0 };
      return { lo: t.tenant_no * TENANT_SPAN, hi: t.tenant_no * TENANT_SPAN + t.next_deal };
    },
    async matching(tenantId: string, f: BulkFilter, from: number, to: number): Promise<BulkTarget[]> {
      const { sql, args } = matchingQuery(tenantId, f, from, to);
      return stmt(sql).all(...args) as BulkTarget[];
    },
    async byIds(tenantId: string, ids: string[]): Promise<BulkTarget[]> {
      return stmt("SELECT seq, id FROM deals WHERE tenant_id = ?1 AND id IN (SELECT value FROM json_each(?2)) ORDER BY seq").all(tenantId, JSON.stringify(ids)) as BulkTarget[];
    },
    memberExists: async (tenantId: string, userId: string) => userOf.get(tenantId, userId) !== null,
    async setTotal(tenantId: string, jobId: string, total: number, leaseUntil: number) {
      await writeTxAsync(db, () => stmt("UPDATE crm_jobs SET total = ?3, lease_until = ?4 WHERE tenant_id = ?1 AND id = ?2 AND status = 'running'").run(tenantId, jobId, total, leaseUntil));
    },

    async apply(tenantId: string, jobId: string, now: number, leaseUntil: number, targets: BulkTarget[], change: BulkChange, actor: EventActor) {
      return writeTxAsync(db, () => {
        let n = lastUndo.get(tenantId, jobId)?.n ?? 0;
        let updated = 0;
        const updates = batchUpdates();
        // The deleted deals go in one statement too (after their undo entries read what they held).
        const deleted: number[] = [];
        const events: NewEvent[] = [];
        const job = { job_id: jobId };
        const set = "set" in change ? change.set : null;
        if (set?.stage !== undefined && !stageExists.get(tenantId, set.stage)) throw new BulkTargetGone("stage");
        let user: User | null = null;
        if (typeof set?.assigned_to === "string" && !(user = userOf.get(tenantId, set.assigned_to))) throw new BulkTargetGone("assigned_to");
        for (const t of targets) {
          const cur = rowBySeq.get(t.seq, tenantId);
          if (!cur) continue;
          if (!set) {
            const entry: DeletedEntry = { row: storedRow(cur.seq), activities: activitiesOf.all(tenantId, cur.id), notes: notesOf.all(tenantId, cur.id) };
            addUndo.run(tenantId, jobId, ++n, "deal_deleted", cur.id, JSON.stringify(entry));
            deleted.push(cur.seq);
            events.push({ type: "deal.deleted", actor, data: { id: cur.id, title: cur.title, ...job } });
            updated++;
            continue;
          }
          const stage = set.stage !== undefined && set.stage !== cur.stage ? set.stage : undefined;
          const assignee = set.assigned_to !== undefined && set.assigned_to !== cur.assigned_to ? { id: set.assigned_to, user } : undefined;
          if (stage === undefined && assignee === undefined) continue;
          const entry: SetEntry = {
            before: { stage: cur.stage, stage_changed_at: cur.stage_changed_at, assigned_to: cur.assigned_to },
            set: { ...(stage !== undefined ? { stage } : {}), ...(assignee ? { assigned_to: assignee.id } : {}) },
          };
          addUndo.run(tenantId, jobId, ++n, "deal_set", cur.id, JSON.stringify(entry));
          const event = changeDeal(updates, tenantId, cur, { stage, assignee }, now, actor, job);
          if (event) events.push(event);
          updated++;
        }
        updates.write();
        if (deleted.length > 0) removeDeals.run(JSON.stringify(deleted));
        if (progress.run(tenantId, jobId, targets.length, updated, targets.length - updated, leaseUntil).changes !== 1) throw new Error("the job is no longer running");
        others.appendEventsInTx(tenantId, events, now);
        return { updated, unchanged: targets.length - updated };
      });
    },

    async revert(tenantId: string, jobId: string, undoJobId: string | null, now: number, leaseUntil: number, limit: number, actor: EventActor): Promise<Reverted> {
      return writeTxAsync(db, () => {
        const entries = newestUndo.all(tenantId, jobId, limit);
        const updates = batchUpdates();
        const out: Reverted = { entries: entries.length, reverted: 0, restored: 0, skipped: 0 };
        const job = { job_id: undoJobId ?? jobId, undo_of: jobId };
        const events: NewEvent[] = [];
        for (const u of entries) {
          if (u.entity === "deal_deleted") {
            const e = JSON.parse(u.before) as DeletedEntry;
            e.row = withNoteText(e.row, e.notes);
            if (rowById.get(tenantId, u.record_id) || !restoreRow(e)) {
              out.skipped++;
              continue;
            }
            for (const a of e.activities) insertRow("deal_activities", a);
            for (const nt of e.notes) insertRow("deal_notes", nt);
            addActivity(tenantId, u.record_id, restoredEntry(newId, actor.id, now, job));
            events.push({ type: "deal.created", actor, data: { id: u.record_id, ...pick(e.row as never, DEAL_EVENT_FIELDS), ...job } });
            out.restored++;
            continue;
          }
          const e = JSON.parse(u.before) as SetEntry;
          const cur = rowById.get(tenantId, u.record_id);
          if (!cur) {
            out.skipped++;
            continue;
          }
          // Only what still holds the change's value goes back: a value someone set since stays.
          const stage = e.set.stage !== undefined && cur.stage === e.set.stage && stageExists.get(tenantId, e.before.stage) ? e.before.stage : undefined;
          let assignee: { id: string | null; user: User | null } | undefined;
          if (e.set.assigned_to !== undefined && cur.assigned_to === e.set.assigned_to) {
            const was = e.before.assigned_to;
            const user = was === null ? null : userOf.get(tenantId, was);
            if (was === null || user) assignee = { id: was, user };
          }
          if (stage === undefined && assignee === undefined) {
            out.skipped++;
            continue;
          }
          const event = changeDeal(updates, tenantId, cur, { stage, stageAt: e.before.stage_changed_at, assignee }, now, actor, job);
          if (event) events.push(event);
          out.reverted++;
        }
        updates.write();
        if (entries.length > 0) dropUndoFrom.run(tenantId, jobId, entries[entries.length - 1]!.n);
        if (undoJobId !== null) {
          if (undoProgress.run(tenantId, undoJobId, entries.length, out.reverted, out.restored, out.skipped, leaseUntil).changes !== 1) throw new Error("the undo job is no longer running");
        } else stmt("UPDATE crm_jobs SET lease_until = ?3 WHERE tenant_id = ?1 AND id = ?2 AND status = 'running'").run(tenantId, jobId, leaseUntil);
        others.appendEventsInTx(tenantId, events, now);
        return out;
      });
    },

    undoLeft: async (tenantId: string, jobId: string) => (stmt("SELECT count(*) AS n FROM crm_job_undo WHERE tenant_id = ?1 AND job_id = ?2").get(tenantId, jobId) as { n: number }).n,
    async lastOf(tenantId: string, userId: string): Promise<JobRow | null> {
      return (
        (stmt(`SELECT ${JOB_COLUMNS} FROM crm_jobs WHERE tenant_id = ?1 AND kind = 'deals_bulk' AND user_id = ?2 AND status <> 'failed' ORDER BY created_at DESC, id DESC LIMIT 1`).get(
          tenantId,
          userId,
        ) as JobRow | null) ?? null
      );
    },
    async setDetail(tenantId: string, jobId: string, detail: string) {
      await writeTxAsync(db, () => stmt("UPDATE crm_jobs SET detail = ?3 WHERE tenant_id = ?1 AND id = ?2").run(tenantId, jobId, detail));
    },
  };

  /** Inserts a row as it was read (column names from its keys). */
  function insertRow(table: string, row: Record<string, unknown>): void {
    const cols = Object.keys(row);
    stmt(`INSERT INTO ${table} (${cols.join(", ")}) VALUES (${cols.map(() => "?").join(", ")})`).run(...(cols.map((c) => row[c]) as Array<string | number | null>));
  }
  /** A deleted deal's row back; false when what it names (account, contact, assignee) is gone since. */
  function restoreRow(e: DeletedEntry): boolean {
    try {
      insertRow("deals", e.row);
      return true;
    } catch (err) {
      if (String((err as Error).message).includes("FOREIGN KEY")) return false;
      throw err;
    }
  }

  return store satisfies BulkDealsStore;
}
