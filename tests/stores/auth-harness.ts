import { createOutboxSeal } from "../../src/mail/outbox-seal";
import { generateKeys } from "../../src/security/key-file";
/**
 * The authentication stores on one backend, behind the same calls, for the auth-*.test.ts
 * contract suites: every store wired as the app wires it (createSqliteStores, createPostgresStores),
 * by the feature interfaces. PostgreSQL has a second and third set of stores on pools of their
 * own, so that a race is two connections, as two instances would be.
 */
import { afterAll, afterEach, beforeAll, beforeEach } from "bun:test";
import type { AccountTokensStore } from "../../src/auth/email/repo";
import type { MagicLinksStore } from "../../src/auth/magic-link/repo";
import type { OidcStore } from "../../src/auth/sign-in-providers/repo";
import type { PasskeysStore } from "../../src/auth/passkeys/repo";
import type { NewDeviceStore } from "../../src/auth/new-device/repo";
import type { PasswordStore } from "../../src/auth/password/repo";
import type { NewSessionRow, SessionsStore } from "../../src/auth/repo";
import type { TwoFactorStore } from "../../src/auth/two-factor/repo";
import { writeTx } from "../../src/db/database";
import { newId } from "../../src/kernel/ids";
import type { AuditEntry } from "../../src/security/repo";
import { createPostgresStores } from "../../src/stores/postgres";
import { openPostgres, type Pg } from "../../src/stores/postgres/database";
import { emailHash } from "../../src/stores/postgres/user-directory";
import { createSqliteStores } from "../../src/stores/sqlite";
import type { BACKENDS, Backend } from "./backends";

/** The calls every backend answers the same way: the feature interfaces (plus a session insert on its own). */
export interface AuthStores {
  sessions: SessionsStore & { insertInTx: (s: NewSessionRow) => Promise<void> };
  twoFactor: TwoFactorStore;
  links: MagicLinksStore;
  tokens: AccountTokensStore;
  passwords: PasswordStore;
  oidc: OidcStore;
  passkeys: PasskeysStore;
  newDevices: NewDeviceStore;
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

/** The outbox's seal in these stores (src/mail/outbox-seal.ts), so that a test can open a row it reads with SQL. */
export const HARNESS_OUTBOX_SEAL = createOutboxSeal(generateKeys().encryption_key);

function sqliteStores(db: import("../../src/db/database").Db): AuthStores {
  const s = createSqliteStores(db, HARNESS_OUTBOX_SEAL);
  return {
    sessions: { ...s.sessions, insertInTx: async (row) => writeTx(db, () => s.sessions.insertInTx(row)) },
    twoFactor: s.twoFactor,
    links: s.magicLinks,
    tokens: s.accountTokens,
    passwords: s.passwords,
    oidc: s.oidc,
    passkeys: s.passkeys,
    newDevices: s.newDevices,
  };
}

function postgresStores(pg: Pg): AuthStores {
  const s = createPostgresStores(pg, HARNESS_OUTBOX_SEAL);
  return {
    sessions: { ...s.sessions, insertInTx: (row) => pg.begin((tx) => s.sessions.insertInTx(tx, row)) },
    twoFactor: s.twoFactor,
    links: s.magicLinks,
    tokens: s.accountTokens,
    passwords: s.passwords,
    oidc: s.oidc,
    passkeys: s.passkeys,
    newDevices: s.newDevices,
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
      // PostgreSQL files every account in the address directory (schema 54), as the users store does.
      if (backend.kind === "postgres") await q("INSERT INTO user_directory (email_hash, tenant_id, user_id) VALUES ($1, $2, $3)", [emailHash(email), tenantId, id]);
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
