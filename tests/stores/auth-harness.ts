/**
 * The authentication stores on one backend, behind the same calls, for the auth-*.test.ts
 * contract suites. SQLite: today's repos (the functions PostgreSQL's stores spell differently
 * because they take a transaction handle are adapted here). PostgreSQL: src/stores/postgres/*,
 * with small stand-ins for the other groups' stores (audit rows, the outbox, users), and a second
 * set of stores on a second pool, so that a race is two connections, as two instances would be.
 */
import { afterAll, afterEach, beforeAll, beforeEach } from "bun:test";
import type { MagicLinkRow } from "../../src/auth/magic-link/repo";
import { createMagicLinksRepo } from "../../src/auth/magic-link/repo";
import { createAccountTokensRepo, type AccountTokenRow } from "../../src/auth/email/repo";
import { createOidcRepo } from "../../src/auth/oidc/repo";
import { createPasswordRepo } from "../../src/auth/password/repo";
import { createSessionsRepo, type NewSessionRow } from "../../src/auth/repo";
import { createTwoFactorRepo } from "../../src/auth/two-factor/repo";
import { writeTx } from "../../src/db/database";
import { newId } from "../../src/db/ids";
import { createMailRepo, type OutgoingMail } from "../../src/mail/repo";
import { type AuditEntry, createSecurityRepo } from "../../src/security/repo";
import { createUsersRepo, type UserRow } from "../../src/users/repo";
import type { PostgresAccountTokensStore } from "../../src/stores/postgres/account-tokens";
import { createPostgresAuthStores } from "../../src/stores/postgres/auth";
import { openPostgres, type Pg, type PgTx } from "../../src/stores/postgres/database";
import type { PostgresMagicLinksStore } from "../../src/stores/postgres/magic-links";
import type { PostgresOidcStore } from "../../src/stores/postgres/oidc";
import type { PostgresPasswordStore } from "../../src/stores/postgres/passwords";
import type { PostgresSessionsStore } from "../../src/stores/postgres/sessions";
import type { PostgresTwoFactorStore } from "../../src/stores/postgres/two-factor";
import type { BACKENDS, Backend } from "./backends";

type Issue<R> = (r: R, mail: OutgoingMail, entry: (mailId: string) => AuditEntry) => Promise<string>;

/** The calls every backend answers the same way. */
export interface AuthStores {
  sessions: Omit<PostgresSessionsStore, "insertInTx"> & { insertInTx: (s: NewSessionRow) => Promise<void> };
  twoFactor: PostgresTwoFactorStore;
  links: Omit<PostgresMagicLinksStore, "insertInTx" | "issue"> & { issue: Issue<Omit<MagicLinkRow, "used_at">> };
  tokens: Omit<PostgresAccountTokensStore, "insertInTx" | "consumeInTx" | "proveInTx" | "issue"> & { issue: Issue<Omit<AccountTokenRow, "used_at">> };
  passwords: PostgresPasswordStore;
  oidc: PostgresOidcStore;
}

export interface AuthHarness {
  kind: Backend["kind"];
  /** The stores, and two more sets for races (other pools on PostgreSQL, as other instances; the same database on SQLite). */
  a: AuthStores;
  b: AuthStores;
  c: AuthStores;
  /** Raw SQL for seeding and checking, with $1… placeholders on both backends. */
  q<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  tenant(id: string, opts?: { disabledAt?: number }): Promise<void>;
  user(tenantId: string, id: string, email: string, opts?: { createdAt?: number; verifiedAt?: number | null }): Promise<void>;
  close(): Promise<void>;
}

function sqliteStores(db: import("../../src/db/database").Db): AuthStores {
  const security = createSecurityRepo(db);
  const mail = createMailRepo(db);
  const users = createUsersRepo(db);
  const sessions = createSessionsRepo(db, { security });
  const links = createMagicLinksRepo(db);
  const tokens = createAccountTokensRepo(db, { security });
  const mailed = <R>(insertInTx: (r: R) => void): Issue<R> => async (r, m, entry) =>
    writeTx(db, () => {
      insertInTx(r);
      const id = mail.enqueueInTx(m, (r as { created_at: number }).created_at);
      security.auditInTx(entry(id), (r as { created_at: number }).created_at);
      return id;
    });
  return {
    sessions: { ...sessions, insertInTx: async (s) => writeTx(db, () => sessions.insertInTx(s)) },
    twoFactor: createTwoFactorRepo(db, { security }),
    links: { ...links, issue: mailed(links.insertInTx) },
    tokens: { ...tokens, issue: mailed(tokens.insertInTx) },
    passwords: createPasswordRepo(db, { security, tokens }),
    oidc: createOidcRepo(db, { users, auditInTx: security.auditInTx }),
  };
}

