import { afterAll, describe, expect, test } from "bun:test";
import { NewerDatabase } from "../../src/db/migrate";
import { openPostgres, type Pg } from "../../src/stores/postgres/database";
import { MIGRATION_LOCK, PG_MIGRATIONS, type PgMigration, migratePostgres, pgTargetVersion, postgresVersion } from "../../src/stores/postgres/migrate";
import { schemaFiles } from "../../src/stores/postgres/schema";
import { type EmptyDatabase, TEST_DATABASE_URL, emptyPostgresDatabase } from "../support/pg-database";

/** Every table the schema files create, in their order. */
const schemaTables = (): string[] =>
  schemaFiles().flatMap((f) => [...f.sql.matchAll(/CREATE\s+(?:UNLOGGED\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?"?([a-z_][a-z0-9_]*)"?/gi)].map((m) => m[1]!.toLowerCase()));

const tablesOf = async (pg: Pg): Promise<string[]> =>
  (await pg.all<{ t: string }>`SELECT table_name AS t FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY 1`).map((r) => r.t);

const dropped: EmptyDatabase[] = [];
const pools: Pg[] = [];
async function fresh(): Promise<EmptyDatabase> {
  const d = await emptyPostgresDatabase("mig");
  dropped.push(d);
  return d;
}
function pool(url: string): Pg {
  const pg = openPostgres(url, { max: 1 });
  pools.push(pg);
  return pg;
}
afterAll(async () => {
  for (const p of pools) await p.close().catch(() => {});
  for (const d of dropped) await d.drop();
});

describe.skipIf(!TEST_DATABASE_URL)("PostgreSQL migrations (PostgreSQL only: runs in npm test's PostgreSQL run)", () => {
  test("5 instances migrating one fresh database at once: all succeed, exactly one creates the schema, each version recorded once", async () => {
    const db = await fresh();
    const instances = Array.from({ length: 5 }, () => pool(db.url));
    const results = await Promise.all(instances.map((pg) => migratePostgres(pg)));
    const target = pgTargetVersion();
    expect(results.every((r) => r.to === target)).toBe(true);
    // One did the work (found version 0); the four others waited on the lock and found it done.
    expect(results.filter((r) => r.from === 0).length).toBe(1);
    expect(results.filter((r) => r.from === target).length).toBe(4);
    const check = pool(db.url);
    const versions = await check.all<{ version: number; n: number }>`SELECT version, count(*)::int AS n FROM schema_version GROUP BY version ORDER BY version`;
    expect(versions).toEqual(Array.from({ length: target }, (_, i) => ({ version: i + 1, n: 1 })));
    const tables = await tablesOf(check);
    for (const t of [...schemaTables(), "schema_version"]) expect(tables).toContain(t);
    expect(tables.length).toBe(new Set(schemaTables()).size + 1);
    // The transaction-level lock went with its transaction: nobody holds it now.
    const held = await check.one<{ n: number }>`SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory'`;
    expect(held?.n).toBe(0);
    expect(await postgresVersion(check)).toBe(target);
  });

  test("a second start finds the database up to date and changes nothing", async () => {
    const db = await fresh();
    const pg = pool(db.url);
    expect(await migratePostgres(pg)).toEqual({ from: 0, to: pgTargetVersion() });
    const before = await pg.all`SELECT version, name, applied_at FROM schema_version ORDER BY version`;
    expect(await migratePostgres(pg)).toEqual({ from: pgTargetVersion(), to: pgTargetVersion() });
    expect(await pg.all`SELECT version, name, applied_at FROM schema_version ORDER BY version`).toEqual(before);
  });

  test("an older database runs each later step once, even with 5 instances starting together", async () => {
    const db = await fresh();
    const base = pgTargetVersion();
    const first = pool(db.url);
    await migratePostgres(first);
    const later: PgMigration[] = [
      ...PG_MIGRATIONS,
      { version: base + 1, name: "a table of the future", sql: "CREATE TABLE future_things (tenant_id text NOT NULL, n bigint NOT NULL); INSERT INTO future_things VALUES ('t', 1)" },
      { version: base + 2, name: "and a row more", sql: "INSERT INTO future_things VALUES ('t', 2)" },
    ];
    const results = await Promise.all(Array.from({ length: 5 }, () => migratePostgres(pool(db.url), later)));
    expect(results.filter((r) => r.from === base && r.to === base + 2).length).toBe(1);
    expect(results.filter((r) => r.from === base + 2).length).toBe(4);
    // Each step ran exactly once: one row from each.
    expect(await first.all`SELECT n FROM future_things ORDER BY n`).toEqual([{ n: 1 }, { n: 2 }]);
    expect(await postgresVersion(first)).toBe(base + 2);
  });

  test("a failing step leaves the database at its previous version, with nothing of the step", async () => {
    const db = await fresh();
    const pg = pool(db.url);
    await migratePostgres(pg);
    const base = pgTargetVersion();
    const broken: PgMigration[] = [
      ...PG_MIGRATIONS,
      { version: base + 1, name: "fine", sql: "CREATE TABLE half_done (x int)" },
      { version: base + 2, name: "broken", sql: "ALTER TABLE no_such_table ADD COLUMN y int" },
    ];
    await expect(migratePostgres(pg, broken)).rejects.toThrow(/no_such_table/);
    expect(await postgresVersion(pg)).toBe(base);
    expect(await tablesOf(pg)).not.toContain("half_done");
  });

  test("a database at a newer version is refused with NewerDatabase, the password masked, nothing changed", async () => {
    const db = await fresh();
    const pg = pool(db.url);
    await migratePostgres(pg);
    const newer = pgTargetVersion() + 5;
    await pg.run`INSERT INTO schema_version (version, name, applied_at) VALUES (${newer}, 'from a newer release', 1)`;
    // Trust authentication ignores the password, so one can ride along to show that it is masked.
    const withPassword = new URL(db.url);
    withPassword.password = "mig-pass-8c2f1e";
    const other = pool(withPassword.toString());
    const err = await migratePostgres(other).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NewerDatabase);
    expect((err as Error).message).toContain(`is at schema version ${newer}, this suite`);
    expect((err as Error).message).toContain(`knows up to ${pgTargetVersion()}: use a newer suite`);
    expect((err as Error).message).not.toContain("mig-pass-8c2f1e");
    expect((err as Error).message).toContain(":***@");
    expect(await postgresVersion(pg)).toBe(newer);
  });

  test("a database holding other tables but no version is refused, and left alone", async () => {
    const db = await fresh();
    const pg = pool(db.url);
    await pg.unsafe("CREATE TABLE someone_elses (id int)");
    await expect(migratePostgres(pg)).rejects.toThrow(/not a Workspace Suite database/);
    expect(await tablesOf(pg)).toEqual(["someone_elses"]);
  });

  test("the lock key is a signed 64-bit value PostgreSQL takes", () => {
    expect(MIGRATION_LOCK < 2n ** 63n && MIGRATION_LOCK > -(2n ** 63n)).toBe(true);
  });
});
