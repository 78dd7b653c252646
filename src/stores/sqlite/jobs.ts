import type { Statement } from "bun:sqlite";
import { jobPause } from "../../db/fts-merge";
import { type Db, writeTxAsync } from "../../db/database";
import { isSqliteUniqueViolation as isUniqueViolation } from "../../kernel/unique-violation";
import { TENANT_SPAN } from "../../crm/deal-columns";
import { ImportRowError, type JobRow, type JobsStore } from "../../crm/export-import/jobs-repo";
import type { ImportItem } from "../../crm/export-import/import-rows";
import { type Entity, type Outcome, READ, type Stored, TABLE, WRITTEN, resolveItem, undoneDeal } from "../../crm/export-import/upsert";
import type { AuditEntry } from "../../security/repo";
import type { SqliteSecurityStore } from "./security";
import type { AppendEventsInTx } from "./deals";
import { type EventActor, type NewEvent, SYSTEM_ACTOR } from "../../events/repo";
import { importedEvent } from "../../events/changes";
import { importEntry } from "../../crm/deal-activity";
import { recordImportEntry } from "../../crm/record-activity";
import { recordActivityWriter } from "./record-activities";
import { newId } from "../../kernel/ids";
import { activityWriter } from "./deal-activities";
import { dealsInsertFromJson } from "./deal-batches";

/** What blocks a rename by import: deals copy the record's name (see resolveBatchItem). */
const RENAMED: Partial<Record<Entity, { columns: string[]; deals: string }>> = {
  account: { columns: ["name"], deals: "SELECT 1 AS x FROM deals WHERE tenant_id = ?1 AND account_id = ?2 LIMIT 1" },
  contact: { columns: ["first_name", "last_name"], deals: "SELECT 1 AS x FROM deals WHERE tenant_id = ?1 AND contact_id = ?2 LIMIT 1" },
};

