import type { Stores, StoresOptions } from "../interface";
import type { Config } from "../../config";
import { type Db, openDatabase } from "../../db/database";
import { startGroupCommit } from "../../db/group-commit";
import { CURRENT_PLAN, migrate, targetVersion } from "../../db/migrate";
import { generateKeys, keyFileOf, loadServerKeys, moveStoredKeys } from "../../security/key-file";
import { createSqliteAccountTokensStore } from "./account-tokens";
import { createSqliteAuditStore } from "./audit";
import { createSqliteEventsStore } from "./events";
import { createSqliteCrmStore } from "./crm";
import { createSqliteDealsQuery } from "./deals-query";
import { createSqliteIdempotencyStore } from "./idempotency";
import { createSqliteInvitationsStore } from "./invitations";
import { createSqliteMagicLinksStore } from "./magic-links";
import { createSqliteMailStore, sealClearOutbox } from "./mail";
import { type OutboxSeal, createOutboxSeal } from "../../mail/outbox-seal";
import { createSqliteMembersStore } from "./members";
import { createSqliteNewDeviceStore } from "./new-devices";
import { createSqliteOidcStore } from "./oidc";
import { createSqlitePasskeysStore } from "./passkeys";
import { createSqlitePasswordStore } from "./passwords";
import { createKeyStore, createSqliteSecurityStore } from "./security";
import { createSqliteSeedStore } from "./seed";
import { createSqliteSessionsStore } from "./sessions";
import { createSqliteStagesStore } from "./stages";
import { createSqliteSupportStore } from "./support";
import { createSqliteTenantsStore } from "./tenants";
import { createSqliteTenantDeletionStore } from "./tenant-deletion";
import { createSqliteTransferStore } from "./transfer";
import { createSqliteJobsStore } from "./jobs";
import { createSqliteBulkDealsStore } from "./bulk-deals";
import { createSqliteTwoFactorStore } from "./two-factor";
import { createSqliteUsersStore } from "./users";
import { createSqliteOperatorStore } from "./operator";
import { createSqliteWebhooksStore } from "./webhooks";

/**
 * Every SQLite store on one connection, wired to each other: a write that spans features runs in
 * one store function, which calls the other stores' synchronous `…InTx` helpers inside its
 * `writeTx`. The hooks are looked up on each call (`(...a) => crm.x(...a)`, `others.mail.x(…)`),
 * never kept, so that a test can wrap one on the store object and see every caller go through it.
 */
export function createSqliteStores(db: Db, outboxSeal: OutboxSeal = createOutboxSeal(generateKeys().encryption_key)) {
  const security = createSqliteSecurityStore(db);
  const events = createSqliteEventsStore(db);
  const appendEventsInTx: typeof events.appendInTx = (...a) => events.appendInTx(...a);
  const sessions = createSqliteSessionsStore(db, { security, appendEventsInTx });
  const users = createSqliteUsersStore(db);
  const crm = createSqliteCrmStore(db, appendEventsInTx);
  const mail = createSqliteMailStore(db, outboxSeal);
  // Every event appended writes its webhook deliveries in the same transaction.
  const webhooks = createSqliteWebhooksStore(db, { mail });
  events.setAfterAppendInTx((...a) => webhooks.deliveriesInTx(...a));
  const tenants = createSqliteTenantsStore(db, { users, crm, sessions, security });
  const accountTokens = createSqliteAccountTokensStore(db, { security, mail });
  const auditInTx: typeof security.auditInTx = (...a) => security.auditInTx(...a);
  return {
    security,
    sessions,
    users,
    crm,
    mail,
    tenants,
    tenantDeletion: createSqliteTenantDeletionStore(db),
    accountTokens,
    magicLinks: createSqliteMagicLinksStore(db, { security, mail }),
    invitations: createSqliteInvitationsStore(db, { users, sessions, security, mail, appendEventsInTx }),
    // A renamed user shows at once in every deal assigned to them (docs/interface.md#crm-records); a removed one's
    // deals move in the removal's transaction.
    members: createSqliteMembersStore(db, {
      security,
      dealsReassignedInTx: (...a) => crm.dealsReassignedInTx(...a),
      assigneeRenamedInTx: (...a) => crm.assigneeRenamedInTx(...a),
      appendEventsInTx,
    }),
    stages: createSqliteStagesStore(db, { security, appendEventsInTx }),
    dealsQuery: createSqliteDealsQuery(db),
    transfer: createSqliteTransferStore(db, { security }),
    jobs: createSqliteJobsStore(db, { security, appendEventsInTx }),
    bulkDeals: createSqliteBulkDealsStore(db, { appendEventsInTx }),
    auditLog: createSqliteAuditStore(db),
    events,
    webhooks,
    twoFactor: createSqliteTwoFactorStore(db, { security, appendEventsInTx }),
    oidc: createSqliteOidcStore(db, { users, auditInTx }),
    passkeys: createSqlitePasskeysStore(db, { security }),
    passwords: createSqlitePasswordStore(db, { security, tokens: accountTokens, mail }),
    support: createSqliteSupportStore(db),
    seed: createSqliteSeedStore(db),
    idempotency: createSqliteIdempotencyStore(db),
    newDevices: createSqliteNewDeviceStore(db, { security, mail }),
    operators: createSqliteOperatorStore(db),
  };
}