/** Stand-ins for the stores other groups write: the same rows, in the caller's transaction. */
const standIns = {
  security: {
    auditInTx: (tx: PgTx, e: AuditEntry, now: number) =>
      tx.run`INSERT INTO audit_log (tenant_id, user_id, action, ip, user_agent, detail, created_at)
        VALUES (${e.tenantId}, ${e.userId}, ${e.action}, ${e.ip}, ${e.userAgent}, ${e.detail ? JSON.stringify(e.detail) : null}, ${now})`,
  },
  mail: {
    async enqueueInTx(tx: PgTx, m: OutgoingMail, now: number): Promise<string> {
      const id = newId();
      await tx.run`INSERT INTO mail_outbox (id, tenant_id, kind, recipient, subject, text_body, html_body, link, status, next_attempt_at, created_at)
        VALUES (${id}, ${m.tenantId}, ${m.kind}, ${m.recipient}, ${m.subject}, ${m.text}, ${m.html}, ${m.link}, 'pending', ${now}, ${now})`;
      return id;
    },
  },
  users: {
    byEmailInTx: (tx: PgTx, tenantId: string, email: string) => tx.one<UserRow>`SELECT * FROM users WHERE tenant_id = ${tenantId} AND email = ${email}`,
    insertInTx: (tx: PgTx, u: Omit<UserRow, "updated_at">) =>
      tx.run`INSERT INTO users (tenant_id, id, email, full_name, role, profile_id, password_hash, created_at, updated_at, email_verified_at)
        VALUES (${u.tenant_id}, ${u.id}, ${u.email}, ${u.full_name}, ${u.role}, ${u.profile_id}, ${u.password_hash}, ${u.created_at}, ${u.created_at}, ${u.email_verified_at ?? null})`,
  },
};

function postgresStores(pg: Pg): AuthStores {
  const s = createPostgresAuthStores(pg, standIns);
  return {
    ...s,
    sessions: { ...s.sessions, insertInTx: (row) => pg.begin((tx) => s.sessions.insertInTx(tx, row)) },
    links: s.magicLinks,
    tokens: s.accountTokens,
  };
}

export function authHarness(backend: Backend): AuthHarness {
  const seeding = (q: AuthHarness["q"]) => ({
    tenant: async (id: string, opts: { disabledAt?: number } = {}) => {
      await q("INSERT INTO tenants (id, name, subdomain, created_at, disabled_at) VALUES ($1, $2, $3, 1000, $4)", [id, `Org ${id}`, `sub-${id}`, opts.disabledAt ?? null]);
    },
    user: async (tenantId: string, id: string, email: string, opts: { createdAt?: number; verifiedAt?: number | null } = {}) => {
      await q(
        `INSERT INTO users (id, tenant_id, email, full_name, role, profile_id, password_hash, created_at, updated_at, email_verified_at)
         VALUES ($1, $2, $3, NULL, 'member', NULL, 'old-hash', $4, $4, $5)`,
        [id, tenantId, email, opts.createdAt ?? 1000, opts.verifiedAt === undefined ? 1000 : opts.verifiedAt],
      );
    },
  });
  if (backend.kind === "sqlite") {
    const db = backend.db;
    const q = async <T>(sql: string, params: unknown[] = []) => db.query(sql.replace(/\$(\d+)/g, "?$1")).all(...(params as never[])) as T[];
    const stores = sqliteStores(db);
    return { kind: "sqlite", a: stores, b: stores, c: stores, q, ...seeding(q), close: backend.close };
  }
  const pg = backend.pg;
  const others = [openPostgres(pg.url, { max: 4 }), openPostgres(pg.url, { max: 4 })];
  const q = async <T>(sql: string, params: unknown[] = []) => [...(await pg.unsafe<T>(sql, params))];
  return {
    kind: "postgres",
    a: postgresStores(pg),
    b: postgresStores(others[0]!),
    c: postgresStores(others[1]!),
    q,
    ...seeding(q),
    close: async () => {
      for (const o of others) await o.close();
      await backend.close();
    },
  };
}

/**
 * Registers the hooks that give each test of a describe an empty database, seeded by `seed`
 * (which also receives the harness). SQLite: a new in-memory database per test. PostgreSQL: one
 * database per describe, every table emptied between tests (a new database per test costs a
 * CREATE DATABASE and the whole schema).
 */
export function useAuthHarness(backend: (typeof BACKENDS)[number], seed: (h: AuthHarness) => Promise<void>): void {
  let h: AuthHarness | null = null;
  if (backend.name === "postgres") {
    let tables: string[] = [];
    beforeAll(async () => {
      h = authHarness(await backend.fresh());
      // Organizations first: their rows go with them (ON DELETE CASCADE), then what is left.
      const rows = await h.q<{ t: string }>("SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename <> 'tenants', tablename");
      tables = rows.map((r) => r.t);
    });
    beforeEach(async () => {
      // DELETE, not TRUNCATE: on these few rows it is 30 ms against TRUNCATE's 850 ms.
      for (const t of tables) await h!.q(`DELETE FROM "${t}"`);
      await seed(h!);
    });
    afterAll(async () => h?.close());
  } else {
    beforeEach(async () => {
      h = authHarness(await backend.fresh());
      await seed(h);
    });
    afterEach(async () => h?.close());
  }
}

/** A new session row for `userId` in `tenantId`. */
export function sessionRow(tenantId: string, userId: string, over: Partial<NewSessionRow> = {}): NewSessionRow {
  const id = newId();
  return { id, sid_hash: `sid-${id}`, tenant_id: tenantId, user_id: userId, method: "password", created_at: 2000, expires_at: 100_000, proven_at: 2000, ip: "127.0.0.1", user_agent: "test", ...over };
}

export const auditOf = (tenantId: string | null, userId: string | null, action: string, detail?: Record<string, unknown>): AuditEntry => ({
  tenantId,
  userId,
  action,
  ip: "127.0.0.1",
  userAgent: "test",
  detail,
});
