import type { CrmStore, PipelineStageRow, AccountRow, ContactRow } from "../../crm/repo";
import { type Db, writeTxAsync } from "../../db/database";
import { newId } from "../../kernel/ids";
import { type AppendEventsInTx, createSqliteDealsStore } from "./deals";
import { type EventActor, SYSTEM_ACTOR } from "../../events/repo";
import { ACCOUNT_EVENT_FIELDS, CONTACT_EVENT_FIELDS, STAGE_EVENT_FIELDS, changesOf, pick } from "../../events/changes";
import { createSqliteDealActivityStore } from "./deal-activities";
import { createSqliteSavedViewStore } from "./saved-views";
import { createSqliteRecordActivityStore, recordActivityWriter } from "./record-activities";
import { recordEntriesOfWrite } from "../../crm/record-activity";
import { withKeyMark } from "./idempotency";
import { DEFAULT_STAGES, sortKey } from "../../crm/model";

type Listed<T> = { rows: T[]; total: number };

/**
 * SQL of the CRM's stages, accounts and contacts (deals: deals-repo.ts, the deal list:
 * deals-query.ts). Every statement is prepared once; every read names the tenant.
 */
export function createSqliteCrmStore(db: Db, appendEventsInTx: AppendEventsInTx) {
  const deals = createSqliteDealsStore(db, appendEventsInTx);

  const insertStage = db.prepare<never, [string, string, string, string, string, number, number, number, number, number]>(
    `INSERT INTO pipeline_stages (id, tenant_id, key, name, color, position, probability, is_won, is_lost, created_at)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)`,
  );
  const stages = db.prepare<PipelineStageRow, [string]>("SELECT * FROM pipeline_stages WHERE tenant_id = ?1 ORDER BY position, key");
  const stageByKey = db.prepare<PipelineStageRow, [string, string]>("SELECT * FROM pipeline_stages WHERE tenant_id = ?1 AND key = ?2");
  const nextPosition = db.prepare<{ p: number }, [string]>("SELECT coalesce(max(position) + 1, 0) AS p FROM pipeline_stages WHERE tenant_id = ?1");

  const insertAccount = db.prepare<never, [string, string, string, string | null, string | null, number]>(
    "INSERT INTO accounts (id, tenant_id, name, domain, industry, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)",
  );
  const accountById = db.prepare<AccountRow, [string, string]>("SELECT * FROM accounts WHERE tenant_id = ?1 AND id = ?2");
  const updateAccount = db.prepare<never, [string, string, string, string | null, string | null, number]>(
    "UPDATE accounts SET name = ?3, domain = ?4, industry = ?5, updated_at = ?6 WHERE tenant_id = ?1 AND id = ?2",
  );
  const deleteAccount = db.prepare<never, [string, string]>("DELETE FROM accounts WHERE tenant_id = ?1 AND id = ?2");
  const accountHasDeals = db.prepare<{ one: number }, [string, string]>("SELECT 1 AS one FROM deals WHERE tenant_id = ?1 AND account_id = ?2 LIMIT 1");
  const listAccounts = db.prepare<AccountRow, [string, string | null, number, number]>(
    `SELECT * FROM accounts WHERE tenant_id = ?1 AND (?2 IS NULL OR lower(name) LIKE ?2 ESCAPE '\\' OR lower(domain) LIKE ?2 ESCAPE '\\')
     ORDER BY created_at DESC, id DESC LIMIT ?3 OFFSET ?4`,
  );
  const countAccounts = db.prepare<{ n: number }, [string, string | null]>(
    `SELECT count(*) AS n FROM accounts WHERE tenant_id = ?1 AND (?2 IS NULL OR lower(name) LIKE ?2 ESCAPE '\\' OR lower(domain) LIKE ?2 ESCAPE '\\')`,
  );

  const insertContact = db.prepare<never, [string, string, string, string | null, string | null, string | null, string | null, number]>(
    `INSERT INTO contacts (id, tenant_id, first_name, last_name, email, phone, account_id, created_at, updated_at)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8)`,
  );
  const contactById = db.prepare<ContactRow, [string, string]>("SELECT * FROM contacts WHERE tenant_id = ?1 AND id = ?2");
  const updateContact = db.prepare<never, [string, string, string, string | null, string | null, string | null, string | null, number]>(
    `UPDATE contacts SET first_name = ?3, last_name = ?4, email = ?5, phone = ?6, account_id = ?7, updated_at = ?8
     WHERE tenant_id = ?1 AND id = ?2`,
  );
  const deleteContact = db.prepare<never, [string, string]>("DELETE FROM contacts WHERE tenant_id = ?1 AND id = ?2");
  const contactFilter = `tenant_id = ?1 AND (?2 IS NULL OR lower(first_name || ' ' || coalesce(last_name, '')) LIKE ?2 ESCAPE '\\'
       OR lower(coalesce(email, '')) LIKE ?2 ESCAPE '\\')`;
  const listContacts = db.prepare<ContactRow, [string, string | null, number, number]>(
    `SELECT * FROM contacts WHERE ${contactFilter} ORDER BY created_at DESC, id DESC LIMIT ?3 OFFSET ?4`,
  );
  const countContacts = db.prepare<{ n: number }, [string, string | null]>(`SELECT count(*) AS n FROM contacts WHERE ${contactFilter}`);
  // One account's contacts (its page): the contacts_by_account range.
  const listAccountContacts = db.prepare<ContactRow, [string, string | null, number, number, string]>(
    `SELECT * FROM contacts WHERE ${contactFilter} AND account_id = ?5 ORDER BY created_at DESC, id DESC LIMIT ?3 OFFSET ?4`,
  );
  const countAccountContacts = db.prepare<{ n: number }, [string, string | null, string]>(`SELECT count(*) AS n FROM contacts WHERE ${contactFilter} AND account_id = ?3`);

  const addRecordEntries = recordActivityWriter(db);
  const accountName = db.prepare<{ name: string }, [string, string]>("SELECT name FROM accounts WHERE tenant_id = ?1 AND id = ?2");
  /** A contact's row as its timeline shows it: with its account's name. */
  const contactShown = (c: ContactRow) => ({ ...c, account_name: c.account_id === null ? null : (accountName.get(c.tenant_id, c.account_id)?.name ?? null) });

  const renameAssignee = db.prepare<never, [string, string, string | null, string | null, string]>(
    "UPDATE deals SET assignee_key = ?3, assignee_name = ?4, assignee_email = ?5 WHERE tenant_id = ?1 AND assigned_to = ?2",
  );

  // A removed member's deals (team/members-repo.ts): to another member, or to nobody.
  const reassignDeals = db.prepare<never, [string, string, string | null, string | null, string | null, string | null, number]>(
    `UPDATE deals SET stage_changed_at = coalesce(stage_changed_at, updated_at), assigned_to = ?3, assignee_key = ?4, assignee_name = ?5, assignee_email = ?6, updated_at = ?7
      WHERE tenant_id = ?1 AND assigned_to = ?2`,
  );

  const store = {
    deals,
    activities: createSqliteDealActivityStore(db),
    recordActivities: createSqliteRecordActivityStore(db),
    views: createSqliteSavedViewStore(db),
    /** Run inside signup's transaction. */
    seedDefaultStagesInTx(tenantId: string, now: number) {
      DEFAULT_STAGES.forEach((s, i) => insertStage.run(newId(), tenantId, s.key, s.name, s.color, i, s.probability, s.is_won, s.is_lost, now));
    },
    stages: async (tenantId: string) => stages.all(tenantId),
    stage: async (tenantId: string, key: string) => stageByKey.get(tenantId, key),
    async insertStage(s: Omit<PipelineStageRow, "position"> & { position: number | null }, actor: EventActor = SYSTEM_ACTOR): Promise<PipelineStageRow> {
      // One transaction with its event (withKeyMark adds the Idempotency-Key's mark to it).
      return writeTxAsync(db, () => withKeyMark(db, s.id, () => {
        const position = s.position ?? nextPosition.get(s.tenant_id)!.p;
        insertStage.run(s.id, s.tenant_id, s.key, s.name, s.color, position, s.probability, s.is_won, s.is_lost, s.created_at);
        const row = { ...s, position };
        appendEventsInTx(s.tenant_id, [{ type: "pipeline_stage.created", actor, data: { id: s.id, ...pick(row, STAGE_EVENT_FIELDS) } }], s.created_at);
        return row;
      }));
    },

    account: async (tenantId: string, id: string) => accountById.get(tenantId, id),
    async insertAccount(a: AccountRow, actor: EventActor = SYSTEM_ACTOR): Promise<void> {
      await writeTxAsync(db, () => withKeyMark(db, a.id, () => {
        insertAccount.run(a.id, a.tenant_id, a.name, a.domain, a.industry, a.created_at);
        addRecordEntries("account", a.tenant_id, a.id, recordEntriesOfWrite("account", newId, actor.id, a.created_at, null, { ...a }));
        appendEventsInTx(a.tenant_id, [{ type: "account.created", actor, data: { id: a.id, ...pick(a, ACCOUNT_EVENT_FIELDS) } }], a.created_at);
      }));
    },
    /** A new name shows at once in every deal of the account: same transaction. */
    async updateAccount(a: AccountRow, renamed: boolean, actor: EventActor = SYSTEM_ACTOR): Promise<void> {
      await writeTxAsync(db, () => {
        const before = accountById.get(a.tenant_id, a.id);
        updateAccount.run(a.tenant_id, a.id, a.name, a.domain, a.industry, a.updated_at);
        if (renamed) deals.refreshNamesInTx(a.tenant_id, "account", a.id);
        if (before) addRecordEntries("account", a.tenant_id, a.id, recordEntriesOfWrite("account", newId, actor.id, a.updated_at, { ...before }, { ...a }));
        const changes = before ? changesOf(before, a, ACCOUNT_EVENT_FIELDS) : {};
        if (Object.keys(changes).length > 0) appendEventsInTx(a.tenant_id, [{ type: "account.updated", actor, data: { id: a.id, changes } }], a.updated_at);
      });
    },
    /** False when deals still name the account (they need one). */
    async deleteAccount(tenantId: string, id: string, now: number = Date.now(), actor: EventActor = SYSTEM_ACTOR): Promise<boolean> {
      return writeTxAsync(db, () => {
        if (accountHasDeals.get(tenantId, id)) return false;
        const before = accountById.get(tenantId, id);
        deleteAccount.run(tenantId, id);
        if (before) appendEventsInTx(tenantId, [{ type: "account.deleted", actor, data: { id, name: before.name } }], now);
        return true;
      });
    },
    async listAccounts(tenantId: string, pattern: string | null, limit: number, offset: number): Promise<Listed<AccountRow>> {
      return { rows: listAccounts.all(tenantId, pattern, limit, offset), total: countAccounts.get(tenantId, pattern)!.n };
    },

    contact: async (tenantId: string, id: string) => contactById.get(tenantId, id),
    async insertContact(c: ContactRow, actor: EventActor = SYSTEM_ACTOR): Promise<void> {
      await writeTxAsync(db, () => withKeyMark(db, c.id, () => {
        insertContact.run(c.id, c.tenant_id, c.first_name, c.last_name, c.email, c.phone, c.account_id, c.created_at);
        addRecordEntries("contact", c.tenant_id, c.id, recordEntriesOfWrite("contact", newId, actor.id, c.created_at, null, contactShown(c)));
        appendEventsInTx(c.tenant_id, [{ type: "contact.created", actor, data: { id: c.id, ...pick(c, CONTACT_EVENT_FIELDS) } }], c.created_at);
      }));
    },
    async updateContact(c: ContactRow, renamed: boolean, actor: EventActor = SYSTEM_ACTOR): Promise<void> {
      await writeTxAsync(db, () => {
        const before = contactById.get(c.tenant_id, c.id);
        updateContact.run(c.tenant_id, c.id, c.first_name, c.last_name, c.email, c.phone, c.account_id, c.updated_at);
        if (renamed) deals.refreshNamesInTx(c.tenant_id, "contact", c.id);
        if (before) addRecordEntries("contact", c.tenant_id, c.id, recordEntriesOfWrite("contact", newId, actor.id, c.updated_at, contactShown(before), contactShown(c)));
        const changes = before ? changesOf(before, c, CONTACT_EVENT_FIELDS) : {};
        if (Object.keys(changes).length > 0) appendEventsInTx(c.tenant_id, [{ type: "contact.updated", actor, data: { id: c.id, changes } }], c.updated_at);
      });
    },
    /** The contact's deals keep going, without a contact. */
    async deleteContact(tenantId: string, id: string, now: number = Date.now(), actor: EventActor = SYSTEM_ACTOR): Promise<void> {
      await writeTxAsync(db, () => {
        const before = contactById.get(tenantId, id);
        deals.detachContactInTx(tenantId, id);
        deleteContact.run(tenantId, id);
        if (before) appendEventsInTx(tenantId, [{ type: "contact.deleted", actor, data: { id, first_name: before.first_name, last_name: before.last_name } }], now);
      });
    },
    async listContacts(tenantId: string, pattern: string | null, limit: number, offset: number, accountId: string | null = null): Promise<Listed<ContactRow>> {
      if (accountId !== null) {
        return { rows: listAccountContacts.all(tenantId, pattern, limit, offset, accountId), total: countAccountContacts.get(tenantId, pattern, accountId)!.n };
      }
      return { rows: listContacts.all(tenantId, pattern, limit, offset), total: countContacts.get(tenantId, pattern)!.n };
    },

    /**
     * Called by the users feature inside the transaction that renames a user (or changes their
     * address): every deal assigned to them shows, and sorts by, the new name at once.
     */
    assigneeRenamedInTx(tenantId: string, userId: string, fullName: string | null, email: string): void {
      renameAssignee.run(tenantId, userId, fullName === null ? null : sortKey(fullName), fullName, email);
    },
    /** Moves every deal of `fromUserId` to `to` (null: unassigned), inside the caller's transaction; answers how many. */
    dealsReassignedInTx(tenantId: string, fromUserId: string, to: { id: string; full_name: string | null; email: string } | null, now: number): number {
      const name = to?.full_name ?? null;
      return reassignDeals.run(tenantId, fromUserId, to?.id ?? null, name === null ? null : sortKey(name), name, to?.email ?? null, now).changes;
    },
  };
  return store satisfies CrmStore;
}

export type SqliteCrmStore = ReturnType<typeof createSqliteCrmStore>;
