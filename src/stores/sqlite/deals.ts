import type { DealsStore, DealFields, DealRow, DealJoined, Missing, WriteResult } from "../../crm/deals-repo";
import type { Statement } from "bun:sqlite";
import { type Db, writeTxAsync } from "../../db/database";
import { keyCreatedInTx } from "./idempotency";
import { contactName, searchTextOf, sortKey } from "../../crm/model";
import { entriesOfWrite } from "../../crm/deal-activity";
import { newId } from "../../kernel/ids";
import { activityWriter } from "./deal-activities";

import { DEAL_COLUMNS, TENANT_SPAN, type DealCopies, dealCopies } from "../../crm/deal-columns";
import { type EventActor, type NewEvent, SYSTEM_ACTOR } from "../../events/repo";
import { DEAL_EVENT_FIELDS, dealChangedEvent, pick } from "../../events/changes";

/** Appends events to the organization's log inside the caller's transaction (sqlite/events.ts). */
export type AppendEventsInTx = (tenantId: string, events: readonly NewEvent[], now: number) => void;

type StageData = { key: string; stage_id: string; stage_name: string; stage_color: string; is_won: number; is_lost: number };

/**
 * Fills in each row's stage data (id, name, color, won/lost) from one read of the tenant's stages.
 * The deal list (deals-query.ts) runs it inside its own read transaction, so that the
 * store's withStages then has nothing left to read.
 */
export function stagesJoiner(db: Db): (tenantId: string, rows: DealJoined[]) => DealJoined[] {
  const stagesOf = db.prepare<StageData, [string]>(
    // (SELECT ?1): a bound tenant id directly compared makes SQLite plan the statement anew each time (see deals-query.ts).
    "SELECT key, id AS stage_id, name AS stage_name, color AS stage_color, is_won, is_lost FROM pipeline_stages WHERE tenant_id = (SELECT ?1)",
  );
  return (tenantId, rows) => {
    const stages = new Map(stagesOf.all(tenantId).map((s) => [s.key, s]));
    for (const r of rows) {
      const s = stages.get(r.stage);
      r.stage_id = s?.stage_id ?? null;
      r.stage_name = s?.stage_name ?? null;
      r.stage_color = s?.stage_color ?? null;
      r.is_won = s?.is_won ?? 0;
      r.is_lost = s?.is_lost ?? 0;
    }
    return rows;
  };
}

