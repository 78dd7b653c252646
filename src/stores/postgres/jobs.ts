import { type NewActivity, importEntry } from "../../crm/deal-activity";
import { recordImportEntry } from "../../crm/record-activity";
import { newId } from "../../kernel/ids";
import { ImportRowError, type JobRow, type JobsStore } from "../../crm/export-import/jobs-repo";
import type { ImportItem } from "../../crm/export-import/import-rows";
import { type Entity, type Outcome, READ, type Resolved, type Stored, TABLE, WRITTEN, resolveItem, undoneDeal } from "../../crm/export-import/upsert";
import type { AuditEntry } from "../../security/repo";
import { type Pg, type PgTx, insertJson } from "./database";
import { isPgUniqueViolation } from "../../kernel/unique-violation";
import { allocateSeqsInTx, lockCrmShared } from "./deals";
import type { PgAuditWriter } from "./stages";
import { appendEventsInTx } from "./events";
import { type EventActor, type NewEvent, SYSTEM_ACTOR } from "../../events/repo";
import { importedEvent } from "../../events/changes";

const actorOf = (userId: string | null | undefined): EventActor => (userId ? { type: "user", id: userId } : SYSTEM_ACTOR);

const JOB_COLUMNS = "tenant_id, id, kind, status, user_id, total, done, added, updated, unchanged, error_count, errors, message, created_at, finished_at, lease_until";
const ENTITIES: Entity[] = ["account", "contact", "deal"];

/**
 * The deal counters' changes of a batch: +1 for each deal written as it is now, -1 as it was; for
 * a transaction that set suite.counters_by_batch (the row triggers off): imports and bulk changes.
 * Counts and sums are added up here; the search grams' states are appended to deal_search_pending,
 * one statement for the batch, for the fold (search-fold.ts) to count.
 */
export async function applyDealCounters(tx: PgTx, tenantId: string, changes: Array<{ sign: 1 | -1; v: Record<string, unknown> }>): Promise<void> {
  if (changes.length === 0) return;
  const counts = new Map<string, number>();
  // A state left and entered by the batch (an edit of other columns) cancels out: not appended.
  const states = new Map<string, { stage: string; assignee: string; text: string; n: number }>();
  // The board's sums (65-deal-sums.sql): count and cents per assignee, stage and currency.
  // Cents in BigInt: a batch of large values passes 2^53.
  const sums = new Map<string, [number, bigint]>();
  for (const { sign, v } of changes) {
    const stage = v.stage as string;
    const assignee = (v.assigned_to as string | null) ?? "";
    const sumKey = `${assignee}\u0000${stage}\u0000${v.currency as string}`;
    const had = sums.get(sumKey) ?? [0, 0n];
    sums.set(sumKey, [had[0] + sign, had[1] + BigInt(sign) * BigInt(v.value_cents as number | string)]);
    for (const a of [assignee, "*"]) counts.set(`${a}\u0000${stage}`, (counts.get(`${a}\u0000${stage}`) ?? 0) + sign);
    const text = v.search_text as string;
    const state = `${stage}\u0000${assignee}\u0000${text}`;
    const known = states.get(state);
    if (known) known.n += sign;
    else states.set(state, { stage, assignee, text, n: sign });
  }
  await tx.run`SELECT deal_counters_lock(${tenantId})`;
  const c = [...counts].filter(([, n]) => n !== 0).map(([k, n]) => [...k.split("\u0000"), n] as [string, string, number]);
  if (c.length > 0) {
    await tx.unsafe("SELECT deal_counts_apply($1, $2::text[], $3::text[], $4::bigint[])", [tenantId, c.map((x) => x[0]), c.map((x) => x[1]), c.map((x) => x[2])]);
  }
  const d = [...sums].filter(([, [n, cents]]) => n !== 0 || cents !== 0n).map(([k, [n, cents]]) => [...k.split("\u0000"), n, String(cents)] as [string, string, string, number, string]);
  if (d.length > 0) {
    await tx.unsafe("SELECT deal_sums_apply($1, $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[])", [
      tenantId, d.map((x) => x[0]), d.map((x) => x[1]), d.map((x) => x[2]), d.map((x) => x[3]), d.map((x) => x[4]),
    ]);
  }
  const p = [...states.values()].filter((x) => x.n !== 0);
  if (p.length > 0) {
    await tx.unsafe(
      `INSERT INTO deal_search_pending (tenant_id, stage, assignee, search_text, sign)
       SELECT $1, u.s, u.a, u.t, u.n FROM unnest($2::text[], $3::text[], $4::text[], $5::smallint[]) AS u(s, a, t, n)`,
      [tenantId, p.map((x) => x.stage), p.map((x) => x.assignee), p.map((x) => x.text), p.map((x) => x.n)],
    );
  }
}

