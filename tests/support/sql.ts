/**
 * Plain SQL against a test app's database, on whichever backend the app runs: tests set states up
 * and check rows with it, and the same text means the same on SQLite and on PostgreSQL (write it
 * that way: no rowid, no SQLite-only functions).
 *
 * Placeholders are SQLite's: `?1`, `?2`… (numbered) or bare `?` (in order). On PostgreSQL they
 * become `$1`, `$2`…; a `?` inside a quoted string or identifier is left alone.
 */
import type { Database } from "bun:sqlite";
import { emailHash } from "../../src/stores/postgres/user-directory";
import { openMail } from "./outbox";

type Param = string | number | bigint | boolean | null | Uint8Array;

/** What a test app's context carries: a bun:sqlite Database on SQLite, a Pg on PostgreSQL. */
export interface SqlHolder {
  db?: unknown;
  pg?: unknown;
}

export interface TestSql {
  /** The first row, or null. */
  get<T = Record<string, unknown>>(sql: string, ...params: Param[]): Promise<T | null>;
  /** Every row. */
  all<T = Record<string, unknown>>(sql: string, ...params: Param[]): Promise<T[]>;
  /** A write: how many rows it changed. */
  run(sql: string, ...params: Param[]): Promise<number>;
}

interface PgLike {
  unsafe<T>(text: string, params?: unknown[]): Promise<T[]>;
}

/** `?1` → `$1`, bare `?` → `$n` in order; quoted text ('…', "…") is copied as is. */
export function toPgPlaceholders(sql: string): string {
  let out = "";
  let next = 0;
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i]!;
    if (c === "'" || c === '"') {
      const end = sql.indexOf(c, i + 1);
      const stop = end === -1 ? sql.length : end + 1;
      out += sql.slice(i, stop);
      i = stop - 1;
    } else if (c === "?") {
      const digits = /^\d+/.exec(sql.slice(i + 1))?.[0];
      if (digits) {
        out += `$${digits}`;
        i += digits.length;
      } else out += `$${++next}`;
    } else out += c;
  }
  return out;
}

/** SQLite binds booleans as 0/1 (the stores keep flags as 0/1 integers on both backends). */
const pgParam = (p: Param): unknown => (typeof p === "boolean" ? (p ? 1 : 0) : p);

export function testSql(ctx: SqlHolder): TestSql {
  const pg = ctx.pg as PgLike | null | undefined;
  if (pg) {
    return {
      get: async <T>(sql: string, ...params: Param[]) => (await pg.unsafe<T>(toPgPlaceholders(sql), params.map(pgParam)))[0] ?? null,
      all: <T>(sql: string, ...params: Param[]) => pg.unsafe<T>(toPgPlaceholders(sql), params.map(pgParam)),
      run: async (sql: string, ...params: Param[]) => ((await pg.unsafe(toPgPlaceholders(sql), params.map(pgParam))) as unknown as { count: number }).count,
    };
  }
  const db = ctx.db as Database | undefined;
  if (!db) throw new Error("testSql: the context has neither a SQLite database nor a PostgreSQL pool");
  return {
    get: async <T>(sql: string, ...params: Param[]) => (db.query(sql).get(...params) as T | null) ?? null,
    all: async <T>(sql: string, ...params: Param[]) => db.query(sql).all(...params) as T[],
    run: async (sql: string, ...params: Param[]) => db.query(sql).run(...params).changes,
  };
}

/** A user written straight to the users table (the columns every backend's insert fills). */
export async function insertUser(
  ctx: SqlHolder,
  u: { id: string; tenant_id: string; email: string; full_name: string | null; role: "admin" | "member"; profile_id: string | null; password_hash: string; created_at: number },
): Promise<void> {
  await testSql(ctx).run(
    "INSERT INTO users (id, tenant_id, email, full_name, role, profile_id, password_hash, created_at, updated_at, email_verified_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8, NULL)",
    u.id, u.tenant_id, u.email, u.full_name, u.role, u.profile_id, u.password_hash, u.created_at,
  );
  // PostgreSQL files every account in the address directory (schema 54), as the users store does.
  if (ctx.pg) await fileInDirectory(ctx, u.tenant_id, u.id, u.email);
}

/**
 * PostgreSQL only: the database as one upgraded from before links named their organization, with
 * such links live until `until` (schema 54's unnamed_links_until): links naming no organization
 * are looked for. Before the store's first such lookup (it reads the time once).
 */
export async function unnamedLinksLiveUntil(ctx: SqlHolder, until = 8e15): Promise<void> {
  if (!ctx.pg) return;
  await testSql(ctx).run("DELETE FROM unnamed_links_until");
  await testSql(ctx).run("INSERT INTO unnamed_links_until (until) VALUES (?1)", until);
}

/** PostgreSQL only: a user written straight to users, filed in the address directory as the stores file theirs. */
export async function fileInDirectory(ctx: SqlHolder, tenantId: string, userId: string, email: string): Promise<void> {
  await testSql(ctx).run("INSERT INTO user_directory (email_hash, tenant_id, user_id) VALUES (?1, ?2, ?3)", emailHash(email), tenantId, userId);
}

/**
 * The newest outbox row written to `recipient`, or null: the last one inserted. SQLite keeps
 * insertion order in its rowid. PostgreSQL has no such column (the outbox's ids are random): the
 * newest created_at, and among mails of the same millisecond (tests run on frozen clocks) the row's
 * physical position (ctid), which follows insertion order in an outbox a test only appends to (no
 * sender runs in these apps, so rows are not rewritten).
 */
export async function newestMailTo<T = Record<string, unknown>>(ctx: SqlHolder & { keys: { encryptionKey: string } }, recipient: string): Promise<T | null> {
  const order = ctx.pg ? "created_at DESC, ctid DESC" : "rowid DESC";
  const row = await testSql(ctx).get<T & { id: string }>(`SELECT * FROM mail_outbox WHERE recipient = ?1 ORDER BY ${order} LIMIT 1`, recipient);
  // Its bodies and link are sealed (src/mail/outbox-seal.ts): opened as the sender opens them.
  return row && openMail(ctx.keys.encryptionKey, row);
}

/** Every table of the app's schema with its columns (SQLite's virtual tables left out), by name. */
export async function tableColumns(ctx: SqlHolder): Promise<Record<string, string[]>> {
  const s = testSql(ctx);
  const out: Record<string, string[]> = {};
  if (ctx.pg) {
    const rows = await s.all<{ t: string; c: string }>(
      "SELECT table_name AS t, column_name AS c FROM information_schema.columns WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position",
    );
    for (const r of rows) (out[r.t] ??= []).push(r.c);
    return out;
  }
  const tables = await s.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%' ORDER BY name");
  for (const { name } of tables) out[name] = (await s.all<{ name: string }>(`SELECT name FROM pragma_table_info('${name}')`)).map((c) => c.name);
  return out;
}