/** SQL of single deals: create, read, change, delete, and keeping the copied names current. */
export function createSqliteDealsStore(db: Db, appendEventsInTx: AppendEventsInTx) {
  const byId = db.prepare<DealJoined, [string, string]>(`SELECT ${DEAL_COLUMNS} FROM deals WHERE tenant_id = ?1 AND id = ?2`);
  // A page is read by rowid, one statement per page length (at most 100), and its stages once.
  const bySeqsOfLength = new Map<number, Statement>();
  const bySeqs = (n: number): Statement => {
    let st = bySeqsOfLength.get(n);
    if (!st) {
      // (SELECT ?): a bound tenant id compared directly makes SQLite plan the statement anew each time (deals-query.ts).
      st = db.prepare(`SELECT ${DEAL_COLUMNS} FROM deals WHERE tenant_id = (SELECT ?) AND seq IN (${Array(n).fill("?").join(", ")})`);
      bySeqsOfLength.set(n, st);
    }
    return st;
  };
  const withStages = stagesJoiner(db);
  const rowById = db.prepare<DealRow & { note_text: string }, [string, string]>("SELECT * FROM deals WHERE tenant_id = ?1 AND id = ?2");

  const tenantNo = db.prepare<{ tenant_no: number; next_deal: number }, [string]>("SELECT tenant_no, next_deal FROM crm_tenants WHERE tenant_id = ?1");
  const newTenantNo = db.prepare<never, [string]>(
    "INSERT INTO crm_tenants (tenant_id, tenant_no, next_deal) SELECT ?1, coalesce(max(tenant_no), 0) + 1, 0 FROM crm_tenants",
  );
  const bumpNext = db.prepare<never, [string, number]>("UPDATE crm_tenants SET next_deal = ?2 WHERE tenant_id = ?1");

  const accountName = db.prepare<{ name: string }, [string, string]>("SELECT name FROM accounts WHERE tenant_id = ?1 AND id = ?2");
  const contactNames = db.prepare<{ first_name: string; last_name: string | null }, [string, string]>(
    "SELECT first_name, last_name FROM contacts WHERE tenant_id = ?1 AND id = ?2",
  );
  const userName = db.prepare<{ full_name: string | null; email: string }, [string, string]>(
    "SELECT full_name, email FROM users WHERE tenant_id = ?1 AND id = ?2",
  );
  const stageExists = db.prepare<{ one: number }, [string, string]>("SELECT 1 AS one FROM pipeline_stages WHERE tenant_id = ?1 AND key = ?2");

  const COLUMNS = `title, account_id, contact_id, assigned_to, stage, value_cents, currency, close_date, probability, notes, custom_data,
    title_key, account_key, contact_key, assignee_key, search_text, account_name, contact_name, assignee_name, assignee_email`;
  const insert = db.prepare(
    `INSERT INTO deals (seq, id, tenant_id, created_at, updated_at, stage_changed_at, ${COLUMNS})
     VALUES (?1, ?2, ?3, ?4, ?4, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24)`,
  );
  // An edit sets only the columns whose value changed (and updated_at): SQLite rewrites every
  // index holding a column named in SET, changed or not, so setting all of them rewrote the 19
  // deal indexes and the search index on any edit (22 pages, 88 KB of WAL for a value edit at 1M
  // deals; 4-8 pages so). One statement per set of columns, prepared once.
  const EDITED = COLUMNS.split(",").map((c) => c.trim());
  const STAGE = EDITED.indexOf("stage");
  const addActivity = activityWriter(db);
  const updates = new Map<number, Statement>();
  const updateOf = (mask: number): Statement => {
    let st = updates.get(mask);
    if (!st) {
      const set = EDITED.flatMap((c, i) => (mask & (1 << i) ? [`, ${c} = ?`] : []));
      // stage_changed_at: now when the stage changes; a deal from before it was kept gets its last write's time.
      const stageAt = mask & (1 << STAGE) ? ", stage_changed_at = ?" : ", stage_changed_at = coalesce(stage_changed_at, updated_at)";
      st = db.prepare(`UPDATE deals SET${stageAt.slice(1)}, updated_at = ?${set.join("")} WHERE tenant_id = ? AND id = ?`);
      updates.set(mask, st);
    }
    return st;
  };
  const remove = db.prepare<never, [string, string]>("DELETE FROM deals WHERE tenant_id = ?1 AND id = ?2");

  type Named = { seq: number; title: string; notes: string | null; note_text: string; account_name: string; first_name: string | null; last_name: string | null };
  const NAMED = `SELECT d.seq, d.title, d.notes, d.note_text, a.name AS account_name, c.first_name, c.last_name
    FROM deals d JOIN accounts a ON a.id = d.account_id LEFT JOIN contacts c ON c.id = d.contact_id`;
  const namedByAccount = db.prepare<Named, [string, string]>(`${NAMED} WHERE d.tenant_id = ?1 AND d.account_id = ?2`);
  const namedByContact = db.prepare<Named, [string, string]>(`${NAMED} WHERE d.tenant_id = ?1 AND d.contact_id = ?2`);
  const setNames = db.prepare<never, [number, string, string | null, string, string, string | null]>(
    "UPDATE deals SET account_key = ?2, contact_key = ?3, search_text = ?4, account_name = ?5, contact_name = ?6 WHERE seq = ?1",
  );
  const detachContact = db.prepare<never, [string, string]>("UPDATE deals SET contact_id = NULL WHERE tenant_id = ?1 AND contact_id = ?2");

  /** The copied names and keys of a deal, from what it references; or what is missing. */
  function copiesInTx(tenantId: string, f: DealFields, noteText: string): { missing: Missing } | { copies: DealCopies } {
    const account = accountName.get(tenantId, f.account_id);
    if (!account) return { missing: "account_id" };
    let contact: string | null = null;
    if (f.contact_id !== null) {
      const c = contactNames.get(tenantId, f.contact_id);
      if (!c) return { missing: "contact_id" };
      contact = contactName(c.first_name, c.last_name);
    }
    let user: { full_name: string | null; email: string } | null = null;
    if (f.assigned_to !== null) {
      user = userName.get(tenantId, f.assigned_to);
      if (!user) return { missing: "assigned_to" };
    }
    if (!stageExists.get(tenantId, f.stage)) return { missing: "stage" };
    return { copies: dealCopies(f, account.name, contact, user, noteText) };
  }

  /** The next rowid of the tenant's range (see TENANT_SPAN). */
  function nextSeqInTx(tenantId: string): number {
    let t = tenantNo.get(tenantId);
    if (!t) {
      newTenantNo.run(tenantId);
      t = tenantNo.get(tenantId)!;
    }
    bumpNext.run(tenantId, t.next_deal + 1);
    return t.tenant_no * TENANT_SPAN + t.next_deal;
  }

  const values = (f: DealFields) =>
    [f.title, f.account_id, f.contact_id, f.assigned_to, f.stage, f.value_cents, f.currency, f.close_date, f.probability, f.notes, f.custom_data] as const;

  const store = {
    async byId(tenantId: string, id: string): Promise<DealJoined | null> {
      const row = byId.get(tenantId, id);
      return row ? withStages(tenantId, [row])[0]! : null;
    },
    /** Rows read elsewhere (the deal list's first pages) with their stage's data. */
    // Rows the SQLite deal list read come with their stage data already (stage_id set); rows
    // without it (or whose stage the tenant lacks, which costs one more read) are completed here.
    withStages: async (tenantId: string, rows: DealJoined[]): Promise<DealJoined[]> =>
      rows.length > 0 && rows.every((r) => r.stage_id != null) ? rows : withStages(tenantId, rows),
    /** The rows of one page, in the order of `seqs`. */
    async bySeqs(tenantId: string, seqs: number[]): Promise<DealJoined[]> {
      if (seqs.length === 0) return [];
      const rows = bySeqs(seqs.length).all(tenantId, ...seqs) as DealJoined[];
      const at = new Map(rows.map((r) => [r.seq, r]));
      return withStages(tenantId, seqs.map((s) => at.get(s)).filter((r): r is DealJoined => r !== undefined));
    },

    async insert(tenantId: string, id: string, f: DealFields, now: number, actor: EventActor = SYSTEM_ACTOR): Promise<WriteResult> {
      return writeTxAsync(db, () => {
        const k = copiesInTx(tenantId, f, "");
        if ("missing" in k) return { ok: false, missing: k.missing };
        insert.run(nextSeqInTx(tenantId), id, tenantId, now, ...values(f), sortKey(f.title), ...k.copies);
        for (const a of entriesOfWrite(newId, actor.id, now, null, f as unknown as Record<string, unknown>)) addActivity(tenantId, id, a);
        keyCreatedInTx(db, id);
        appendEventsInTx(tenantId, [{ type: "deal.created", actor, data: { id, ...pick(f, DEAL_EVENT_FIELDS) } }], now);
        return { ok: true };
      });
    },

    /** `change` gets the stored fields and answers the new ones, inside the transaction. */
    async update(tenantId: string, id: string, change: (current: DealFields) => DealFields, now: number, actor: EventActor = SYSTEM_ACTOR): Promise<WriteResult> {
      return writeTxAsync(db, () => {
        const current = rowById.get(tenantId, id);
        if (!current) return { ok: false, notFound: true };
        const f = change(current);
        // The deal's notes' text stays as its notes left it (deal-activities.ts keeps it).
        const k = copiesInTx(tenantId, f, current.note_text);
        if ("missing" in k) return { ok: false, missing: k.missing };
        const next = [...values(f), sortKey(f.title), ...k.copies];
        const stored = current as unknown as Record<string, unknown>;
        const changed: Array<string | number | null> = [];
        let mask = 0;
        for (let i = 0; i < EDITED.length; i++)
          if (next[i] !== stored[EDITED[i]!]) {
            mask |= 1 << i;
            changed.push(next[i]!);
          }
        if (mask & (1 << STAGE)) updateOf(mask).run(now, now, ...changed, tenantId, id);
        else updateOf(mask).run(now, ...changed, tenantId, id);
        const after = { ...f, account_name: k.copies[4], contact_name: k.copies[5], assignee_name: k.copies[6], assignee_email: k.copies[7] };
        for (const a of entriesOfWrite(newId, actor.id, now, stored, after)) addActivity(tenantId, id, a);
        const event = dealChangedEvent(id, current, f, actor);
        if (event) appendEventsInTx(tenantId, [event], now);
        return { ok: true };
      });
    },

    async remove(tenantId: string, id: string, now: number = Date.now(), actor: EventActor = SYSTEM_ACTOR): Promise<boolean> {
      return writeTxAsync(db, () => {
        const current = rowById.get(tenantId, id);
        if (!current) return false;
        remove.run(tenantId, id);
        appendEventsInTx(tenantId, [{ type: "deal.deleted", actor, data: { id, title: current.title } }], now);
        return true;
      });
    },

    /** After an account or contact is renamed (same transaction): the deals naming it follow. */
    refreshNamesInTx(tenantId: string, by: "account" | "contact", id: string): void {
      const rows = (by === "account" ? namedByAccount : namedByContact).all(tenantId, id);
      for (const r of rows) {
        const contact = r.first_name === null ? null : contactName(r.first_name, r.last_name);
        const text = searchTextOf(r.title, r.notes, r.account_name, contact, r.note_text);
        setNames.run(r.seq, sortKey(r.account_name), contact === null ? null : sortKey(contact), text, r.account_name, contact);
      }
    },

    /** Before a contact is deleted (same transaction): its deals lose the contact and its name. */
    detachContactInTx(tenantId: string, contactId: string): void {
      const rows = namedByContact.all(tenantId, contactId);
      detachContact.run(tenantId, contactId);
      for (const r of rows) setNames.run(r.seq, sortKey(r.account_name), null, searchTextOf(r.title, r.notes, r.account_name, null, r.note_text), r.account_name, null);
    },
  };
  return store satisfies DealsStore;
}

export type SqliteDealsStore = ReturnType<typeof createSqliteDealsStore>;
