import type { DealsStore } from "../../crm/deals-repo";
import type { DealFields, DealJoined, DealRow, Missing, WriteResult } from "../../crm/deals-repo";
import { DEAL_COLUMNS, TENANT_SPAN, type DealCopies, dealCopies } from "../../crm/deal-columns";
import { contactName, searchTextOf, sortKey } from "../../crm/model";
import type { Pg, PgQueries, PgTx } from "./database";
import { keyCreatedInTx } from "./idempotency";
import { appendEventsInTx } from "./events";
import { type EventActor, SYSTEM_ACTOR } from "../../events/repo";
import { DEAL_EVENT_FIELDS, dealChangedEvent, pick } from "../../events/changes";
import { type NewActivity, entriesOfWrite } from "../../crm/deal-activity";
import { newId } from "../../kernel/ids";

/**
 * Appends timeline entries inside the caller's transaction, which holds the deal's row locked (a
 * new deal's, or FOR UPDATE): `n` is the deal's next number, one index seek at its last entry.
 */
export async function addActivitiesInTx(tx: PgQueries, tenantId: string, dealId: string, list: NewActivity[]): Promise<void> {
  await addDealsActivitiesInTx(tx, tenantId, list.map((a) => ({ ...a, deal_id: dealId })));
}

/**
 * The same for entries of many deals (a bulk change's batch), in one statement: each deal's are
 * numbered after its last entry, in the order given.
 */
export async function addDealsActivitiesInTx(tx: PgQueries, tenantId: string, list: Array<NewActivity & { deal_id: string }>): Promise<void> {
  if (list.length === 0) return;
  await tx.unsafe(
    `INSERT INTO deal_activities (tenant_id, deal_id, n, id, type, actor_id, created_at, data)
     SELECT $1, u.deal_id,
       coalesce((SELECT max(a.n) FROM deal_activities a WHERE a.tenant_id = $1 AND a.deal_id = u.deal_id COLLATE "C"), 0)
         + row_number() OVER (PARTITION BY u.deal_id ORDER BY u.ord),
       u.id, u.type, u.actor_id, u.created_at, u.data
     FROM json_to_recordset($2::text::json) AS u(ord int, deal_id text, id text, type text, actor_id text, created_at bigint, data text)`,
    [tenantId, JSON.stringify(list.map((a, ord) => ({ ord, ...a })))],
  );
}

/**
 * Concurrency on PostgreSQL (SQLite has one writer, so its deals repo reads then writes freely).
 *
 * A deal copies the names of its account, contact and assignee. Two kinds of writer keep those
 * copies: deal writes (create, change) and renames (account, contact: they rewrite every copy).
 * Each tenant has one advisory lock for this: deal writes take it shared (they run side by side),
 * and the CRM's rewrites of many deals (account and contact renames, a contact's deletion, stage
 * changes) take it exclusive, always as their first step, so no deal write is half-way while a
 * rename reads and rewrites the copies, and no cycle of waits can form.
 *
 * A member's rename runs in the users feature's transaction, which has locked the user's row
 * before it reaches us, so it cannot take that lock first; its UPDATE of the deals sets constants,
 * which PostgreSQL re-applies to a deal changed meanwhile (READ COMMITTED re-checks a row updated
 * by a transaction it waited for). A deal write therefore locks its deal before reading the
 * assignee, and locks a newly named assignee FOR SHARE (waiting for a rename in flight).
 */
export const crmLockKey = (tenantId: string) => `crm:${tenantId}`;
export const lockCrmShared = (tx: PgQueries, tenantId: string) =>
  tx.run`SELECT pg_advisory_xact_lock_shared(hashtextextended(${crmLockKey(tenantId)}, 0))`;
export const lockCrmExclusive = (tx: PgQueries, tenantId: string) =>
  tx.run`SELECT pg_advisory_xact_lock(hashtextextended(${crmLockKey(tenantId)}, 0))`;

/**
 * Gives an organization its deal numbering row: its tenant number from a sequence (schema 54),
 * which never waits for another transaction, so no organization's first deal queues behind
 * another's (before, max + 1 under one advisory lock held to commit did: a long first import in
 * one organization held every other new organization's first deal). Made with the organization
 * (signup, `suite tenant create`) and backfilled by the migration; a no-op when the row exists.
 * A number drawn by a transaction that rolls back is a gap: tenant numbers only need to be distinct.
 */
export const createNumberingInTx = (tx: PgQueries, tenantId: string) =>
  tx.run`INSERT INTO crm_tenants (tenant_id, tenant_no, next_deal) VALUES (${tenantId}, nextval('crm_tenant_no'), 0) ON CONFLICT (tenant_id) DO NOTHING`;

