/**
 * The CRM stores on each backend behind one shape, so that the contract tests (crm-*.test.ts) run
 * the same assertions on SQLite and PostgreSQL. The few calls whose shapes differ by nature (the
 * `…InTx` helpers, which run inside another feature's transaction; the import's audit) are
 * wrapped here in the transaction their backend uses.
 */
import { createSqliteEventsStore } from "../../src/stores/sqlite/events";
import { writeTx } from "../../src/db/database";
import type { DealJoined, DealsStore } from "../../src/crm/deals-repo";
import type { CrmStore } from "../../src/crm/repo";
import type { StagesStore } from "../../src/crm/pipeline-repo";
import type { DealCursor, ExportedContact, ExportFilter, PeopleCursor, PeopleStep, TransferStore } from "../../src/crm/export-import/repo";
import type { AccountRow, ContactRow } from "../../src/crm/repo";
import type { JobsStore } from "../../src/crm/export-import/jobs-repo";
import { createSqliteJobsStore } from "../../src/stores/sqlite/jobs";
import { createPostgresJobsStore } from "../../src/stores/postgres/jobs";
import type { BulkDealsStore } from "../../src/crm/bulk-repo";
import { createSqliteBulkDealsStore } from "../../src/stores/sqlite/bulk-deals";
import { createPostgresBulkDealsStore } from "../../src/stores/postgres/bulk-deals";
import type { AuditEntry } from "../../src/security/repo";
import { createSqliteCrmStore } from "../../src/stores/sqlite/crm";
import { createSqliteSecurityStore } from "../../src/stores/sqlite/security";
import { createSqliteStagesStore } from "../../src/stores/sqlite/stages";
import { createSqliteTransferStore } from "../../src/stores/sqlite/transfer";
import { createPostgresCrmStore } from "../../src/stores/postgres/crm";
import { openPostgres, type Pg, type PgTx } from "../../src/stores/postgres/database";
import { createPostgresStagesStore, type PgAuditWriter } from "../../src/stores/postgres/stages";
import { createPostgresTransferStore } from "../../src/stores/postgres/transfer";
import { BACKENDS, type Backend } from "./backends";

type MaybeAsync<T> = T | Promise<T>;
export type Deals = Omit<DealsStore, "withStages"> & {
  withStages(tenantId: string, rows: DealJoined[]): MaybeAsync<DealJoined[]>;
};
export type Crm = Omit<CrmStore, "deals"> & { deals: Deals };
export type Stages = StagesStore;
export interface Transfer {
  dealsCsvAfter(tenantId: string, f: ExportFilter, after: DealCursor | null, limit: number): MaybeAsync<{ csv: Uint8Array | null; next: DealCursor | null }>;
  accountsAfter(tenantId: string, pattern: string | null, after: PeopleCursor | null, limit: number): MaybeAsync<PeopleStep<AccountRow>>;
  contactsAfter(tenantId: string, pattern: string | null, after: PeopleCursor | null, limit: number): MaybeAsync<PeopleStep<ExportedContact>>;
  accountNamesAfter: TransferStore["accountNamesAfter"];
  contactNamesAfter: TransferStore["contactNamesAfter"];
  members: TransferStore["members"];
}

export interface Stores {
  crm: Crm;
  stages: Stages;
  transfer: Transfer;
  jobs: JobsStore;
  bulkDeals: BulkDealsStore;
  /** A user's rename as the users feature does it: its row and every deal's copy, one transaction. */
  renameUser(tenantId: string, userId: string, fullName: string | null, email: string): Promise<void>;
  /** A member's removal moving their deals, in one transaction with their row's deletion. */
  removeUser(tenantId: string, userId: string, to: { id: string; full_name: string | null; email: string } | null, now: number): Promise<number>;
}

export interface CrmBackend extends Stores {
  name: "sqlite" | "postgres";
  /** Rows of a read-only query written with $1… placeholders (rewritten to ?1… for SQLite). */
  rows<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  exec(sql: string, params?: unknown[]): Promise<void>;
  /** A tenant with its default stages (the InTx hook, as signup runs it). */
  addTenant(id: string, now?: number): Promise<void>;
  addUser(tenantId: string, id: string, email: string, fullName: string | null): Promise<void>;
  /** The same stores on a second connection pool (PostgreSQL: really concurrent transactions). */
  second(): Promise<Stores>;
  close(): Promise<void>;
}

/** The security store's auditInTx on PostgreSQL, as its own store will write it (a stand-in until merged). */
export const pgAudit: PgAuditWriter = {
  async auditInTx(tx: PgTx, e: AuditEntry, now: number) {
    await tx.run`INSERT INTO audit_log (tenant_id, user_id, action, ip, user_agent, detail, created_at)
      VALUES (${e.tenantId}, ${e.userId}, ${e.action}, ${e.ip}, ${e.userAgent}, ${e.detail ? JSON.stringify(e.detail) : null}, ${now})`;
  },
};

