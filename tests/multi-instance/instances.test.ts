import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { openPostgres } from "../../src/stores/postgres/database";
import { pgTargetVersion } from "../../src/stores/postgres/migrate";
import { type Instances, startInstances } from "../support/instances";
import { type EmptyDatabase, emptyPostgresDatabase } from "../support/pg-database";

/**
 * The multi-instance harness on PostgreSQL: three `suite serve` processes started together on one
 * fresh database. Needs the PostgreSQL stores wired into `suite serve`, so it runs only in the
 * PostgreSQL run (scripts/test.ts lists this folder once they are).
 */
const ON_POSTGRES = process.env.SUITE_TEST_BACKEND === "postgres";

describe.skipIf(!ON_POSTGRES)("three suite serve instances on one PostgreSQL database (skipped unless SUITE_TEST_BACKEND=postgres)", () => {
  let target: EmptyDatabase;
  let group: Instances;

  beforeAll(async () => {
    target = await emptyPostgresDatabase("inst");
    group = await startInstances(3, { databaseUrl: target.url });
  });

  afterAll(async () => {
    await group?.close();
    await target?.drop();
  });

  test("all three answer health, on three ports, and the schema was made once", async () => {
    expect(new Set(group.urls()).size).toBe(3);
    for (let i = 0; i < 3; i++) expect((await group.call(i, "GET", "/api/v1/health")).status).toBe(200);
    const pg = openPostgres(target.url, { max: 1 });
    try {
      const rows = await pg.all<{ version: number; n: number }>`SELECT version, count(*)::int AS n FROM schema_version GROUP BY version ORDER BY version`;
      expect(rows).toEqual(Array.from({ length: pgTargetVersion() }, (_, i) => ({ version: i + 1, n: 1 })));
    } finally {
      await pg.close();
    }
  });

  test("one truth: an organization made on one instance signs in on another, and its token works on the third", async () => {
    const body = { email: "admin@multi.test", password: "correct horse battery", tenant_name: "Multi", subdomain: "multi" };
    const signup = await group.call(0, "POST", "/api/v1/auth/signup", { body });
    expect(signup.status).toBe(201);
    const login = await group.call(1, "POST", "/api/v1/auth/login", { tenant: "multi", body: { email: body.email, password: body.password } });
    expect(login.status).toBe(200);
    const me = await group.call(2, "GET", "/api/v1/auth/me", { token: login.body.access_token, tenant: "multi" });
    expect(me.status).toBe(200);
    expect(me.body.user.email).toBe(body.email);
    // Round-robin reaches every instance in turn.
    const seen = new Set<number>();
    for (let k = 0; k < 3; k++) seen.add((await group.next("GET", "/api/v1/auth/me", { token: login.body.access_token, tenant: "multi" })).instance);
    expect([...seen].sort()).toEqual([0, 1, 2]);
  });

  test("SIGKILL one: it stops answering, the others go on; SIGTERM the rest: each exits 0", async () => {
    const dead = group.urls()[1]!;
    expect(await group.kill(1, "SIGKILL")).toBeNull();
    expect(await fetch(`${dead}/api/v1/health`).then(() => "answered", () => "refused")).toBe("refused");
    expect(group.liveUrls()).toEqual([group.urls()[0]!, group.urls()[2]!]);
    for (let k = 0; k < 4; k++) expect((await group.next("GET", "/api/v1/health")).status).toBe(200);
    const back = await group.restart(1);
    expect((await group.call(1, "GET", "/api/v1/health")).status).toBe(200);
    expect(back.url).not.toBe(dead);
    const stopped = await group.killAll("SIGTERM");
    expect(stopped.map((s) => s?.code)).toEqual([0, 0, 0]);
  });
});