/**
 * The first of `n` deal numbers of the tenant's range (see TENANT_SPAN), allocated atomically: the
 * UPDATE locks the tenant's own counter row until the transaction ends, so two creations never
 * share a number, and no other organization's row is touched. The row is made with the
 * organization; one missing (an organization made by an older release between the migration and
 * now cannot be, but a hand-made one can) is made here without a shared lock.
 */
export async function allocateSeqsInTx(tx: PgTx, tenantId: string, n: number): Promise<number> {
  for (let attempt = 0; attempt < 2; attempt++) {
    const r = await tx.one<{ tenant_no: number; first: number }>`
      UPDATE crm_tenants SET next_deal = next_deal + ${n} WHERE tenant_id = ${tenantId}
      RETURNING tenant_no, next_deal - ${n} AS first`;
    if (r) return r.tenant_no * TENANT_SPAN + r.first;
    await createNumberingInTx(tx, tenantId);
  }
  throw new Error("crm_tenants row missing after insert");
}

/**
 * copy-to-postgres's AFTER_COPY step: the copied crm_tenants keep SQLite's tenant numbers, so the
 * sequence moves past them. No row is added for an organization without deals (the copy checks
 * that crm_tenants holds exactly SQLite's rows); its first deal makes one, waiting on nobody.
 */
export const numberingAfterCopy = {
  name: "crm_tenant_no (the sequence past the copied tenant numbers)",
  run: async (tx: PgQueries): Promise<void> => {
    await tx.unsafe(`SELECT setval('crm_tenant_no', greatest(1, (SELECT coalesce(max(tenant_no), 0) FROM crm_tenants)), (SELECT count(*) > 0 FROM crm_tenants))`);
  },
};

type StageData = { key: string; stage_id: string; stage_name: string; stage_color: string; is_won: number; is_lost: number };
type Named = { seq: number; title: string; notes: string | null; note_text: string; account_name: string; first_name: string | null; last_name: string | null };