function pgStores(pg: Pg): Stores & { seed(tx: PgTx, tenantId: string, now: number): Promise<void> } {
  const crm = createPostgresCrmStore(pg);
  return {
    crm: crm as unknown as Crm,
    stages: createPostgresStagesStore(pg, { security: pgAudit }),
    transfer: createPostgresTransferStore(pg, { security: pgAudit }),
    jobs: createPostgresJobsStore(pg, { security: pgAudit }),
    bulkDeals: createPostgresBulkDealsStore(pg),
    seed: (tx, tenantId, now) => crm.seedDefaultStagesInTx(tx, tenantId, now),
    renameUser: (tenantId, userId, fullName, email) =>
      pg.begin(async (tx) => {
        await tx.run`UPDATE users SET full_name = ${fullName}, email = ${email} WHERE tenant_id = ${tenantId} AND id = ${userId}`;
        await crm.assigneeRenamedInTx(tx, tenantId, userId, fullName, email);
      }),
    removeUser: (tenantId, userId, to, now) =>
      pg.begin(async (tx) => {
        const n = await crm.dealsReassignedInTx(tx, tenantId, userId, to, now);
        await tx.run`DELETE FROM users WHERE tenant_id = ${tenantId} AND id = ${userId}`;
        return n;
      }),
  };
}

async function wrap(b: Backend): Promise<CrmBackend> {
  const name = b.kind;
  if (b.kind === "sqlite") {
    const db = b.db;
    const security = createSqliteSecurityStore(db);
    const events = createSqliteEventsStore(db);
    const crm = createSqliteCrmStore(db, events.appendInTx);
    const transfer = createSqliteTransferStore(db, { security });
    const q = (sql: string) => sql.replace(/\$(\d+)/g, "?$1");
    const stores: Stores = {
      crm,
      stages: createSqliteStagesStore(db, { security, appendEventsInTx: events.appendInTx }),
      transfer,
      jobs: createSqliteJobsStore(db, { security, appendEventsInTx: events.appendInTx }),
      bulkDeals: createSqliteBulkDealsStore(db, { appendEventsInTx: events.appendInTx }),
      renameUser: async (tenantId, userId, fullName, email) =>
        writeTx(db, () => {
          db.query("UPDATE users SET full_name = ?3, email = ?4 WHERE tenant_id = ?1 AND id = ?2").run(tenantId, userId, fullName, email);
          crm.assigneeRenamedInTx(tenantId, userId, fullName, email);
        }),
      removeUser: async (tenantId, userId, to, now) =>
        writeTx(db, () => {
          const n = crm.dealsReassignedInTx(tenantId, userId, to, now);
          db.query("DELETE FROM users WHERE tenant_id = ?1 AND id = ?2").run(tenantId, userId);
          return n;
        }),
    };
    return {
      name,
      ...stores,
      rows: async <T>(sql: string, params: unknown[] = []) => db.query(q(sql)).all(...(params as [])) as T[],
      exec: async (sql, params = []) => void db.query(q(sql)).run(...(params as [])),
      addTenant: async (id, now = 1_000) =>
        writeTx(db, () => {
          db.query("INSERT INTO tenants (id, name, subdomain, created_at) VALUES (?1, ?1, ?1, ?2)").run(id, now);
          crm.seedDefaultStagesInTx(id, now);
        }),
      addUser: async (tenantId, id, email, fullName) =>
        void db.query("INSERT INTO users (id, tenant_id, email, full_name, role, password_hash, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, 'member', 'x', 1, 1)").run(id, tenantId, email, fullName),
      second: async () => stores,
      close: () => b.close(),
    };
  }
  const pg = b.pg;
  const main = pgStores(pg);
  const pools: Pg[] = [];
  return {
    name,
    ...main,
    rows: async <T>(sql: string, params: unknown[] = []) => [...(await pg.unsafe<T>(sql, params))],
    exec: async (sql, params = []) => void (await pg.unsafe(sql, params)),
    addTenant: (id, now = 1_000) =>
      pg.begin(async (tx) => {
        await tx.run`INSERT INTO tenants (id, name, subdomain, created_at) VALUES (${id}, ${id}, ${id}, ${now})`;
        await main.seed(tx, id, now);
      }),
    addUser: async (tenantId, id, email, fullName) =>
      void (await pg.run`INSERT INTO users (id, tenant_id, email, full_name, role, password_hash, created_at, updated_at)
        VALUES (${id}, ${tenantId}, ${email}, ${fullName}, 'member', 'x', 1, 1)`),
    second: async () => {
      const other = openPostgres(pg.url, { max: 4 });
      pools.push(other);
      return pgStores(other);
    },
    close: async () => {
      for (const p of pools) await p.close();
      await b.close();
    },
  };
}

/** One entry per backend: describe(name) and a fresh, wrapped store set. */
export const CRM_BACKENDS = BACKENDS.map((b) => ({ name: b.name, fresh: async () => wrap(await b.fresh()) }));

/** The fields of a deal, with defaults. */
export const dealFields = (o: Partial<import("../../src/crm/deals-repo").DealFields> & { account_id: string }) => ({
  title: "Deal",
  contact_id: null,
  assigned_to: null,
  stage: "new",
  value_cents: 0,
  currency: "USD",
  close_date: null,
  probability: null,
  notes: null,
  custom_data: null,
  ...o,
});
