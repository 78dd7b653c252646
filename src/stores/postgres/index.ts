import { createPostgresNewDeviceStore } from "./new-devices";
import type { Stores } from "../interface";
import type { Config } from "../../config";
import { ConfigError } from "../../config";
import { createHash } from "node:crypto";
import { rmSync } from "node:fs";
import { KEY_NAMES, type ServerKeys, generateKeys, keyFileOf, loadServerKeys, readKeyFile } from "../../security/key-file";
import { createPostgresAccountTokensStore } from "./account-tokens";
import { createPostgresAuditStore } from "./audit";
import { createPostgresEventsStore } from "./events";
import { createPostgresWebhooksStore } from "./webhooks";
import { createPostgresCrmStore } from "./crm";
import { createPostgresDealsQuery } from "./deals-query";
import { type Pg, openPostgres } from "./database";
import { createPostgresIdempotencyStore } from "./idempotency";
import { createPostgresInvitationsStore } from "./invitations";
import { createPostgresMagicLinksStore } from "./magic-links";
import { createPostgresMailStore, sealClearOutboxPostgres } from "./mail";
import { type OutboxSeal, createOutboxSeal } from "../../mail/outbox-seal";
import { createPostgresMembersStore } from "./members";
import { migratePostgres, pgTargetVersion, postgresVersion } from "./migrate";
import { createPostgresOidcStore } from "./oidc";
import { createPostgresPasskeysStore } from "./passkeys";
import { createPostgresPasswordStore } from "./passwords";
import { createPostgresSecurityStore } from "./security";
import { createPostgresSeedStore } from "./seed";
import { createPostgresSessionsStore } from "./sessions";
import { createPostgresStagesStore } from "./stages";
import { createPostgresSupportStore } from "./support";
import { createPostgresTenantsStore } from "./tenants";
import { createPostgresTenantDeletionStore } from "./tenant-deletion";
import { createPostgresTransferStore } from "./transfer";
import { createPostgresJobsStore } from "./jobs";
import { createPostgresBulkDealsStore } from "./bulk-deals";
import { createPostgresTwoFactorStore } from "./two-factor";
import { createPostgresUsersStore } from "./users";
import { createPostgresOperatorStore } from "./operator";
import { startPostgresSearchFold } from "./search-fold";

/**
 * Every PostgreSQL store on one pool, wired to each other: a write that spans features runs in one
 * store function, inside `pg.begin`, and calls the other stores' async `…InTx(tx, …)` helpers
 * with its transaction. The other stores are passed as the objects themselves, and their hooks
 * looked up on each call, so that a test wrapping one (mail.enqueueInTx) sees every caller.
 */
export function createPostgresStores(pg: Pg, outboxSeal: OutboxSeal = createOutboxSeal(generateKeys().encryption_key)) {
  const security = createPostgresSecurityStore(pg);
  const sessions = createPostgresSessionsStore(pg, { security });
  const users = createPostgresUsersStore(pg);
  const crm = createPostgresCrmStore(pg);
  const mail = createPostgresMailStore(pg, outboxSeal);
  const tenants = createPostgresTenantsStore(pg, { users, crm, sessions, security });
  const accountTokens = createPostgresAccountTokensStore(pg, { security, mail });
  return {
    security,
    sessions,
    users,
    crm,
    mail,
    tenants,
    tenantDeletion: createPostgresTenantDeletionStore(pg),
    accountTokens,
    magicLinks: createPostgresMagicLinksStore(pg, { security, mail }),
    invitations: createPostgresInvitationsStore(pg, { users, sessions, security, mail }),
    // A renamed member shows at once in every deal assigned to them (docs/interface.md#crm-records); a removed
    // one's deals move in the removal's transaction.
    members: createPostgresMembersStore(pg, {
      security,
      dealsReassignedInTx: (...a) => crm.dealsReassignedInTx(...a),
      assigneeRenamedInTx: (...a) => crm.assigneeRenamedInTx(...a),
    }),
    stages: createPostgresStagesStore(pg, { security }),
    dealsQuery: createPostgresDealsQuery(pg),
    transfer: createPostgresTransferStore(pg, { security }),
    jobs: createPostgresJobsStore(pg, { security }),
    bulkDeals: createPostgresBulkDealsStore(pg),
    auditLog: createPostgresAuditStore(pg),
    events: createPostgresEventsStore(pg),
    webhooks: createPostgresWebhooksStore(pg, { mail }),
    twoFactor: createPostgresTwoFactorStore(pg, { security }),
    oidc: createPostgresOidcStore(pg, { users, security }),
    passkeys: createPostgresPasskeysStore(pg, { security }),
    passwords: createPostgresPasswordStore(pg, { security, tokens: accountTokens, mail }),
    support: createPostgresSupportStore(pg),
    seed: createPostgresSeedStore(pg),
    idempotency: createPostgresIdempotencyStore(pg),
    newDevices: createPostgresNewDeviceStore(pg, { security, mail }),
    operators: createPostgresOperatorStore(pg),
  };
}

