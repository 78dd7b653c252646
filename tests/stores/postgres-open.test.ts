/**
 * Opening the suite on PostgreSQL: openStores picks it when a database URL is set, the stores
 * wait behind the migration's gate, the key file is checked against the database (another file,
 * or a new one for a database that holds accounts, is refused and left behind by nobody), a
 * server that cannot be reached is one clear line, and unique violations read the same as
 * SQLite's. Skipped unless SUITE_TEST_DATABASE_URL names a server.
 */
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError, loadConfig } from "../../src/config";
import { openStores } from "../../src/stores";
import { isUniqueViolation } from "../../src/kernel/unique-violation";
import { unavailable } from "../../src/cli/open";
import { noteLog } from "../security/ledger";
import { type EmptyDatabase, TEST_DATABASE_URL, emptyPostgresDatabase } from "../support/pg-database";

const dir = mkdtempSync(join(tmpdir(), "suite-pgopen-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const made: EmptyDatabase[] = [];
afterEach(async () => {
  for (const d of made.splice(0)) await d.drop();
});

const configFor = (url: string, db: string) => loadConfig({}, { SUITE_DB: join(dir, db), SUITE_DATABASE_URL: url });

describe.skipIf(!TEST_DATABASE_URL)("the suite on PostgreSQL", () => {
  test("openStores opens PostgreSQL when a URL is set; queries wait for the migration; the key file is created", async () => {
    const d = await emptyPostgresDatabase("open");
    made.push(d);
    const stores = openStores(configFor(d.url, "one.db"));
    try {
      expect(stores.kind).toBe("postgres");
      expect(stores.pg).toBeDefined();
      expect(stores.db).toBeUndefined();
      // Sent at once, before anything was awaited: it waits for the schema, then answers.
      expect(await stores.tenants.any()).toBe(false);
      await stores.ping();
      await stores.durable();
      expect(existsSync(join(dir, "one.db.keys"))).toBe(true);
      const check = await stores.pg!.one<{ value: string }>`SELECT value FROM settings WHERE key = 'key_check'`;
      expect(check?.value).toMatch(/^[\w-]{43}$/);
      // The check is a hash: no key is stored in the database.
      for (const key of Object.values(stores.keys)) expect(check!.value).not.toContain(key);
    } finally {
      await stores.close();
    }
  });

  test("another key file on the same database is refused (and the file it made is removed); the first one still opens", async () => {
    const d = await emptyPostgresDatabase("keys");
    made.push(d);
    const first = openStores(configFor(d.url, "a.db"));
    await first.ping();
    await first.close();
    const other = openStores(configFor(d.url, "b.db"));
    const refused = await other.ping().then(() => null, (e: unknown) => e);
    await other.close();
    expect(refused).toBeInstanceOf(ConfigError);
    expect((refused as Error).message).toContain("does not hold the keys this PostgreSQL database was made with");
    expect(existsSync(join(dir, "b.db.keys"))).toBe(false);
    // Its queries refuse too: nothing runs on a database with the wrong keys.
    await expect(other.tenants.any()).rejects.toThrow("does not hold the keys");
    const again = openStores(configFor(d.url, "a.db"));
    await again.ping();
    await again.close();
  });

  test("a database holding accounts whose key file is gone is refused, not given new keys", async () => {
    const d = await emptyPostgresDatabase("lost");
    made.push(d);
    const first = openStores(configFor(d.url, "lost.db"));
    await first.pg!.run`INSERT INTO tenants (id, name, subdomain, created_at) VALUES ('t1', 'Acme', 'acme', 1)`;
    await first.pg!.run`INSERT INTO users (id, tenant_id, email, role, password_hash, created_at, updated_at) VALUES ('u1', 't1', 'a@acme.test', 'admin', 'x', 1, 1)`;
    // As a copy-to-postgres leaves it: accounts, and no key check yet.
    await first.pg!.run`DELETE FROM settings WHERE key = 'key_check'`;
    await first.close();
    rmSync(join(dir, "lost.db.keys"));
    const second = openStores(configFor(d.url, "lost.db"));
    const refused = await second.ping().then(() => null, (e: unknown) => e);
    await second.close();
    expect((refused as Error).message).toContain("is missing, but the PostgreSQL database holds accounts");
    expect(existsSync(join(dir, "lost.db.keys"))).toBe(false);
  });

  test("an unreachable server is one line naming it, its password masked", async () => {
    const url = "postgres://suite:not-the-password@127.0.0.1:1/nowhere";
    const config = configFor(url, "unreachable.db");
    const stores = openStores(config);
    const e = await stores.ping().then(() => null, (err: unknown) => err);
    await stores.close();
    const line = (unavailable(config, e) as Error).message;
    noteLog(line);
    expect(line).toStartWith("cannot use PostgreSQL at postgres://suite:***@127.0.0.1:1/nowhere: ");
    expect(line).not.toContain("not-the-password");
  });

  test("a duplicate is a unique violation on its table.column, as SQLite names it", async () => {
    const d = await emptyPostgresDatabase("uniq");
    made.push(d);
    const stores = openStores(configFor(d.url, "uniq.db"));
    try {
      await stores.pg!.run`INSERT INTO tenants (id, name, subdomain, created_at) VALUES ('t1', 'Acme', 'acme', 1)`;
      const e = await stores.pg!.run`INSERT INTO tenants (id, name, subdomain, created_at) VALUES ('t2', 'Other', 'acme', 1)`.then(() => null, (err: unknown) => err);
      expect(isUniqueViolation(e)).toBe(true);
      expect(isUniqueViolation(e, "tenants.subdomain")).toBe(true);
      expect(isUniqueViolation(e, "tenants.name")).toBe(false);
      expect(isUniqueViolation(e, "users.subdomain")).toBe(false);
      expect(isUniqueViolation(new Error("UNIQUE constraint failed: tenants.subdomain"), "tenants.subdomain")).toBe(true);
      expect(isUniqueViolation(new Error("something else"))).toBe(false);
    } finally {
      await stores.close();
    }
  });
});

describe.skipIf(!TEST_DATABASE_URL)("the CLI on PostgreSQL", () => {
  const MAIN = join(import.meta.dir, "..", "..", "src", "main.ts");
  async function run(args: string[], url: string) {
    const p = Bun.spawn([process.execPath, MAIN, ...args], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, SUITE_DB: join(dir, "cli.db"), SUITE_DATABASE_URL: url, SUITE_PORT: "1" },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
    noteLog(stdout);
    noteLog(stderr);
    return { code, stdout, stderr };
  }

  test("backup and restore point to PostgreSQL's own tools and exit non-zero", async () => {
    const backup = await run(["backup", join(dir, "x.db")], TEST_DATABASE_URL!);
    expect(backup.code).toBe(78);
    expect(backup.stderr).toContain("pg_dump");
    expect(existsSync(join(dir, "x.db"))).toBe(false);
    const restore = await run(["restore", join(dir, "x.db")], TEST_DATABASE_URL!);
    expect(restore.code).toBe(78);
    expect(restore.stderr).toContain("pg_restore");
  });

  test("serve and migrate exit with one line when PostgreSQL cannot be reached", async () => {
    for (const cmd of [["serve"], ["migrate"], ["tenant", "list"]]) {
      const r = await run(cmd, "postgres://suite:not-the-password@127.0.0.1:1/nowhere");
      expect({ cmd, code: r.code }).toEqual({ cmd, code: 78 });
      expect(r.stderr).toStartWith("suite: cannot use PostgreSQL at postgres://suite:***@127.0.0.1:1/nowhere: ");
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
    }
  });

  test("migrate makes the schema and the key file, then says it is up to date", async () => {
    const d = await emptyPostgresDatabase("cli");
    made.push(d);
    const first = await run(["migrate"], d.url);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain("schema version 0 -> ");
    expect(existsSync(join(dir, "cli.db.keys"))).toBe(true);
    const again = await run(["migrate"], d.url);
    expect(again.stdout).toMatch(/schema version \d+, up to date/);
  });
});
