import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync, writeSync, closeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CURRENT_PLAN, targetVersion } from "../../src/db/migrate";
import { startServer } from "../server";
import { createTenant, mode, oneLineFailure, run } from "./backup-kit";

const dir = mkdtempSync(join(tmpdir(), "suite-restore-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const freshDb = () => join(dir, `db-${++n}`, "suite.db");

const subdomains = (db: string): string[] => {
  const d = new Database(db, { readonly: true });
  try {
    return (d.query("SELECT subdomain FROM tenants ORDER BY subdomain").all() as { subdomain: string }[]).map((r) => r.subdomain);
  } finally {
    d.close();
  }
};

/** A database holding organization `acme`, and a backup of it holding just that. */
async function databaseWithBackup(): Promise<{ db: string; backup: string }> {
  const db = freshDb();
  await createTenant(db, "acme");
  const backup = join(dir, `backup-${n}.db`);
  expect((await run(["backup", backup], { SUITE_DB: db })).code).toBe(0);
  return { db, backup };
}

/** Nothing of a refused restore is left behind: no file kept aside, no temp file. */
const untouched = (db: string) => {
  const left = readdirSync(join(db, "..")).filter((f) => f.includes("before-restore") || f.endsWith(".tmp"));
  expect(left).toEqual([]);
};

describe("suite restore", () => {
  test("puts the backup in place, keeps the current database aside (0600), says how to undo, and keeps the keys", async () => {
    const { db, backup } = await databaseWithBackup();
    await createTenant(db, "later");
    const keys = readFileSync(`${db}.keys`, "utf8");
    const r = await run(["restore", backup], { SUITE_DB: db });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`restored ${backup} to ${db}: schema version ${targetVersion(CURRENT_PLAN)}, 1 organizations, 1 users, integrity ok`);
    const aside = readdirSync(join(db, "..")).filter((f) => f.startsWith("suite.db.before-restore-"));
    expect(aside).toHaveLength(1);
    const kept = join(db, "..", aside[0]!);
    expect(r.stdout).toContain(`the previous database is kept at ${kept} (0600); to undo, with the server stopped: mv ${kept} ${db}`);
    expect(r.stdout).toContain(`the keys stay as they were in ${db}.keys`);
    expect(mode(statSync(kept))).toBe(0o600);
    expect(mode(statSync(db))).toBe(0o600);
    expect(readFileSync(`${db}.keys`, "utf8")).toBe(keys);
    // The backup's data in place, the newer data aside, each complete on its own (no -wal beside).
    expect(subdomains(db)).toEqual(["acme"]);
    expect(subdomains(kept)).toEqual(["acme", "later"]);
    for (const side of ["-wal", "-shm", "-journal"]) expect(existsSync(db + side)).toBe(false);
    untouchedTemps(db);
    // The restored database serves, with the keys it had.
    const server = await startServer(db);
    const login = await server.call("POST", "/api/v1/auth/login", { tenant: "acme", body: { email: "admin@acme.test", password: "backup test passphrase" } });
    expect(login.status).toBe(200);
    expect((await server.stop()).code).toBe(0);
    // The undo the answer printed brings the newer data back.
    renameSync(kept, db);
    expect(subdomains(db)).toEqual(["acme", "later"]);
  }, 60_000);

  test("refuses while a server serves the database, and changes nothing", async () => {
    const { db, backup } = await databaseWithBackup();
    const server = await startServer(db);
    try {
      await createTenant(db, "during");
      const line = oneLineFailure(await run(["restore", backup], { SUITE_DB: db }));
      expect(line).toBe(`suite: cannot restore over ${db}: a server (or another suite command) has it open; stop it first`);
      untouched(db);
      expect((await server.call("GET", "/api/v1/health")).status).toBe(200);
    } finally {
      expect((await server.stop()).code).toBe(0);
    }
    expect(subdomains(db)).toEqual(["acme", "during"]);
    // Stopped, the same command goes through.
    expect((await run(["restore", backup], { SUITE_DB: db })).code).toBe(0);
    expect(subdomains(db)).toEqual(["acme"]);
  }, 60_000);

  test("a server killed mid-run: its -wal goes into the database kept aside, never under the restored one", async () => {
    const { db, backup } = await databaseWithBackup();
    const server = await startServer(db);
    const signup = await server.call("POST", "/api/v1/auth/signup", {
      body: { email: "a@walonly.test", password: "backup test passphrase", tenant_name: "Wal only", subdomain: "walonly" },
    });
    expect(signup.status).toBe(201);
    server.kill();
    await server.process.exited;
    expect(existsSync(`${db}-wal`)).toBe(true);
    const r = await run(["restore", backup], { SUITE_DB: db });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    for (const side of ["-wal", "-shm"]) expect(existsSync(db + side)).toBe(false);
    expect(subdomains(db)).toEqual(["acme"]);
    const kept = join(db, "..", readdirSync(join(db, "..")).find((f) => f.includes("before-restore"))!);
    // The commit that lived only in the -wal is in the kept copy, which stands alone.
    expect(existsSync(`${kept}-wal`)).toBe(false);
    expect(subdomains(kept)).toEqual(["acme", "walonly"]);
    const d = new Database(db, { readonly: true });
    expect(d.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
    d.close();
  }, 60_000);

  test("refuses a missing file, a folder, a corrupt file, a non-SQLite file, another program's database and a newer one, in one line naming the file", async () => {
    const { db } = await databaseWithBackup();
    const before = readFileSync(db);
    const refused = async (file: string) => {
      const line = oneLineFailure(await run(["restore", file], { SUITE_DB: db }));
      expect(line.startsWith(`suite: cannot restore ${file}: `)).toBe(true);
      expect(readFileSync(db).equals(before)).toBe(true);
      untouched(db);
      return line;
    };

    expect(await refused(join(dir, "no-such.db"))).toEndWith("no such file");
    mkdirSync(join(dir, "a-folder"));
    expect(await refused(join(dir, "a-folder"))).toContain("a folder");

    const text = join(dir, "notes.txt");
    writeFileSync(text, "these are not the tables you are looking for\n".repeat(200));
    expect(await refused(text)).toContain("not a SQLite database");

    const foreign = join(dir, "foreign.db");
    const f = new Database(foreign, { create: true });
    f.run("CREATE TABLE stuff (x INTEGER)");
    f.close();
    expect(await refused(foreign)).toContain("not a Workspace Suite one");

    const newer = join(dir, "newer.db");
    expect((await run(["backup", newer], { SUITE_DB: db })).code).toBe(0);
    const nw = new Database(newer);
    nw.run("PRAGMA user_version = 999");
    nw.close();
    expect(await refused(newer)).toContain("schema version 999 is newer than this release understands");

    // A backup with a table's pages overwritten: SQLite still opens it, its integrity check does not pass.
    const corrupt = join(dir, "corrupt.db");
    expect((await run(["backup", corrupt], { SUITE_DB: db })).code).toBe(0);
    const pageSize = 4096;
    const fd = openSync(corrupt, "r+");
    const pages = Math.floor(statSync(corrupt).size / pageSize);
    for (let p = 2; p < pages; p += 2) writeSync(fd, Buffer.alloc(64, 0xa5), 0, 64, p * pageSize + 8);
    closeSync(fd);
    expect(await refused(corrupt)).toMatch(/fails SQLite's integrity check|not a SQLite database/);

    // A live database (its -wal beside it) is not a backup.
    const live = join(dir, "live.db");
    copyFileSync(db, live);
    writeFileSync(`${live}-wal`, "");
    expect(await refused(live)).toContain("live database");
  }, 60_000);

  test("onto a new machine: no database and no key file there yet", async () => {
    const { backup } = await databaseWithBackup();
    const db = join(dir, "new-machine", "data", "suite.db");
    const r = await run(["restore", backup], { SUITE_DB: db });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`there was no database at ${db} before`);
    expect(r.stdout).toContain(`no key file at ${db}.keys: put the one kept with your backups there (0600) before starting`);
    expect(mode(statSync(db))).toBe(0o600);
    expect(mode(statSync(join(db, "..")))).toBe(0o700);
    expect(subdomains(db)).toEqual(["acme"]);
    // As the answer says: the suite refuses to start on accounts without their keys.
    expect(oneLineFailure(await run(["migrate"], { SUITE_DB: db }))).toContain(`${db}.keys`);
  }, 60_000);

  test("needs exactly one FILE, and never the database itself", async () => {
    const db = freshDb();
    expect(oneLineFailure(await run(["restore"], { SUITE_DB: db }))).toContain("usage: suite restore [--adopt-keys] FILE");
    expect(oneLineFailure(await run(["restore", "a.db", "b.db"], { SUITE_DB: db }))).toContain("b.db");
    await createTenant(db, "self");
    expect(oneLineFailure(await run(["restore", db], { SUITE_DB: db }))).toContain("is the database itself");
  }, 30_000);
});

function untouchedTemps(db: string): void {
  expect(readdirSync(join(db, "..")).filter((f) => f.endsWith(".tmp"))).toEqual([]);
}