export type PostgresStores = ReturnType<typeof createPostgresStores>;

/**
 * A one-way check of the key file's keys (never the keys): kept in the database by the first
 * instance, compared by every later one, so that an instance started with another key file (a
 * machine the file was not copied to) refuses to start instead of signing everyone out.
 */
const keyCheck = (keys: ServerKeys): string =>
  createHash("sha256").update(`workspace-suite key check\n${KEY_NAMES.map((k) => keys[k]).join("\n")}`).digest("base64url");

/** The key file checked against the database (after the migration, before the first query). */
async function checkKeys(setup: Pg, keys: ServerKeys, keyFile: string, created: boolean): Promise<void> {
  const check = keyCheck(keys);
  await setup.begin(async (tx) => {
    await tx.unsafe("SELECT pg_advisory_xact_lock(hashtextextended('suite-key-check', 0))");
    const row = await tx.one<{ value: string }>`SELECT value FROM settings WHERE key = 'key_check'`;
    if (row) {
      if (row.value === check) return;
      throw new ConfigError(
        `the key file ${keyFile} does not hold the keys this PostgreSQL database was made with: copy the key file of the first instance here ` +
          `(every instance must share one; sessions and 2FA secrets depend on it)`,
      );
    }
    if (created && (await tx.one`SELECT 1 AS one FROM users LIMIT 1`)) {
      throw new ConfigError(
        `the key file ${keyFile} is missing, but the PostgreSQL database holds accounts: every session and 2FA secret depends on its keys. ` +
          `Put the key file of the instances that made it there; to start over with new keys instead, delete the 'key_check' row of the settings table`,
      );
    }
    await tx.run`INSERT INTO settings (key, value) VALUES ('key_check', ${check})`;
  });
}

export interface OpenedPostgres {
  stores: Stores;
  /** The pool the stores run on (tests reach into it, as into ctx.db on SQLite). */
  pg: Pg;
}

/**
 * Opens the stores on `url` synchronously (createContext is synchronous): the migration and the
 * key check run on a connection of their own, and every store query waits for them first (the
 * pool's `ready` gate). `ping()` rejects with their error when they failed, so `suite serve`
 * awaits it before listening and exits with the reason.
 */
export function openPostgresStores(config: Config, url: string, opts: { max?: number; before?: Promise<unknown> } = {}): OpenedPostgres {
  // The keys live in the key file beside SUITE_DB (./data/suite.db.keys by default), as on SQLite:
  // instances on one machine share it; on several machines, the same file is copied to each.
  // SUITE_DB=":memory:" (tests): keys of this process alone, as SQLite's in-memory database.
  const keyFile = config.db === ":memory:" ? null : keyFileOf(config.db);
  const existed = keyFile !== null && readKeyFile(keyFile) !== null;
  const keys = keyFile ? loadServerKeys(config.db, { stored: () => ({}), forget: () => {}, holdsAccounts: () => false }) : generateKeys();
  const outboxSeal = createOutboxSeal(config.encryptionKey ?? keys.encryption_key);
  const setup = openPostgres(url, { max: 1 });
  const ready = (async () => {
    try {
      await opts.before;
      await migratePostgres(setup);
      // A key file this start created for a database that refuses it goes again, so that the next
      // start does not find it and take it for the right one.
      if (keyFile) await checkKeys(setup, keys, keyFile, !existed).catch((e) => Promise.reject(existed ? e : (rmSync(keyFile, { force: true }), e)));
      // Unsent mail an earlier release left clear is sealed once the keys are known to be the database's.
      await sealClearOutboxPostgres(setup, outboxSeal);
    } finally {
      await setup.close();
    }
  })();
  // Rejections are answered through the queries and ping(), not as an unhandled rejection.
  ready.catch(() => {});
  const pg = openPostgres(url, { max: opts.max, ready });
  const stores: Stores = {
    kind: "postgres",
    ...createPostgresStores(pg, outboxSeal),
    keys,
    ping: async () => {
      await ready;
      await pg.one`SELECT 1 AS one`;
    },
    schemaVersion: async () => {
      await ready;
      return { current: await postgresVersion(pg), target: pgTargetVersion() };
    },
    // A committed PostgreSQL transaction is durable (synchronous_commit): nothing left to wait for.
    durable: async () => {},
    startSearchFold: (log) => startPostgresSearchFold(pg, log),
    close: () => pg.close(),
  };
  return { stores, pg };
}