export type SqliteStores = ReturnType<typeof createSqliteStores>;

/**
 * Opens (or takes) the SQLite database, migrates it, loads the server keys from the key file
 * beside it (or generates them for an in-memory one), and starts group commit when asked.
 */
export function openSqliteStores(config: Config, opts: StoresOptions = {}): Stores & { db: Db } {
  const db = opts.db ?? openDatabase(config.db);
  const keyFile = opts.db || config.db === ":memory:" ? null : config.db;
  migrate(db, CURRENT_PLAN, opts.db ? undefined : config.db, () => keyFile && prepareForCopy(db, keyFile, config));
  const commits = opts.walSync && !opts.db && config.db !== ":memory:" ? startGroupCommit(db, opts.walSync(config.db)) : null;
  // Generated keys live in `<db>.keys` beside the database, never in it (security/key-file.ts); an
  // in-memory database keeps them in memory.
  const keys = keyFile ? loadServerKeys(keyFile, createKeyStore(db)) : generateKeys();
  const stores = createSqliteStores(db, createOutboxSeal(config.encryptionKey ?? keys.encryption_key));
  return {
    kind: "sqlite",
    ...stores,
    keys,
    db,
    // Looked up on each call (db.query caches it) rather than prepared once: a statement prepared
    // up front keeps answering from a connection that has been closed; reading the schema page
    // shows a file that cannot be read.
    ping: async () => void db.query("SELECT count(*) AS n FROM sqlite_master").get(),
    schemaVersion: async () => ({ current: (db.query("PRAGMA user_version").get() as { user_version: number }).user_version, target: targetVersion(CURRENT_PLAN) }),
    durable: commits ? commits.durable : async () => {},
    close: () => {
      commits?.close();
      // close(true) finalizes the prepared statements, so the connection really closes now: the
      // last to close checkpoints the WAL into the file and removes it.
      db.close(true);
    },
  };
}

/**
 * What leaves the database file before a migration copies it to `.v<N>.bak` (migrate's beforeCopy):
 * an earlier release's keys go to the key file (made now if missing; refused without it when the
 * file holds accounts), and the unsent mail it left clear is sealed under the key file's key.
 */
export function prepareForCopy(db: Db, dbFile: string, config: Pick<Config, "encryptionKey">): void {
  const keys = loadServerKeys(dbFile, createKeyStore(db));
  sealClearOutbox(db, createOutboxSeal(config.encryptionKey ?? keys.encryption_key));
}

