import type { EventActor } from "../events/repo";
import type { DealActivityStore, RecordActivityStore } from "./activities-repo";
import type { DealsStore } from "./deals-repo";
import type { SavedViewStore } from "./views-repo";

export interface PipelineStageRow {
  id: string;
  tenant_id: string;
  key: string;
  name: string;
  color: string;
  position: number;
  probability: number;
  is_won: number;
  is_lost: number;
  created_at: number;
}

export interface AccountRow {
  id: string;
  tenant_id: string;
  name: string;
  domain: string | null;
  industry: string | null;
  created_at: number;
  updated_at: number;
  /** The id in the system it was imported from (issue 27); absent where a read does not select it. */
  external_id?: string | null;
}

export interface ContactRow {
  id: string;
  tenant_id: string;
  first_name: string;
  last_name: string | null;
  email: string | null;
  phone: string | null;
  account_id: string | null;
  created_at: number;
  updated_at: number;
  external_id?: string | null;
}

type Listed<T> = {
  rows: T[];
  total: number;
};

/**
 * The store of the CRM's stages, accounts and contacts (deals: deals-repo.ts, the deal list:
 * deals-query.ts). Every read names the tenant.
 */
export interface CrmStore {
  deals: DealsStore;
  /** A deal's timeline and notes. */
  activities: DealActivityStore;
  /** An account's and a contact's timelines (written by the account and contact writes below). */
  recordActivities: RecordActivityStore;
  /** Saved views of the deal list and each member's default. */
  views: SavedViewStore;
  stages: (tenantId: string) => Promise<PipelineStageRow[]>;
  stage: (tenantId: string, key: string) => Promise<PipelineStageRow | null>;
  /**
   * Each write appends its event (`pipeline_stage.created`, `account.*`, `contact.*`) in its
   * transaction, and an account's or contact's create and change its timeline entry
   * (record-activity.ts) too; `actor` defaults to the system.
   */
  insertStage(s: Omit<PipelineStageRow, "position"> & {
    position: number | null;
  }, actor?: EventActor): Promise<PipelineStageRow>;
  account: (tenantId: string, id: string) => Promise<AccountRow | null>;
  insertAccount(a: AccountRow, actor?: EventActor): Promise<void>;
  /** A new name shows at once in every deal of the account: same transaction. */
  updateAccount(a: AccountRow, renamed: boolean, actor?: EventActor): Promise<void>;
  /** False when deals still name the account (they need one). */
  deleteAccount(tenantId: string, id: string, now?: number, actor?: EventActor): Promise<boolean>;
  listAccounts(tenantId: string, pattern: string | null, limit: number, offset: number): Promise<Listed<AccountRow>>;
  contact: (tenantId: string, id: string) => Promise<ContactRow | null>;
  insertContact(c: ContactRow, actor?: EventActor): Promise<void>;
  updateContact(c: ContactRow, renamed: boolean, actor?: EventActor): Promise<void>;
  /** The contact's deals keep going, without a contact. */
  deleteContact(tenantId: string, id: string, now?: number, actor?: EventActor): Promise<void>;
  /** `accountId`: only that account's contacts (its page). */
  listContacts(tenantId: string, pattern: string | null, limit: number, offset: number, accountId?: string | null): Promise<Listed<ContactRow>>;
}
