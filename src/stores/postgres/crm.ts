import type { CrmStore } from "../../crm/repo";
import { newId } from "../../kernel/ids";
import { DEFAULT_STAGES, sortKey } from "../../crm/model";
import type { AccountRow, ContactRow, PipelineStageRow } from "../../crm/repo";
import type { Pg, PgTx } from "./database";
import { createPostgresDealsStore, lockCrmExclusive } from "./deals";
import { keyCreatedInTx } from "./idempotency";
import { appendEventsInTx } from "./events";
import { type EventActor, SYSTEM_ACTOR } from "../../events/repo";
import { ACCOUNT_EVENT_FIELDS, CONTACT_EVENT_FIELDS, STAGE_EVENT_FIELDS, changesOf, pick } from "../../events/changes";
import { createPostgresDealActivityStore } from "./deal-activities";
import { createPostgresSavedViewStore } from "./saved-views";
import { addRecordActivitiesInTx, createPostgresRecordActivityStore } from "./record-activities";
import { recordEntriesOfWrite } from "../../crm/record-activity";

type Listed<T> = { rows: T[]; total: number };

/** A contact's row as its timeline shows it: with its account's name. */
async function contactShown(tx: PgTx, c: ContactRow): Promise<Record<string, unknown>> {
  const account = c.account_id === null ? null : await tx.one<{ name: string }>`SELECT name FROM accounts WHERE tenant_id = ${c.tenant_id} AND id = ${c.account_id}`;
  return { ...c, account_name: account?.name ?? null };
}

// The searches of the account and contact lists (a LIKE pattern from containsPattern, or null).
const ACCOUNT_FILTER = `tenant_id = $1 AND ($2::text IS NULL OR lower(name) LIKE $2 ESCAPE '\\' OR lower(domain) LIKE $2 ESCAPE '\\')`;
const CONTACT_FILTER = `tenant_id = $1 AND ($2::text IS NULL OR lower(first_name || ' ' || coalesce(last_name, '')) LIKE $2 ESCAPE '\\'
  OR lower(coalesce(email, '')) LIKE $2 ESCAPE '\\')`;

/**
 * PostgreSQL twin of src/crm/repo.ts: stages, accounts and contacts, with the same functions and
 * results. Where SQLite relied on being the only writer, each write here says what makes it safe
 * with transactions running at once (see also deals.ts on the tenant's CRM lock).
 */