/**
 * Import jobs on PostgreSQL (src/crm/export-import/jobs-repo.ts). A batch costs a fixed number of statements
 * whatever its size: one lookup, one insert and one update a table (JSON row sets), one insert of
 * undo entries, and the deal counters added up in JS and written once (the row triggers are off
 * for the transaction: suite.counters_by_batch, 54-import-jobs.sql), so an import's cost grows
 * with its rows, not their square.
 */
export function createPostgresJobsStore(pg: Pg, deps: { security: PgAuditWriter }) {
  async function applyBatchInTx(tx: PgTx, tenantId: string, jobId: string, now: number, leaseUntil: number, items: ImportItem[], present: ReadonlySet<string>, rows: number) {
    await lockCrmShared(tx, tenantId);
    // The counters once per batch (below), not per row; and the batch's joins by key (an UPDATE …
    // FROM its rows was hashed against the organization's every deal while the planner's
    // statistics lagged behind the import: 10,000 updated rows cost 8.6 s of the server's CPU).
    await tx.run`SELECT set_config('suite.counters_by_batch', 'on', true), set_config('enable_hashjoin', 'off', true), set_config('enable_mergejoin', 'off', true)`;
    const outcome: Outcome = { added: 0, updated: 0, unchanged: 0 };
    let n = (await tx.one<{ n: number | null }>`SELECT max(n) AS n FROM crm_job_undo WHERE tenant_id = ${tenantId} AND job_id = ${jobId}`)?.n ?? 0;
    const undo: object[] = [];
    // One event per record written, in the batch's own transaction (as the API's writes).
    const actor = actorOf((await tx.one<{ user_id: string | null }>`SELECT user_id FROM crm_jobs WHERE tenant_id = ${tenantId} AND id = ${jobId}`)?.user_id);
    const events: NewEvent[] = [];
    const dealChanges: Array<{ sign: 1 | -1; v: Record<string, unknown> }> = [];
    // The deals it adds or changes get a timeline entry each, in this batch's transaction, by the job's user.
    const entries: NewActivity[] = [];
    const entryDeals: string[] = [];
    // So do the accounts and contacts (their own timelines), by entity.
    const recordEntries = { account: { ids: [] as string[], entries: [] as NewActivity[] }, contact: { ids: [] as string[], entries: [] as NewActivity[] } };
    // Accounts, then contacts, then deals: each refers only to records of the tables before it.
    for (const e of ENTITIES) {
      const mine = items.filter((i) => i.entity === e);
      if (mine.length === 0) continue;
      const ids = mine.filter((i) => i.fromFile && i.matchId !== null).map((i) => i.matchId!);
      const externals = mine.filter((i) => i.fromFile && i.externalId !== null).map((i) => i.externalId!);
      // One index probe a key (LATERAL … LIMIT 1): with `id = ANY(…) OR external_id = ANY(…)` the
      // planner, its statistics behind a fresh import's rows, read the organization's every deal
      // for each batch (quadratic in the file).
      const probe = (column: string, n: number) =>
        `SELECT r.* FROM unnest($${n}::text[]) AS k(v) CROSS JOIN LATERAL (
           SELECT id, ${READ[e].join(", ")} FROM ${TABLE[e]} WHERE tenant_id = $1 AND ${column} = k.v LIMIT 1 FOR UPDATE) r`;
      const found = ids.length + externals.length === 0 ? [] : await tx.unsafe<Stored>(`${probe("id", 2)} UNION ALL ${probe("external_id", 3)}`, [tenantId, ids, externals]);
      const byId = new Map(found.map((r) => [r.id, r]));
      const byExternal = new Map(found.filter((r) => r.external_id !== null).map((r) => [r.external_id as string, r]));
      const inserts: Array<Record<string, unknown>> = [];
      const updates: Array<Record<string, unknown>> = [];
      for (const item of mine) {
        let existing: Stored | undefined;
        if (item.fromFile && item.matchId !== null) existing = byId.get(item.matchId);
        if (item.fromFile && !existing && item.externalId !== null) existing = byExternal.get(item.externalId);
        const r: Resolved = resolveItem(item, existing, present);
        if (r.op === "same") {
          if (item.fromFile) outcome.unchanged++;
          continue;
        }
        if (r.op === "insert") {
          inserts.push({ ...r.values, id: r.id, tenant_id: tenantId, created_at: now, updated_at: now });
          undo.push({ tenant_id: tenantId, job_id: jobId, n: ++n, entity: e, record_id: r.id, before: null });
          if (item.fromFile) outcome.added++;
          if (e === "deal") {
            dealChanges.push({ sign: 1, v: r.values });
            entries.push(importEntry(newId, actor.id, now, jobId, null, r.values));
            entryDeals.push(r.id);
          } else {
            recordEntries[e].ids.push(r.id);
            recordEntries[e].entries.push(recordImportEntry(e, newId, actor.id, now, jobId, null, r.values));
          }
          events.push(importedEvent(e, r.id, r.values, null, actor, jobId)!);
        } else {
          if (e !== "deal" && renames(e, r)) {
            const used = await tx.unsafe(`SELECT 1 FROM deals WHERE tenant_id = $1 AND ${e}_id = $2 LIMIT 1`, [tenantId, r.id]);
            if (used.length > 0) throw new ImportRowError(item.line, null, `This row renames a ${e} that deals refer to; rename it in the app, then import again.`);
          }
          updates.push({ ...r.values, id: r.id, tenant_id: tenantId, updated_at: now });
          undo.push({ tenant_id: tenantId, job_id: jobId, n: ++n, entity: e, record_id: r.id, before: JSON.stringify(r.before) });
          outcome.updated++;
          if (e === "deal") {
            dealChanges.push({ sign: -1, v: r.before }, { sign: 1, v: r.values });
            entries.push(importEntry(newId, actor.id, now, jobId, r.before, r.values));
            entryDeals.push(r.id);
          } else {
            recordEntries[e].ids.push(r.id);
            recordEntries[e].entries.push(recordImportEntry(e, newId, actor.id, now, jobId, r.before, r.values));
          }
          const event = importedEvent(e, r.id, r.values, r.before, actor, jobId);
          if (event) events.push(event);
        }
      }
      try {
        if (e === "deal" && inserts.length > 0) {
          const first = await allocateSeqsInTx(tx, tenantId, inserts.length);
          inserts.forEach((d, j) => (d.seq = first + j));
        }
        await insertRows(tx, TABLE[e], inserts);
        if (updates.length > 0) {
          const cols = ["updated_at", ...WRITTEN[e]];
          // A deal's stage_changed_at moves when the stage does (SET reads the row's old values).
          const stageAt = e === "deal" ? "stage_changed_at = CASE WHEN t.stage = x.stage THEN coalesce(t.stage_changed_at, t.updated_at) ELSE x.updated_at END, " : "";
          await tx.unsafe(
            `UPDATE ${TABLE[e]} t SET ${stageAt}${cols.map((c) => `${c} = x.${c}`).join(", ")}
             FROM json_populate_recordset(NULL::${TABLE[e]}, $1::text::json) x WHERE t.tenant_id = x.tenant_id AND t.id = x.id`,
            [JSON.stringify(updates)],
          );
        }
      } catch (err) {
        if (isPgUniqueViolation(err)) throw new ImportRowError(mine[0]!.line, "external_id", "Another record has an external_id of this batch now.");
        throw err;
      }
    }
    if (entries.length > 0) {
      // One statement: each deal's next numbers after its last entry.
      await tx.unsafe(
        `INSERT INTO deal_activities (tenant_id, deal_id, n, id, type, actor_id, created_at, data)
         SELECT $1, u.d, coalesce((SELECT max(a.n) FROM deal_activities a WHERE a.tenant_id = $1 AND a.deal_id = u.d), 0) + row_number() OVER (PARTITION BY u.d ORDER BY u.o),
                u.i, 'imported', $2, $3, u.data
           FROM unnest($4::text[], $5::text[], $6::text[]) WITH ORDINALITY AS u(d, i, data, o)`,
        [tenantId, actor.id, now, entryDeals, entries.map((a) => a.id), entries.map((a) => a.data)],
      );
    }
    for (const [kind, r] of Object.entries(recordEntries)) {
      if (r.ids.length === 0) continue;
      // As the deals' entries: each record's next numbers after its last entry, in one statement (the records are locked by this batch's writes).
      await tx.unsafe(
        `INSERT INTO ${kind}_activities (tenant_id, ${kind}_id, n, id, type, actor_id, created_at, data)
         SELECT $1, u.d, coalesce((SELECT max(a.n) FROM ${kind}_activities a WHERE a.tenant_id = $1 AND a.${kind}_id = u.d), 0) + row_number() OVER (PARTITION BY u.d ORDER BY u.o),
                u.i, 'imported', $2, $3, u.data
           FROM unnest($4::text[], $5::text[], $6::text[]) WITH ORDINALITY AS u(d, i, data, o)`,
        [tenantId, actor.id, now, r.ids, r.entries.map((a) => a.id), r.entries.map((a) => a.data)],
      );
    }
    await insertJson(tx, "crm_job_undo", undo);
    await applyDealCounters(tx, tenantId, dealChanges);
    const changed = await tx.run`UPDATE crm_jobs SET done = done + ${rows}, added = added + ${outcome.added}, updated = updated + ${outcome.updated},
      unchanged = unchanged + ${outcome.unchanged}, lease_until = ${leaseUntil} WHERE tenant_id = ${tenantId} AND id = ${jobId} AND status = 'running'`;
    if (changed !== 1) throw new Error("the job is no longer running");
    await appendEventsInTx(tx, tenantId, events, now);
    return outcome;
  }

  const store = {
    writesOnThisThread: false,
    async create(job: JobRow): Promise<boolean> {
      try {
        await pg.unsafe(`INSERT INTO crm_jobs SELECT * FROM json_populate_record(NULL::crm_jobs, $1::text::json)`, [JSON.stringify(job)]);
        return true;
      } catch (e) {
        if (isPgUniqueViolation(e)) return false;
        throw e;
      }
    },
    get: async (tenantId: string, id: string) => pg.one<JobRow>`SELECT * FROM crm_jobs WHERE tenant_id = ${tenantId} AND id = ${id}`,
    async list(tenantId: string, offset: number, limit: number) {
      const [rows, total] = await Promise.all([
        pg.all<JobRow>`SELECT * FROM crm_jobs WHERE tenant_id = ${tenantId} ORDER BY created_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`,
        pg.one<{ n: number }>`SELECT count(*)::int AS n FROM crm_jobs WHERE tenant_id = ${tenantId}`,
      ]);
      return { rows: [...rows], total: total?.n ?? 0 };
    },
    applyBatch: (tenantId: string, jobId: string, now: number, leaseUntil: number, items: ImportItem[], present: ReadonlySet<string>, rows: number) =>
      pg.begin((tx) => applyBatchInTx(tx, tenantId, jobId, now, leaseUntil, items, present, rows)),

    /** Newest first, row by row with the triggers on (a rollback is rare and its steps short). */
    async undoStep(tenantId: string, jobId: string, limit: number): Promise<number> {
      return pg.begin(async (tx) => {
        await lockCrmShared(tx, tenantId);
        const entries = await tx.all<{ n: number; entity: Entity; record_id: string; before: string | null }>`
          SELECT n, entity, record_id, before FROM crm_job_undo WHERE tenant_id = ${tenantId} AND job_id = ${jobId} ORDER BY n DESC LIMIT ${limit}`;
        for (const u of entries) {
          const table = TABLE[u.entity];
          await tx.run`SAVEPOINT undo_entry`;
          try {
            if (u.before === null) await tx.unsafe(`DELETE FROM ${table} WHERE tenant_id = $1 AND id = $2`, [tenantId, u.record_id]);
            else {
              const cols = WRITTEN[u.entity];
              let before = u.before;
              if (u.entity === "deal") {
                const now = await tx.one<{ note_text: string }>`SELECT note_text FROM deals WHERE tenant_id = ${tenantId} AND id = ${u.record_id} FOR UPDATE`;
                if (now) before = JSON.stringify(undoneDeal(JSON.parse(u.before) as Record<string, unknown>, now.note_text));
              }
              await tx.unsafe(
                `UPDATE ${table} t SET ${cols.map((c) => `${c} = x.${c}`).join(", ")}
                 FROM json_populate_record(NULL::${table}, $1::text::json) x WHERE t.tenant_id = $2 AND t.id = $3`,
                [before, tenantId, u.record_id],
              );
            }
            await tx.run`RELEASE SAVEPOINT undo_entry`;
          } catch (err) {
            // An account or contact the job added that a record written since refers to stays.
            if ((err as { errno?: string; code?: string }).errno !== "23503" && (err as { code?: string }).code !== "23503") throw err;
            await tx.run`ROLLBACK TO SAVEPOINT undo_entry`;
          }
        }
        if (entries.length > 0) await tx.run`DELETE FROM crm_job_undo WHERE tenant_id = ${tenantId} AND job_id = ${jobId} AND n >= ${entries.at(-1)!.n}`;
        return entries.length;
      });
    },
    async dropUndo(tenantId: string, jobId: string, limit: number): Promise<number> {
      return pg.run`DELETE FROM crm_job_undo WHERE tenant_id = ${tenantId} AND job_id = ${jobId} AND n IN (
        SELECT n FROM crm_job_undo WHERE tenant_id = ${tenantId} AND job_id = ${jobId} ORDER BY n LIMIT ${limit})`;
    },
    async finish(tenantId: string, jobId: string, now: number, status: "succeeded" | "failed", message: string | null, errors: string, errorCount: number, audit: AuditEntry | null) {
      await pg.begin(async (tx) => {
        await tx.run`UPDATE crm_jobs SET status = ${status}, finished_at = ${now}, message = ${message}, errors = ${errors}, error_count = ${errorCount}
          WHERE tenant_id = ${tenantId} AND id = ${jobId}`;
        if (audit) await deps.security.auditInTx(tx, audit, now);
        const job = await tx.one<{ user_id: string | null; kind: string; added: number; updated: number; unchanged: number }>`
          SELECT user_id, kind, added, updated, unchanged FROM crm_jobs WHERE tenant_id = ${tenantId} AND id = ${jobId}`;
        if (job && !job.kind.startsWith("deals_bulk")) {
          const data = { job_id: jobId, kind: job.kind, status, added: job.added, updated: job.updated, unchanged: job.unchanged, error_count: errorCount };
          await appendEventsInTx(tx, tenantId, [{ type: "import.finished", actor: actorOf(job.user_id), data }], now);
        }
      });
    },
    async orphans(t: number, keepSince: number) {
      return pg.all<{ tenant_id: string; id: string; kind: string; status: string }>`
        SELECT tenant_id, id, kind, status FROM crm_jobs WHERE status = 'running' AND lease_until < ${t}
        UNION SELECT DISTINCT u.tenant_id, u.job_id, j.kind, j.status FROM crm_job_undo u JOIN crm_jobs j ON j.tenant_id = u.tenant_id AND j.id = u.job_id
        WHERE j.status <> 'running' AND NOT (j.kind = 'deals_bulk' AND j.status = 'succeeded' AND j.finished_at >= ${keepSince})`;
    },
    async runningByKind() {
      return pg.all<{ kind: string; n: number }>`SELECT kind, count(*)::int AS n FROM crm_jobs WHERE status = 'running' GROUP BY kind`;
    },
  };
  return store satisfies JobsStore;
}

/** Whether an account's or contact's update changes the name deals copy. */
const renames = (e: Entity, r: Extract<Resolved, { op: "update" }>) =>
  (e === "account" ? ["name"] : ["first_name", "last_name"]).some((c) => (r.before[c] ?? null) !== (r.values[c] ?? null));

/** Rows given as JSON objects named like the columns, in one statement (a failed one fails the batch). */
async function insertRows(tx: PgTx, table: string, rows: object[]): Promise<void> {
  if (rows.length === 0) return;
  await tx.unsafe(`INSERT INTO ${table} SELECT * FROM json_populate_recordset(NULL::${table}, $1::text::json)`, [JSON.stringify(rows)]);
}
