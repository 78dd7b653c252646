/**
 * The storage backends a store contract test runs against: SQLite always; PostgreSQL when
 * SUITE_TEST_DATABASE_URL names a server (scripts/postgres-cluster.ts starts a throwaway one).
 * Each call of `fresh()` gives an empty, migrated database of its own.
 */
import { openDatabase, type Db } from "../../src/db/database";
import { CURRENT_PLAN, migrate } from "../../src/db/migrate";
import { openPostgres, type Pg } from "../../src/stores/postgres/database";
import { applySchema } from "../../src/stores/postgres/schema";

export const POSTGRES_URL = process.env.SUITE_TEST_DATABASE_URL ?? null;

export interface SqliteBackend { kind: "sqlite"; db: Db; close(): Promise<void> }
export interface PostgresBackend { kind: "postgres"; pg: Pg; close(): Promise<void> }
export type Backend = SqliteBackend | PostgresBackend;

export function freshSqlite(): SqliteBackend {
  const db = openDatabase(":memory:");
  migrate(db, CURRENT_PLAN);
  return { kind: "sqlite", db, close: async () => db.close() };
}

let n = 0;
/** A new database on the test server, created empty and given the whole schema. */
export async function freshPostgres(): Promise<PostgresBackend> {
  if (!POSTGRES_URL) throw new Error("SUITE_TEST_DATABASE_URL is not set");
  const admin = openPostgres(POSTGRES_URL, { max: 1 });
  const name = `t_${process.pid}_${Date.now().toString(36)}_${n++}`;
  await admin.unsafe(`CREATE DATABASE ${name}`);
  await admin.close();
  const url = POSTGRES_URL.replace(/\/[^/?]*(\?|$)/, `/${name}$1`);
  const pg = openPostgres(url, { max: 4 });
  await applySchema(pg);
  return {
    kind: "postgres",
    pg,
    close: async () => {
      await pg.close();
      const a = openPostgres(POSTGRES_URL, { max: 1 });
      await a.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await a.close();
    },
  };
}

/** The backends to run a contract suite on: names for describe(), and a maker. */
export const BACKENDS: Array<{ name: "sqlite" | "postgres"; fresh: () => Promise<Backend> }> = [
  { name: "sqlite", fresh: async () => freshSqlite() },
  ...(POSTGRES_URL ? [{ name: "postgres" as const, fresh: freshPostgres }] : []),
];