/** Import jobs on SQLite (src/crm/export-import/jobs-repo.ts): every batch one IMMEDIATE transaction, nothing awaited inside. */
export function createSqliteJobsStore(db: Db, others: { security: SqliteSecurityStore; appendEventsInTx: AppendEventsInTx }) {
  const prepared = new Map<string, Statement>();
  const stmt = (sql: string): Statement => {
    let s = prepared.get(sql);
    if (!s) prepared.set(sql, (s = db.prepare(sql)));
    return s;
  };
  const JOB_COLUMNS = "tenant_id, id, kind, status, user_id, total, done, added, updated, unchanged, error_count, errors, message, created_at, finished_at, lease_until, detail";

  const byId = (e: Entity) => stmt(`SELECT id, ${READ[e].join(", ")} FROM ${TABLE[e]} WHERE tenant_id = ?1 AND id = ?2`);
  const byExternal = (e: Entity) => stmt(`SELECT id, ${READ[e].join(", ")} FROM ${TABLE[e]} WHERE tenant_id = ?1 AND external_id = ?2`);
  const insertOf = (e: Entity) =>
    stmt(
      `INSERT INTO ${TABLE[e]} (${e === "deal" ? "seq, " : ""}id, tenant_id, created_at, updated_at, ${WRITTEN[e].join(", ")})
       VALUES (${e === "deal" ? "?, " : ""}?, ?, ?, ?, ${WRITTEN[e].map(() => "?").join(", ")})`,
    );
  // A deal's stage_changed_at moves when the stage does (first parameter: the new stage; second: the time).
  const updateOf = (e: Entity, columns: readonly string[]) =>
    stmt(
      `UPDATE ${TABLE[e]} SET ${e === "deal" ? "stage_changed_at = CASE WHEN stage = ? THEN coalesce(stage_changed_at, updated_at) ELSE ? END, " : ""}updated_at = ?, ${columns.map((c) => `${c} = ?`).join(", ")} WHERE tenant_id = ? AND id = ?`,
    );
  // A batch's new deals in one statement (deal-batches.ts says why): the columns insertOf names.
  const insertDeals = dealsInsertFromJson(db, ["seq", "id", "tenant_id", "created_at", "updated_at", ...WRITTEN.deal]);
  const stageArgs = (e: Entity, stage: unknown, now: number): Array<string | number> => (e === "deal" ? [String(stage), now] : []);
  const addActivity = activityWriter(db);
  // The accounts and contacts it adds or changes get their timeline entry too, in the batch's transaction.
  const addRecordEntries = recordActivityWriter(db);
  const tenantNo = db.prepare<{ tenant_no: number; next_deal: number }, [string]>("SELECT tenant_no, next_deal FROM crm_tenants WHERE tenant_id = ?1");
  const newTenantNo = db.prepare("INSERT INTO crm_tenants (tenant_id, tenant_no, next_deal) SELECT ?1, coalesce(max(tenant_no), 0) + 1, 0 FROM crm_tenants");
  const bumpNext = db.prepare("UPDATE crm_tenants SET next_deal = ?2 WHERE tenant_id = ?1");
  const lastUndo = db.prepare<{ n: number | null }, [string, string]>("SELECT max(n) AS n FROM crm_job_undo WHERE tenant_id = ?1 AND job_id = ?2");
  const addUndo = db.prepare("INSERT INTO crm_job_undo (tenant_id, job_id, n, entity, record_id, before) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  const progress = db.prepare(
    "UPDATE crm_jobs SET done = done + ?3, added = added + ?4, updated = updated + ?5, unchanged = unchanged + ?6, lease_until = ?7 WHERE tenant_id = ?1 AND id = ?2 AND status = 'running'",
  );
  const newestUndo = db.prepare<{ n: number; entity: Entity; record_id: string; before: string | null }, [string, string, number]>(
    "SELECT n, entity, record_id, before FROM crm_job_undo WHERE tenant_id = ?1 AND job_id = ?2 ORDER BY n DESC LIMIT ?3",
  );
  const dropUndoFrom = db.prepare("DELETE FROM crm_job_undo WHERE tenant_id = ?1 AND job_id = ?2 AND n >= ?3");
  const oldestUndo = db.prepare<{ n: number }, [string, string, number]>(
    "SELECT n FROM crm_job_undo WHERE tenant_id = ?1 AND job_id = ?2 ORDER BY n LIMIT 1 OFFSET ?3",
  );
  const dropUndoBelow = db.prepare("DELETE FROM crm_job_undo WHERE tenant_id = ?1 AND job_id = ?2 AND n < ?3");
  const dropAllUndo = db.prepare("DELETE FROM crm_job_undo WHERE tenant_id = ?1 AND job_id = ?2");
  const jobSummary = db.prepare<{ user_id: string | null; kind: string; added: number; updated: number; unchanged: number }, [string, string]>(
    "SELECT user_id, kind, added, updated, unchanged FROM crm_jobs WHERE tenant_id = ?1 AND id = ?2",
  );
  /** Who started the job: its records' events name them. */
  const jobActor = (tenantId: string, jobId: string): EventActor => {
    const userId = jobSummary.get(tenantId, jobId)?.user_id;
    return userId ? { type: "user", id: userId } : SYSTEM_ACTOR;
  };

  /**
   * The new deals of a batch, written together by write(). A unique key taken (an external_id
   * written meanwhile) fails the statement whole; the rows are then tried one by one to name the
   * line, as the batch fails anyway.
   */
  function pendingDeals() {
    const rows: Array<{ line: number; args: Array<string | number | null> }> = [];
    const keys = new Set<unknown>();
    return {
      add(line: number, args: Array<string | number | null>, externalId: unknown): void {
        rows.push({ line, args });
        keys.add(args[1]);
        if (externalId !== null && externalId !== undefined) keys.add(externalId);
      },
      holds: (id: string | null, externalId: string | null): boolean => (id !== null && keys.has(id)) || (externalId !== null && keys.has(externalId)),
      write(): void {
        if (rows.length === 0) return;
        try {
          insertDeals(rows.map((r) => r.args));
        } catch (err) {
          if (!isUniqueViolation(err)) throw err;
          for (const r of rows) {
            try {
              insertOf("deal").run(...r.args);
            } catch (one) {
              if (isUniqueViolation(one)) throw new ImportRowError(r.line, "external_id", "Another record has this external_id now.");
              throw one;
            }
          }
          throw err;
        }
        rows.length = 0;
        keys.clear();
      },
    };
  }

  const store = {
    writesOnThisThread: true,
    catchUp: () => jobPause(db),
    async create(job: JobRow): Promise<boolean> {
      try {
        stmt(`INSERT INTO crm_jobs (${JOB_COLUMNS}) VALUES (${JOB_COLUMNS.split(", ").map(() => "?").join(", ")})`).run(
          ...(JOB_COLUMNS.split(", ").map((c) => (job as unknown as Record<string, string | number | null>)[c] ?? null) as Array<string | number | null>),
        );
        return true;
      } catch (e) {
        if (isUniqueViolation(e)) return false;
        throw e;
      }
    },
    get: async (tenantId: string, id: string) => (stmt(`SELECT ${JOB_COLUMNS} FROM crm_jobs WHERE tenant_id = ?1 AND id = ?2`).get(tenantId, id) as JobRow | null) ?? null,
    async list(tenantId: string, offset: number, limit: number) {
      const rows = stmt(`SELECT ${JOB_COLUMNS} FROM crm_jobs WHERE tenant_id = ?1 ORDER BY created_at DESC, id DESC LIMIT ?2 OFFSET ?3`).all(tenantId, limit, offset) as JobRow[];
      const total = (stmt("SELECT count(*) AS n FROM crm_jobs WHERE tenant_id = ?1").get(tenantId) as { n: number }).n;
      return { rows, total };
    },

    async applyBatch(tenantId: string, jobId: string, now: number, leaseUntil: number, items: ImportItem[], present: ReadonlySet<string>, rows: number): Promise<Outcome> {
      return writeTxAsync(db, () => {
        const outcome: Outcome = { added: 0, updated: 0, unchanged: 0 };
        let n = lastUndo.get(tenantId, jobId)?.n ?? 0;
        let seq = -1;
        let dealsAdded = 0;
        // One event per record written, in the batch's own transaction (as the API's writes).
        const actor = jobActor(tenantId, jobId);
        const events: NewEvent[] = [];
        const newDeals = pendingDeals();
        for (const item of items) {
          const e = item.entity;
          // A row matching a deal this batch adds, or renaming what such a deal names, finds it written.
          if (e === "deal" ? newDeals.holds(item.matchId, item.externalId) : item.fromFile && e in RENAMED) newDeals.write();
          let existing: Stored | undefined;
          if (item.fromFile && item.matchId !== null) existing = (byId(e).get(tenantId, item.matchId) as Stored | null) ?? undefined;
          if (item.fromFile && !existing && item.externalId !== null) existing = (byExternal(e).get(tenantId, item.externalId) as Stored | null) ?? undefined;
          const r = resolveItem(item, existing, present);
          if (r.op === "same") {
            if (item.fromFile) outcome.unchanged++;
            continue;
          }
          try {
            if (r.op === "insert") {
              const values = WRITTEN[e].map((c) => r.values[c] as string | number | null);
              if (e === "deal") {
                if (seq < 0) {
                  let t = tenantNo.get(tenantId);
                  if (!t) {
                    newTenantNo.run(tenantId);
                    t = tenantNo.get(tenantId)!;
                  }
                  seq = t.tenant_no * TENANT_SPAN + t.next_deal;
                  dealsAdded = t.next_deal;
                }
                newDeals.add(item.line, [seq++, r.id, tenantId, now, now, ...values], r.values.external_id);
                addActivity(tenantId, r.id, importEntry(newId, actor.id, now, jobId, null, r.values));
                dealsAdded++;
              } else {
                insertOf(e).run(r.id, tenantId, now, now, ...values);
                addRecordEntries(e, tenantId, r.id, [recordImportEntry(e, newId, actor.id, now, jobId, null, r.values)]);
              }
              addUndo.run(tenantId, jobId, ++n, e, r.id, null);
              events.push(importedEvent(e, r.id, r.values, null, actor, jobId)!);
              if (item.fromFile) outcome.added++;
            } else {
              const rename = RENAMED[e];
              if (rename && rename.columns.some((c) => r.before[c] !== r.values[c]) && stmt(rename.deals).get(tenantId, r.id)) {
                throw new ImportRowError(item.line, null, `This row renames a ${e} that deals refer to; rename it in the app, then import again.`);
              }
              const columns = WRITTEN[e];
              updateOf(e, columns).run(...stageArgs(e, r.values.stage, now), now, ...columns.map((c) => r.values[c] as string | number | null), tenantId, r.id);
              if (e === "deal") addActivity(tenantId, r.id, importEntry(newId, actor.id, now, jobId, r.before, r.values));
              else addRecordEntries(e, tenantId, r.id, [recordImportEntry(e, newId, actor.id, now, jobId, r.before, r.values)]);
              addUndo.run(tenantId, jobId, ++n, e, r.id, JSON.stringify(r.before));
              const event = importedEvent(e, r.id, r.values, r.before, actor, jobId);
              if (event) events.push(event);
              outcome.updated++;
            }
          } catch (err) {
            if (isUniqueViolation(err)) throw new ImportRowError(item.line, "external_id", "Another record has this external_id now.");
            throw err;
          }
        }
        newDeals.write();
        if (seq >= 0) bumpNext.run(tenantId, dealsAdded);
        if (progress.run(tenantId, jobId, rows, outcome.added, outcome.updated, outcome.unchanged, leaseUntil).changes !== 1) {
          throw new Error("the job is no longer running");
        }
        others.appendEventsInTx(tenantId, events, now);
        return outcome;
      });
    },

    async undoStep(tenantId: string, jobId: string, limit: number): Promise<number> {
      return writeTxAsync(db, () => {
        const entries = newestUndo.all(tenantId, jobId, limit);
        for (const u of entries) {
          try {
            if (u.before === null) stmt(`DELETE FROM ${TABLE[u.entity]} WHERE tenant_id = ?1 AND id = ?2`).run(tenantId, u.record_id);
            else {
              let before = JSON.parse(u.before) as Record<string, string | number | null>;
              if (u.entity === "deal") {
                const now = stmt("SELECT note_text FROM deals WHERE tenant_id = ?1 AND id = ?2").get(tenantId, u.record_id) as { note_text: string } | null;
                if (!now) continue;
                before = undoneDeal(before, now.note_text) as typeof before;
              }
              const columns = WRITTEN[u.entity];
              const at = Date.now();
              updateOf(u.entity, columns).run(...stageArgs(u.entity, before.stage, at), at, ...columns.map((c) => before[c] ?? null), tenantId, u.record_id);
            }
          } catch (err) {
            // An account or contact the job added that a record written since refers to stays.
            if (!String((err as Error).message).includes("FOREIGN KEY")) throw err;
          }
        }
        if (entries.length > 0) dropUndoFrom.run(tenantId, jobId, entries[entries.length - 1]!.n);
        return entries.length;
      });
    },

    async dropUndo(tenantId: string, jobId: string, limit: number): Promise<number> {
      return writeTxAsync(db, () => {
        const edge = oldestUndo.get(tenantId, jobId, limit);
        if (edge) return dropUndoBelow.run(tenantId, jobId, edge.n).changes;
        return dropAllUndo.run(tenantId, jobId).changes;
      });
    },

    async finish(tenantId: string, jobId: string, now: number, status: "succeeded" | "failed", message: string | null, errors: string, errorCount: number, audit: AuditEntry | null) {
      await writeTxAsync(db, () => {
        stmt("UPDATE crm_jobs SET status = ?3, finished_at = ?4, message = ?5, errors = ?6, error_count = ?7 WHERE tenant_id = ?1 AND id = ?2").run(
          tenantId, jobId, status, now, message, errors, errorCount,
        );
        if (audit) others.security.auditInTx(audit, now);
        const job = jobSummary.get(tenantId, jobId);
        if (job && !job.kind.startsWith("deals_bulk")) {
          const actor: EventActor = job.user_id ? { type: "user", id: job.user_id } : SYSTEM_ACTOR;
          const data = { job_id: jobId, kind: job.kind, status, added: job.added, updated: job.updated, unchanged: job.unchanged, error_count: errorCount };
          others.appendEventsInTx(tenantId, [{ type: "import.finished", actor, data }], now);
        }
      });
    },

    async orphans(t: number, keepSince: number) {
      return stmt(
        `SELECT tenant_id, id, kind, status FROM crm_jobs WHERE status = 'running' AND lease_until < ?1
         UNION SELECT DISTINCT u.tenant_id, u.job_id, j.kind, j.status FROM crm_job_undo u JOIN crm_jobs j ON j.tenant_id = u.tenant_id AND j.id = u.job_id
          WHERE j.status <> 'running' AND NOT (j.kind = 'deals_bulk' AND j.status = 'succeeded' AND j.finished_at >= ?2)`,
      ).all(t, keepSince) as Array<{ tenant_id: string; id: string; kind: string; status: string }>;
    },
    async runningByKind() {
      return stmt("SELECT kind, count(*) AS n FROM crm_jobs WHERE status = 'running' GROUP BY kind").all() as Array<{ kind: string; n: number }>;
    },
  };
  return store satisfies JobsStore;
}