/** PostgreSQL twin of src/crm/deals-repo.ts (same functions; `…InTx` helpers take the transaction first). */
export function createPostgresDealsStore(pg: Pg) {
  async function withStages(tenantId: string, rows: DealJoined[], q: PgQueries = pg): Promise<DealJoined[]> {
    if (rows.length === 0) return rows;
    const list = await q.all<StageData>`
      SELECT key, id AS stage_id, name AS stage_name, color AS stage_color, is_won, is_lost FROM pipeline_stages WHERE tenant_id = ${tenantId}`;
    const stages = new Map(list.map((s) => [s.key, s]));
    for (const r of rows) {
      const s = stages.get(r.stage);
      r.stage_id = s?.stage_id ?? null;
      r.stage_name = s?.stage_name ?? null;
      r.stage_color = s?.stage_color ?? null;
      r.is_won = s?.is_won ?? 0;
      r.is_lost = s?.is_lost ?? 0;
    }
    return rows;
  }

  /**
   * The copied names and keys of a deal, from what it references; or what is missing. Account and
   * contact are locked FOR KEY SHARE (a deletion waits for us, or we see it gone); the assignee is
   * locked FOR SHARE when `assigneeChanged` (a rename in flight finishes first; see above).
   */
  async function copiesInTx(tx: PgTx, tenantId: string, f: DealFields, assigneeChanged: boolean, noteText: string): Promise<{ missing: Missing } | { copies: DealCopies }> {
    const account = await tx.one<{ name: string }>`SELECT name FROM accounts WHERE tenant_id = ${tenantId} AND id = ${f.account_id} FOR KEY SHARE`;
    if (!account) return { missing: "account_id" };
    let contact: string | null = null;
    if (f.contact_id !== null) {
      const c = await tx.one<{ first_name: string; last_name: string | null }>`
        SELECT first_name, last_name FROM contacts WHERE tenant_id = ${tenantId} AND id = ${f.contact_id} FOR KEY SHARE`;
      if (!c) return { missing: "contact_id" };
      contact = contactName(c.first_name, c.last_name);
    }
    let user: { full_name: string | null; email: string } | null = null;
    if (f.assigned_to !== null) {
      user = assigneeChanged
        ? await tx.one`SELECT full_name, email FROM users WHERE tenant_id = ${tenantId} AND id = ${f.assigned_to} FOR SHARE`
        : await tx.one`SELECT full_name, email FROM users WHERE tenant_id = ${tenantId} AND id = ${f.assigned_to}`;
      if (!user) return { missing: "assigned_to" };
    }
    const stage = await tx.one`SELECT 1 AS one FROM pipeline_stages WHERE tenant_id = ${tenantId} AND key = ${f.stage}`;
    if (!stage) return { missing: "stage" };
    return { copies: dealCopies(f, account.name, contact, user, noteText) };
  }

  const namedSql = (by: "account" | "contact") => `SELECT d.seq, d.title, d.notes, d.note_text, a.name AS account_name, c.first_name, c.last_name
    FROM deals d JOIN accounts a ON a.tenant_id = d.tenant_id AND a.id = d.account_id
    LEFT JOIN contacts c ON c.tenant_id = d.tenant_id AND c.id = d.contact_id
    WHERE d.tenant_id = $1 AND d.${by}_id = $2`;

  /** Writes the copies of `rows` in one statement (unnest of parallel arrays). */
  async function setNamesInTx(tx: PgTx, tenantId: string, rows: Named[], withContact: boolean): Promise<void> {
    if (rows.length === 0) return;
    const seqs: number[] = [];
    const accountKeys: string[] = [];
    const contactKeys: Array<string | null> = [];
    const texts: string[] = [];
    const accounts: string[] = [];
    const contacts: Array<string | null> = [];
    for (const r of rows) {
      const contact = withContact && r.first_name !== null ? contactName(r.first_name, r.last_name) : null;
      seqs.push(r.seq);
      accountKeys.push(sortKey(r.account_name));
      contactKeys.push(contact === null ? null : sortKey(contact));
      texts.push(searchTextOf(r.title, r.notes, r.account_name, contact, r.note_text));
      accounts.push(r.account_name);
      contacts.push(contact);
    }
    await tx.unsafe(
      `UPDATE deals d SET account_key = u.ak, contact_key = u.ck, search_text = u.st, account_name = u.an, contact_name = u.cn
         FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[]) AS u(seq, ak, ck, st, an, cn)
        WHERE d.tenant_id = $1 AND d.seq = u.seq`,
      [tenantId, seqs, accountKeys, contactKeys, texts, accounts, contacts],
    );
  }

  const insertDealInTx = (tx: PgTx, seq: number, id: string, tenantId: string, now: number, f: DealFields, k: DealCopies) => tx.run`
    INSERT INTO deals (seq, id, tenant_id, created_at, updated_at, stage_changed_at, title, account_id, contact_id, assigned_to, stage, value_cents, currency,
      close_date, probability, notes, custom_data, title_key, account_key, contact_key, assignee_key, search_text, account_name, contact_name,
      assignee_name, assignee_email)
    VALUES (${seq}, ${id}, ${tenantId}, ${now}, ${now}, ${now}, ${f.title}, ${f.account_id}, ${f.contact_id}, ${f.assigned_to}, ${f.stage},
      ${f.value_cents}, ${f.currency}, ${f.close_date}, ${f.probability}, ${f.notes}, ${f.custom_data}, ${sortKey(f.title)},
      ${k[0]}, ${k[1]}, ${k[2]}, ${k[3]}, ${k[4]}, ${k[5]}, ${k[6]}, ${k[7]})`;

  const store = {
    async byId(tenantId: string, id: string): Promise<DealJoined | null> {
      const [row] = await pg.unsafe<DealJoined>(`SELECT ${DEAL_COLUMNS} FROM deals WHERE tenant_id = $1 AND id = $2`, [tenantId, id]);
      return row ? (await withStages(tenantId, [row]))[0]! : null;
    },
    /** Rows read elsewhere (the deal list's first pages) with their stage's data. Async here (SQLite's is not). */
    withStages: (tenantId: string, rows: DealJoined[]): Promise<DealJoined[]> => withStages(tenantId, rows),
    /** The rows of one page, in the order of `seqs`. */
    async bySeqs(tenantId: string, seqs: number[]): Promise<DealJoined[]> {
      if (seqs.length === 0) return [];
      const rows = await pg.unsafe<DealJoined>(`SELECT ${DEAL_COLUMNS} FROM deals WHERE tenant_id = $1 AND seq = ANY($2::bigint[])`, [tenantId, seqs]);
      const at = new Map(rows.map((r) => [r.seq, r]));
      return withStages(tenantId, seqs.map((s) => at.get(s)).filter((r): r is DealJoined => r !== undefined));
    },

    async insert(tenantId: string, id: string, f: DealFields, now: number, actor: EventActor = SYSTEM_ACTOR): Promise<WriteResult> {
      return pg.begin(async (tx) => {
        await lockCrmShared(tx, tenantId);
        const k = await copiesInTx(tx, tenantId, f, true, "");
        if ("missing" in k) return { ok: false, missing: k.missing };
        // The number last: the counter row stays locked only for the INSERT.
        await insertDealInTx(tx, await allocateSeqsInTx(tx, tenantId, 1), id, tenantId, now, f, k.copies);
        await addActivitiesInTx(tx, tenantId, id, entriesOfWrite(newId, actor.id, now, null, f as unknown as Record<string, unknown>));
        await keyCreatedInTx(tx, id);
        await appendEventsInTx(tx, tenantId, [{ type: "deal.created", actor, data: { id, ...pick(f, DEAL_EVENT_FIELDS) } }], now);
        return { ok: true };
      });
    },

    /** `change` gets the stored fields (the deal locked) and answers the new ones, inside the transaction. */
    async update(tenantId: string, id: string, change: (current: DealFields) => DealFields, now: number, actor: EventActor = SYSTEM_ACTOR): Promise<WriteResult> {
      return pg.begin(async (tx) => {
        await lockCrmShared(tx, tenantId);
        const current = await tx.one<DealRow & { note_text: string }>`SELECT * FROM deals WHERE tenant_id = ${tenantId} AND id = ${id} FOR UPDATE`;
        if (!current) return { ok: false, notFound: true };
        const f = change(current);
        // The deal's notes' text stays as its notes left it (deal-activities.ts keeps it).
        const k = await copiesInTx(tx, tenantId, f, f.assigned_to !== current.assigned_to, current.note_text);
        if ("missing" in k) return { ok: false, missing: k.missing };
        const c = k.copies;
        await tx.run`
          UPDATE deals SET updated_at = ${now},
            stage_changed_at = ${f.stage !== current.stage ? now : (current.stage_changed_at ?? current.updated_at)}, title = ${f.title}, account_id = ${f.account_id}, contact_id = ${f.contact_id},
            assigned_to = ${f.assigned_to}, stage = ${f.stage}, value_cents = ${f.value_cents}, currency = ${f.currency},
            close_date = ${f.close_date}, probability = ${f.probability}, notes = ${f.notes}, custom_data = ${f.custom_data},
            title_key = ${sortKey(f.title)}, account_key = ${c[0]}, contact_key = ${c[1]}, assignee_key = ${c[2]}, search_text = ${c[3]},
            account_name = ${c[4]}, contact_name = ${c[5]}, assignee_name = ${c[6]}, assignee_email = ${c[7]}
          WHERE tenant_id = ${tenantId} AND id = ${id}`;
        const after = { ...f, account_name: c[4], contact_name: c[5], assignee_name: c[6], assignee_email: c[7] };
        await addActivitiesInTx(tx, tenantId, id, entriesOfWrite(newId, actor.id, now, current as unknown as Record<string, unknown>, after));
        // The event last: its counter row stays locked only from here to the commit.
        const event = dealChangedEvent(id, current, f, actor);
        if (event) await appendEventsInTx(tx, tenantId, [event], now);
        return { ok: true };
      });
    },

    async remove(tenantId: string, id: string, now: number = Date.now(), actor: EventActor = SYSTEM_ACTOR): Promise<boolean> {
      return pg.begin(async (tx) => {
        const gone = await tx.one<{ title: string }>`DELETE FROM deals WHERE tenant_id = ${tenantId} AND id = ${id} RETURNING title`;
        if (!gone) return false;
        await appendEventsInTx(tx, tenantId, [{ type: "deal.deleted", actor, data: { id, title: gone.title } }], now);
        return true;
      });
    },

    /**
     * After an account or contact is renamed (same transaction, which holds the tenant's CRM lock
     * exclusively): the deals naming it follow.
     */
    async refreshNamesInTx(tx: PgTx, tenantId: string, by: "account" | "contact", id: string): Promise<void> {
      await setNamesInTx(tx, tenantId, await tx.unsafe<Named>(namedSql(by), [tenantId, id]), true);
    },

    /** Before a contact is deleted (same transaction, CRM lock exclusive): its deals lose the contact and its name. */
    async detachContactInTx(tx: PgTx, tenantId: string, contactId: string): Promise<void> {
      const rows = await tx.unsafe<Named>(namedSql("contact"), [tenantId, contactId]);
      await tx.run`UPDATE deals SET contact_id = NULL WHERE tenant_id = ${tenantId} AND contact_id = ${contactId}`;
      await setNamesInTx(tx, tenantId, rows, false);
    },
  };
  return store satisfies DealsStore;
}

export type PostgresDealsStore = ReturnType<typeof createPostgresDealsStore>;
