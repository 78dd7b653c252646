/**
 * A new, EMPTY database (no schema) on the test server named by SUITE_TEST_DATABASE_URL, for the
 * tests that make the schema themselves (migrations, copy-to-postgres, several instances).
 * tests/stores/backends.ts's freshPostgres gives one with the schema already applied.
 */
import { openPostgres } from "../../src/stores/postgres/database";

export const TEST_DATABASE_URL = process.env.SUITE_TEST_DATABASE_URL || null;

let n = 0;

export interface EmptyDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

export async function emptyPostgresDatabase(prefix = "e"): Promise<EmptyDatabase> {
  if (!TEST_DATABASE_URL) throw new Error("SUITE_TEST_DATABASE_URL is not set");
  const name = `${prefix}_${process.pid}_${Date.now().toString(36)}_${n++}`;
  const admin = openPostgres(TEST_DATABASE_URL, { max: 1 });
  try {
    await admin.unsafe(`CREATE DATABASE ${name}`);
  } finally {
    await admin.close();
  }
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    drop: async () => {
      const a = openPostgres(TEST_DATABASE_URL, { max: 1 });
      try {
        await a.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await a.close();
      }
    },
  };
}
