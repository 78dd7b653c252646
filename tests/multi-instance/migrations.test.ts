import { describe, expect, test } from "bun:test";
import { openPostgres } from "../../src/stores/postgres/database";
import { pgTargetVersion } from "../../src/stores/postgres/migrate";
import { startInstances } from "../support/instances";
import { emptyPostgresDatabase } from "../support/pg-database";
import { ME, ON_POSTGRES, SKIP_NOTE, signup } from "./support";

/**
 * Three instances started at the same moment on an EMPTY database all try to migrate it; an
 * advisory lock lets one make the schema while the others wait, then find it made. Repeated on
 * three fresh databases, since a race shows itself only sometimes.
 */
describe.skipIf(!ON_POSTGRES)(`migrations run once when three instances start together ${SKIP_NOTE}`, () => {
  test(
    "an empty database, three instances at once: each schema version recorded once, every table made once, all three healthy and serving",
    async () => {
      for (let round = 0; round < 3; round++) {
        const db = await emptyPostgresDatabase("mmig");
        try {
          const group = await startInstances(3, { databaseUrl: db.url });
          try {
            for (let i = 0; i < 3; i++) expect((await group.call(i, "GET", "/api/v1/health")).status).toBe(200);
            const pg = openPostgres(db.url, { max: 1 });
            try {
              const versions = await pg.all<{ version: number; n: number }>`SELECT version, count(*)::int AS n FROM schema_version GROUP BY version ORDER BY version`;
              expect(versions).toEqual(Array.from({ length: pgTargetVersion() }, (_, k) => ({ version: k + 1, n: 1 })));
              // The schema is whole: no instance failed half-way and none is left waiting on the lock.
              const tables = await pg.one<{ n: number }>`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = current_schema()`;
              expect(tables!.n).toBeGreaterThan(10);
              const waiting = await pg.one<{ n: number }>`SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`;
              expect(waiting!.n).toBe(0);
            } finally {
              await pg.close();
            }
            // And the schema they agreed on works through each of them.
            const org = await signup(group, round, `mig${round}`);
            for (let i = 0; i < 3; i++) expect((await group.call(i, "GET", ME, { token: org.access_token })).status).toBe(200);
            // A restart finds the database current and changes nothing.
            await group.restart((round + 1) % 3);
            const pg2 = openPostgres(db.url, { max: 1 });
            try {
              const n = await pg2.one<{ n: number }>`SELECT count(*)::int AS n FROM schema_version`;
              expect(n!.n).toBe(pgTargetVersion());
            } finally {
              await pg2.close();
            }
          } finally {
            await group.close();
          }
        } finally {
          await db.drop();
        }
      }
    },
    240_000,
  );
});
