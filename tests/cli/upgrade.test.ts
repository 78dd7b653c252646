import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pkg from "../../package.json";
import { CURRENT_PLAN, targetVersion } from "../../src/db/migrate";
import { noteSecret } from "../security/ledger";
import { startServer } from "../server";
import { lines, oneLineFailure, runSuite } from "./kit";

/** Issue 18, item 6: a newer suite upgrades an older database after a copy; an older suite refuses a newer one. */

const TARGET = targetVersion(CURRENT_PLAN);
const dir = mkdtempSync(join(tmpdir(), "suite-upgrade-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const SCHEMA_V1 = readFileSync(join(import.meta.dir, "..", "db", "fixtures", "schema-v1.sql"), "utf8");
noteSecret("password", "upgrade test passphrase");
const run = (args: string[], env: Record<string, string>) => runSuite(args, { cwd: dir, env });

const versionOf = (file: string): number => {
  const d = new Database(file, { readonly: true });
  try {
    return (d.query("PRAGMA user_version").get() as { user_version: number }).user_version;
  } finally {
    d.close();
  }
};

/** A database as the first release left it: its schema, one organization, version 1. */
function releaseOneDatabase(name: string): string {
  const folder = join(dir, name);
  mkdirSync(folder);
  const file = join(folder, "suite.db");
  const d = new Database(file, { create: true });
  d.run("PRAGMA journal_mode = WAL");
  d.run(SCHEMA_V1);
  d.run("INSERT INTO tenants (id, name, subdomain, created_at) VALUES ('t-old', 'Old Co', 'oldco', 1700000000000)");
  d.run("PRAGMA user_version = 1");
  d.close();
  return file;
}

describe("a newer suite on an older database", () => {
  test("suite serve migrates it after keeping a copy, and serves its data", async () => {
    expect(TARGET).toBeGreaterThan(1);
    const db = releaseOneDatabase("serve-old");
    const s = await startServer(db);
    let stopped: Awaited<ReturnType<typeof s.stop>>;
    try {
      expect((await s.call("GET", "/api/v1/health")).status).toBe(200);
      // The organization made by the first release is known to the new one: its subdomain is taken.
      const taken = await s.call("POST", "/api/v1/auth/signup", { body: { email: "b@oldco.io", password: "upgrade test passphrase", tenant_name: "Again", subdomain: "oldco" } });
      expect({ status: taken.status, code: taken.body?.code }).toEqual({ status: 409, code: "subdomain_taken" });
    } finally {
      stopped = await s.stop();
    }
    expect(stopped.code).toBe(0);
    expect(versionOf(db)).toBe(TARGET);
    const copy = `${db}.v1.bak`;
    expect(versionOf(copy)).toBe(1);
    const c = new Database(copy, { readonly: true });
    expect(c.query("SELECT subdomain FROM tenants").all()).toEqual([{ subdomain: "oldco" }]);
    c.close();
    const d = new Database(db, { readonly: true });
    expect(d.query("SELECT subdomain FROM tenants").all()).toEqual([{ subdomain: "oldco" }]);
    expect(d.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
    d.close();
    // An organization exists: no "create one" hint.
    expect(stopped.stdout).not.toContain("no organization yet");
  }, 60_000);

  test("suite migrate says from which version to which, and where the copy is", async () => {
    const db = releaseOneDatabase("migrate-old");
    const r = await run(["migrate"], { SUITE_DB: db });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(lines(r.stdout).slice(0, 2)).toEqual([`${db}: schema version 1 -> ${TARGET}`, `previous database kept at ${db}.v1.bak`]);
    expect(versionOf(db)).toBe(TARGET);
    expect(versionOf(`${db}.v1.bak`)).toBe(1);
  }, 60_000);
});

describe("an older suite on a newer database", () => {
  test("every command refuses in one line naming both versions, exits 78, and leaves the file as it was", async () => {
    const folder = join(dir, "newer");
    mkdirSync(folder);
    const current = join(folder, "current.db");
    expect((await run(["migrate"], { SUITE_DB: current })).code).toBe(0);
    // A copy, then what a future release would do to it: a schema version this one does not know.
    const db = join(folder, "suite.db");
    copyFileSync(current, db);
    const newer = TARGET + 5;
    const d = new Database(db);
    d.run(`PRAGMA user_version = ${newer}`);
    d.close();
    const before = readFileSync(db);
    const modified = statSync(db).mtimeMs;
    const files = readdirSync(folder).sort();

    const expected = `suite: database ${db} is at schema version ${newer}, this suite (${pkg.version}) knows up to ${TARGET}: use a newer suite`;
    for (const command of [["serve"], ["migrate"], ["mail", "list"], ["backup", join(dir, "newer-copy.db")], ["tenant", "create", "--name", "N", "--subdomain", "newco", "--admin-email", "a@newco.io"]]) {
      const r = await run(command, { SUITE_DB: db, SUITE_PORT: "1", SUITE_NEW_PASSWORD: "long enough pw" });
      expect(oneLineFailure(r, 78)).toBe(expected);
      expect(r.stdout).toBe("");
    }
    expect(readFileSync(db).equals(before)).toBe(true);
    expect(statSync(db).mtimeMs).toBe(modified);
    // Not even a -wal, -shm, key file or copy appeared beside it.
    expect(readdirSync(folder).sort()).toEqual(files);
    expect(existsSync(join(dir, "newer-copy.db"))).toBe(false);
    expect(versionOf(db)).toBe(newer);
  }, 60_000);
});