export function createPostgresCrmStore(pg: Pg) {
  const deals = createPostgresDealsStore(pg);

  const insertStageInTx = (tx: PgTx | Pg, s: PipelineStageRow) => tx.run`
    INSERT INTO pipeline_stages (id, tenant_id, key, name, color, position, probability, is_won, is_lost, created_at)
    VALUES (${s.id}, ${s.tenant_id}, ${s.key}, ${s.name}, ${s.color}, ${s.position}, ${s.probability}, ${s.is_won}, ${s.is_lost}, ${s.created_at})`;

  const store = {
    deals,
    activities: createPostgresDealActivityStore(pg),
    recordActivities: createPostgresRecordActivityStore(pg),
    views: createPostgresSavedViewStore(pg),
    /** Run inside signup's (or tenant creation's) transaction: the default pipeline. */
    async seedDefaultStagesInTx(tx: PgTx, tenantId: string, now: number): Promise<void> {
      for (const [i, s] of DEFAULT_STAGES.entries()) {
        await insertStageInTx(tx, { id: newId(), tenant_id: tenantId, key: s.key, name: s.name, color: s.color, position: i, probability: s.probability, is_won: s.is_won, is_lost: s.is_lost, created_at: now });
      }
    },
    stages: async (tenantId: string) =>
      pg.all<PipelineStageRow>`SELECT * FROM pipeline_stages WHERE tenant_id = ${tenantId} ORDER BY position, key COLLATE "C"`,
    stage: async (tenantId: string, key: string) => pg.one<PipelineStageRow>`SELECT * FROM pipeline_stages WHERE tenant_id = ${tenantId} AND key = ${key}`,
    /**
     * A new stage, last unless a position is given. Under the tenant's CRM lock, so that two new
     * stages never take the same next position and a reorder running meanwhile sees every stage.
     * A duplicate key throws the unique violation, as on SQLite (the service maps it).
     */
    async insertStage(s: Omit<PipelineStageRow, "position"> & { position: number | null }, actor: EventActor = SYSTEM_ACTOR): Promise<PipelineStageRow> {
      return pg.begin(async (tx) => {
        await lockCrmExclusive(tx, s.tenant_id);
        const position =
          s.position ?? (await tx.one<{ p: number }>`SELECT coalesce(max(position) + 1, 0) AS p FROM pipeline_stages WHERE tenant_id = ${s.tenant_id}`)!.p;
        const row = { ...s, position };
        await insertStageInTx(tx, row);
        await keyCreatedInTx(tx, s.id);
        await appendEventsInTx(tx, s.tenant_id, [{ type: "pipeline_stage.created", actor, data: { id: s.id, ...pick(row, STAGE_EVENT_FIELDS) } }], s.created_at);
        return row;
      });
    },

    account: async (tenantId: string, id: string) => pg.one<AccountRow>`SELECT * FROM accounts WHERE tenant_id = ${tenantId} AND id = ${id}`,
    async insertAccount(a: AccountRow, actor: EventActor = SYSTEM_ACTOR): Promise<void> {
      await pg.begin(async (tx) => {
        await tx.run`INSERT INTO accounts (id, tenant_id, name, domain, industry, created_at, updated_at)
          VALUES (${a.id}, ${a.tenant_id}, ${a.name}, ${a.domain}, ${a.industry}, ${a.created_at}, ${a.created_at})`;
        await addRecordActivitiesInTx(tx, "account", a.tenant_id, a.id, recordEntriesOfWrite("account", newId, actor.id, a.created_at, null, { ...a }));
        await keyCreatedInTx(tx, a.id);
        await appendEventsInTx(tx, a.tenant_id, [{ type: "account.created", actor, data: { id: a.id, ...pick(a, ACCOUNT_EVENT_FIELDS) } }], a.created_at);
      });
    },
    /** A new name shows at once in every deal of the account: same transaction, deal writes held off (CRM lock). */
    async updateAccount(a: AccountRow, renamed: boolean, actor: EventActor = SYSTEM_ACTOR): Promise<void> {
      await pg.begin(async (tx) => {
        if (renamed) await lockCrmExclusive(tx, a.tenant_id);
        const before = await tx.one<AccountRow>`SELECT * FROM accounts WHERE tenant_id = ${a.tenant_id} AND id = ${a.id} FOR UPDATE`;
        await tx.run`UPDATE accounts SET name = ${a.name}, domain = ${a.domain}, industry = ${a.industry}, updated_at = ${a.updated_at}
          WHERE tenant_id = ${a.tenant_id} AND id = ${a.id}`;
        if (renamed) await deals.refreshNamesInTx(tx, a.tenant_id, "account", a.id);
        if (before) await addRecordActivitiesInTx(tx, "account", a.tenant_id, a.id, recordEntriesOfWrite("account", newId, actor.id, a.updated_at, { ...before }, { ...a }));
        const changes = before ? changesOf(before, a, ACCOUNT_EVENT_FIELDS) : {};
        if (Object.keys(changes).length > 0) await appendEventsInTx(tx, a.tenant_id, [{ type: "account.updated", actor, data: { id: a.id, changes } }], a.updated_at);
      });
    },
    /**
     * False when deals still name the account (they need one). The account is locked first: a deal
     * being created for it (which locks it FOR KEY SHARE) either commits before the check sees it,
     * or waits and then finds the account gone.
     */
    async deleteAccount(tenantId: string, id: string, now: number = Date.now(), actor: EventActor = SYSTEM_ACTOR): Promise<boolean> {
      return pg.begin(async (tx) => {
        const before = await tx.one<{ name: string }>`SELECT name FROM accounts WHERE tenant_id = ${tenantId} AND id = ${id} FOR UPDATE`;
        if (await tx.one`SELECT 1 AS one FROM deals WHERE tenant_id = ${tenantId} AND account_id = ${id} LIMIT 1`) return false;
        await tx.run`DELETE FROM accounts WHERE tenant_id = ${tenantId} AND id = ${id}`;
        if (before) await appendEventsInTx(tx, tenantId, [{ type: "account.deleted", actor, data: { id, name: before.name } }], now);
        return true;
      });
    },
    async listAccounts(tenantId: string, pattern: string | null, limit: number, offset: number): Promise<Listed<AccountRow>> {
      const [rows, count] = await Promise.all([
        pg.unsafe<AccountRow>(`SELECT * FROM accounts WHERE ${ACCOUNT_FILTER} ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4`, [tenantId, pattern, limit, offset]),
        pg.unsafe<{ n: number }>(`SELECT count(*) AS n FROM accounts WHERE ${ACCOUNT_FILTER}`, [tenantId, pattern]),
      ]);
      return { rows: [...rows], total: count[0]!.n };
    },

    contact: async (tenantId: string, id: string) => pg.one<ContactRow>`SELECT * FROM contacts WHERE tenant_id = ${tenantId} AND id = ${id}`,
    async insertContact(c: ContactRow, actor: EventActor = SYSTEM_ACTOR): Promise<void> {
      await pg.begin(async (tx) => {
        await tx.run`INSERT INTO contacts (id, tenant_id, first_name, last_name, email, phone, account_id, created_at, updated_at)
          VALUES (${c.id}, ${c.tenant_id}, ${c.first_name}, ${c.last_name}, ${c.email}, ${c.phone}, ${c.account_id}, ${c.created_at}, ${c.created_at})`;
        await addRecordActivitiesInTx(tx, "contact", c.tenant_id, c.id, recordEntriesOfWrite("contact", newId, actor.id, c.created_at, null, await contactShown(tx, c)));
        await keyCreatedInTx(tx, c.id);
        await appendEventsInTx(tx, c.tenant_id, [{ type: "contact.created", actor, data: { id: c.id, ...pick(c, CONTACT_EVENT_FIELDS) } }], c.created_at);
      });
    },
    async updateContact(c: ContactRow, renamed: boolean, actor: EventActor = SYSTEM_ACTOR): Promise<void> {
      await pg.begin(async (tx) => {
        if (renamed) await lockCrmExclusive(tx, c.tenant_id);
        const before = await tx.one<ContactRow>`SELECT * FROM contacts WHERE tenant_id = ${c.tenant_id} AND id = ${c.id} FOR UPDATE`;
        await tx.run`UPDATE contacts SET first_name = ${c.first_name}, last_name = ${c.last_name}, email = ${c.email}, phone = ${c.phone},
            account_id = ${c.account_id}, updated_at = ${c.updated_at}
          WHERE tenant_id = ${c.tenant_id} AND id = ${c.id}`;
        if (renamed) await deals.refreshNamesInTx(tx, c.tenant_id, "contact", c.id);
        if (before) {
          const entries = recordEntriesOfWrite("contact", newId, actor.id, c.updated_at, await contactShown(tx, before), await contactShown(tx, c));
          await addRecordActivitiesInTx(tx, "contact", c.tenant_id, c.id, entries);
        }
        const changes = before ? changesOf(before, c, CONTACT_EVENT_FIELDS) : {};
        if (Object.keys(changes).length > 0) await appendEventsInTx(tx, c.tenant_id, [{ type: "contact.updated", actor, data: { id: c.id, changes } }], c.updated_at);
      });
    },
    /** The contact's deals keep going, without a contact (CRM lock: no deal write names it meanwhile). */
    async deleteContact(tenantId: string, id: string, now: number = Date.now(), actor: EventActor = SYSTEM_ACTOR): Promise<void> {
      await pg.begin(async (tx) => {
        await lockCrmExclusive(tx, tenantId);
        await deals.detachContactInTx(tx, tenantId, id);
        const gone = await tx.one<{ first_name: string; last_name: string | null }>`DELETE FROM contacts WHERE tenant_id = ${tenantId} AND id = ${id} RETURNING first_name, last_name`;
        if (gone) await appendEventsInTx(tx, tenantId, [{ type: "contact.deleted", actor, data: { id, ...gone } }], now);
      });
    },
    async listContacts(tenantId: string, pattern: string | null, limit: number, offset: number, accountId: string | null = null): Promise<Listed<ContactRow>> {
      // One account's contacts (its page): the contacts_by_account range.
      const [where, args] = accountId === null ? [CONTACT_FILTER, []] : [`${CONTACT_FILTER} AND account_id = $5`, [accountId]];
      const [rows, count] = await Promise.all([
        pg.unsafe<ContactRow>(`SELECT * FROM contacts WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4`, [tenantId, pattern, limit, offset, ...args]),
        pg.unsafe<{ n: number }>(`SELECT count(*) AS n FROM contacts WHERE ${where.replace("$5", "$3")}`, [tenantId, pattern, ...args]),
      ]);
      return { rows: [...rows], total: count[0]!.n };
    },

    /**
     * Called by the users feature inside the transaction that renames a user (or changes their
     * address): every deal assigned to them shows, and sorts by, the new name at once. One UPDATE
     * of constants: a deal written meanwhile is re-checked and set too (see deals.ts).
     */
    async assigneeRenamedInTx(tx: PgTx, tenantId: string, userId: string, fullName: string | null, email: string): Promise<void> {
      await tx.run`UPDATE deals SET assignee_key = ${fullName === null ? null : sortKey(fullName)}, assignee_name = ${fullName}, assignee_email = ${email}
        WHERE tenant_id = ${tenantId} AND assigned_to = ${userId}`;
    },
    /** Moves every deal of `fromUserId` to `to` (null: unassigned), inside the caller's transaction; answers how many. */
    async dealsReassignedInTx(tx: PgTx, tenantId: string, fromUserId: string, to: { id: string; full_name: string | null; email: string } | null, now: number): Promise<number> {
      const name = to?.full_name ?? null;
      return tx.run`UPDATE deals SET stage_changed_at = coalesce(stage_changed_at, updated_at), assigned_to = ${to?.id ?? null}, assignee_key = ${name === null ? null : sortKey(name)}, assignee_name = ${name},
          assignee_email = ${to?.email ?? null}, updated_at = ${now}
        WHERE tenant_id = ${tenantId} AND assigned_to = ${fromUserId}`;
    },
  };
  return store satisfies CrmStore;
}

export type PostgresCrmStore = ReturnType<typeof createPostgresCrmStore>;
