import type { AuditStore } from "../security-log/repo";
import type { AccountTokensStore } from "../auth/email/repo";
import type { MagicLinksStore } from "../auth/magic-link/repo";
import type { OidcStore } from "../auth/sign-in-providers/repo";
import type { PasswordStore } from "../auth/password/repo";
import type { SessionsStore } from "../auth/repo";
import type { TwoFactorStore } from "../auth/two-factor/repo";
import type { PasskeysStore } from "../auth/passkeys/repo";
import type { NewDeviceStore } from "../auth/new-device/repo";
import type { DealsQuery } from "../crm/deals-query";
import type { CrmStore } from "../crm/repo";
import type { DemoSeedStore } from "../crm/seed-store";
import type { StagesStore } from "../crm/pipeline-repo";
import type { TransferStore } from "../crm/export-import/repo";
import type { JobsStore } from "../crm/export-import/jobs-repo";
import type { BulkDealsStore } from "../crm/bulk-repo";
import type { Db } from "../db/database";
import type { WalSync } from "../db/group-commit";
import type { IdempotencyStore } from "../idempotency/repo";
import type { MailStore } from "../mail/repo";
import type { ServerKeys } from "../security/key-file";
import type { SecurityStore } from "../security/repo";
import type { TenantsStore } from "../organization/repo";
import type { TenantDeletionStore } from "../organization/deletion-repo";
import type { InvitationsStore } from "../team/invitations-repo";
import type { MembersStore } from "../team/members-repo";
import type { UsersStore } from "../team/repo";
import type { SupportStore } from "../team/support-repo";
import type { EventsStore } from "../events/repo";
import type { WebhooksStore } from "../webhooks/repo";
import type { OperatorStore } from "../operator/repo";

/**
 * Every store the features need, by the interfaces the features declare: what sits above this
 * (services, routes, src/context.ts) never knows which database runs. SQLite implementations live
 * in ./sqlite, PostgreSQL ones in ./postgres, with the same functions.
 */
export interface Stores {
  kind: "sqlite" | "postgres";
  security: SecurityStore;
  sessions: SessionsStore;
  users: UsersStore;
  crm: CrmStore;
  mail: MailStore;
  tenants: TenantsStore;
  /** Deleting an organization in short batches (src/organization/delete.ts). */
  tenantDeletion: TenantDeletionStore;
  accountTokens: AccountTokensStore;
  magicLinks: MagicLinksStore;
  invitations: InvitationsStore;
  members: MembersStore;
  stages: StagesStore;
  dealsQuery: DealsQuery;
  transfer: TransferStore;
  jobs: JobsStore;
  /** Bulk changes of deals (jobs of their own kind, with an undo). */
  bulkDeals: BulkDealsStore;
  /** Reading the audit log (the rows are written through `security`). */
  auditLog: AuditStore;
  events: EventsStore;
  webhooks: WebhooksStore;
  twoFactor: TwoFactorStore;
  oidc: OidcStore;
  passkeys: PasskeysStore;
  passwords: PasswordStore;
  support: SupportStore;
  /** Demo data for `suite seed`. */
  seed: DemoSeedStore;
  /** Idempotency-Keys of creates (src/idempotency). */
  idempotency: IdempotencyStore;
  /** Known devices and the new-device mail's "this wasn't me" links (auth/new-device). */
  newDevices: NewDeviceStore;
  /** The server's operators, their sessions and audit log, and the console's cross-organization reads (src/operator). */
  operators: OperatorStore;
  /** The server's signing and sealing keys (SUITE_JWT_SECRET and SUITE_ENCRYPTION_KEY win over them). */
  keys: ServerKeys;
  /** Resolves when the database answers; rejects when it does not (GET /health). */
  ping(): Promise<void>;
  /** The database's schema version and the one this release migrates to (GET /health/ready). */
  schemaVersion(): Promise<{ current: number; target: number }>;
  /** Resolves once every commit so far is durable: an answer after a write awaits it (http/core.ts). */
  durable(): Promise<void>;
  /** PostgreSQL only: folds the deal search's pending counter rows while the server runs (postgres/search-fold.ts). */
  startSearchFold?(log: (message: string) => void): { stop(): Promise<void> };
  close(): void | Promise<void>;
}

export interface StoresOptions {
  /**
   * PostgreSQL only: a promise the first query waits for before the schema is migrated (tests
   * create their database from a template in it; createContext stays synchronous).
   */
  pgBefore?: Promise<unknown>;
  /** SQLite only: an already open database (tests pass ":memory:" ones); otherwise config.db is opened and migrated. */
  db?: Db;
  /**
   * SQLite only: how commits reach the disk before an answer is sent (see db/group-commit.ts). The
   * server passes walDatasync; without it every commit fsyncs in place (synchronous=FULL).
   */
  walSync?: (file: string) => WalSync;
}
