import type { AuditStore } from "../audit/repo";
import type { AccountTokensStore } from "../auth/email/repo";
import type { MagicLinksStore } from "../auth/magic-link/repo";
import type { NewDeviceStore } from "../auth/new-device/repo";
import type { OidcStore } from "../auth/oidc/repo";
import type { PasswordStore } from "../auth/password/repo";
import type { SessionsStore } from "../auth/repo";
import type { TwoFactorStore } from "../auth/two-factor/repo";
import type { Config } from "../config";
import type { DealsQuery } from "../crm/deals-query";
import type { CrmStore } from "../crm/repo";
import type { DemoSeedStore } from "../crm/seed-store";
import type { StagesStore } from "../crm/stages-repo";
import type { TransferStore } from "../crm/transfer-repo";
import type { JobsStore } from "../crm/jobs-repo";
import type { Db } from "../db/database";
import type { WalSync } from "../db/group-commit";
import type { IdempotencyStore } from "../idempotency/repo";
import type { MailStore } from "../mail/repo";
import type { ServerKeys } from "../security/key-file";
import type { SecurityStore } from "../security/repo";
import type { TenantsStore } from "../tenants/repo";
import type { InvitationsStore } from "../users/invitations-repo";
import type { MembersStore } from "../users/members-repo";
import type { UsersStore } from "../users/repo";
import type { SupportStore } from "../users/support-repo";
import type { Pg } from "./postgres/database";

/** The PostgreSQL pool type, for the context's test seam (ctx.pg). */
export type { Pg };
import { openPostgresStores } from "./postgres";
import { openSqliteStores } from "./sqlite";

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
  accountTokens: AccountTokensStore;
  magicLinks: MagicLinksStore;
  invitations: InvitationsStore;
  members: MembersStore;
  stages: StagesStore;
  dealsQuery: DealsQuery;
  transfer: TransferStore;
  jobs: JobsStore;
  /** Reading the audit log (the rows are written through `security`). */
  auditLog: AuditStore;
  twoFactor: TwoFactorStore;
  oidc: OidcStore;
  passwords: PasswordStore;
  support: SupportStore;
  /** Demo data for `suite seed`. */
  seed: DemoSeedStore;
  /** Idempotency-Keys of creates (src/idempotency). */
  idempotency: IdempotencyStore;
  /** Known devices and the new-device mail's "this wasn't me" links (auth/new-device). */
  newDevices: NewDeviceStore;
  /** The server's signing and sealing keys (SUITE_JWT_SECRET and SUITE_ENCRYPTION_KEY win over them). */
  keys: ServerKeys;
  /** Resolves when the database answers; rejects when it does not (GET /health). */
  ping(): Promise<void>;
  /** The database's schema version and the one this release migrates to (GET /health/ready). */
  schemaVersion(): Promise<{ current: number; target: number }>;
  /** Resolves once every commit so far is durable: an answer after a write awaits it (http/core.ts). */
  durable(): Promise<void>;
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

/**
 * Opens the configured backend's stores: PostgreSQL when a database URL is set (SUITE_DATABASE_URL,
 * --database-url), else SQLite in config.db. Synchronous on both: PostgreSQL's migration runs
 * behind a gate every query waits for (see postgres/index.ts), and ping() answers whether it worked.
 */
export function openStores(config: Config, opts: StoresOptions = {}): Stores & { db?: Db; pg?: Pg } {
  const url = config.databaseUrl;
  if (url && !opts.db) {
    const { stores, pg } = openPostgresStores(config, url, { before: opts.pgBefore });
    return { ...stores, pg };
  }
  return openSqliteStores(config, opts);
}
