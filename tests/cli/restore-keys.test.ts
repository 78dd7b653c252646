import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KEY_NAMES, generateKeys } from "../../src/security/key-file";
import { noteSecret } from "../security/ledger";
import { createTenant, oneLineFailure, run } from "./backup-kit";

/**
 * A backup made by a release that kept its keys in the `settings` table carries them. Restoring it
 * must not silently replace `<db>.keys` (every session made with the file's keys would end, and the
 * 2FA secrets sealed under them would no longer open): `suite restore` refuses it unless told
 * `--adopt-keys`, and a start never lets such rows replace an existing key file (exit 78).
 */

const dir = mkdtempSync(join(tmpdir(), "suite-restore-keys-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const freshDb = () => join(dir, `db-${++n}`, "suite.db");
const keysIn = (file: string) => JSON.parse(readFileSync(file, "utf8")) as Record<string, string>;

/** A backup as an earlier release wrote it: the data, and keys (other than the current file's) in `settings`. */
async function earlierBackup(): Promise<{ db: string; backup: string; oldKeys: Record<string, string>; fileKeys: string }> {
  const db = freshDb();
  await createTenant(db, "acme");
  const backup = join(dir, `earlier-${n}.db`);
  expect((await run(["backup", backup], { SUITE_DB: db })).code).toBe(0);
  const oldKeys = generateKeys();
  for (const v of Object.values(oldKeys)) noteSecret("server key", v);
  const d = new Database(backup);
  for (const k of KEY_NAMES) d.run("INSERT INTO settings (key, value) VALUES (?1, ?2)", [k, oldKeys[k]]);
  d.close();
  return { db, backup, oldKeys, fileKeys: readFileSync(`${db}.keys`, "utf8") };
}

const asideFiles = (db: string) => readdirSync(join(db, "..")).filter((f) => f.includes("replaced") || f.includes("before-restore"));

describe("restore and the key file", () => {
  test("a backup holding keys is refused without --adopt-keys, saying what adopting means; nothing changes", async () => {
    const { db, backup, fileKeys } = await earlierBackup();
    await createTenant(db, "later");
    const line = oneLineFailure(await run(["restore", backup], { SUITE_DB: db }));
    expect(line).toContain("holds server keys");
    expect(line).toContain("--adopt-keys");
    expect(line).toContain(`${db}.keys`);
    expect(readFileSync(`${db}.keys`, "utf8")).toBe(fileKeys);
    expect(asideFiles(db)).toEqual([]);
    // The current database is still in place, and still starts.
    expect((await run(["migrate"], { SUITE_DB: db })).code).toBe(0);
    expect(readFileSync(`${db}.keys`, "utf8")).toBe(fileKeys);
  }, 60_000);

  test("with --adopt-keys: the backup's keys become the key file, the old file is kept aside, and the start agrees", async () => {
    const { db, backup, oldKeys, fileKeys } = await earlierBackup();
    const r = await run(["restore", "--adopt-keys", backup], { SUITE_DB: db });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("adopted");
    expect(keysIn(`${db}.keys`)).toEqual(oldKeys);
    const aside = readdirSync(join(db, "..")).filter((f) => f.startsWith("suite.db.keys.replaced-"));
    expect(aside).toHaveLength(1);
    expect(readFileSync(join(db, "..", aside[0]!), "utf8")).toBe(fileKeys);
    expect(r.stdout).toContain(aside[0]!);
    // The next start finds rows equal to the file: it removes them and changes nothing else.
    expect((await run(["migrate"], { SUITE_DB: db })).code).toBe(0);
    expect(keysIn(`${db}.keys`)).toEqual(oldKeys);
    const d = new Database(db, { readonly: true });
    expect(d.query("SELECT count(*) AS n FROM settings WHERE key IN ('jwt_secret', 'refresh_key', 'encryption_key')").get()).toEqual({ n: 0 });
    d.close();
  }, 60_000);

  test("at start, key rows never silently replace an existing key file: exit 78 with the reason", async () => {
    const { db, backup, fileKeys } = await earlierBackup();
    // Copied into place by hand, not through suite restore.
    copyFileSync(backup, db);
    rmSync(`${db}-wal`, { force: true });
    rmSync(`${db}-shm`, { force: true });
    for (const command of [["migrate"], ["tenant", "list"], ["backup", join(dir, `after-${n}.db`)]]) {
      const r = await run(command, { SUITE_DB: db });
      const line = oneLineFailure(r);
      expect(r.code).toBe(78);
      expect(line).toContain(`${db}.keys`);
      expect(line).toContain("--adopt-keys");
    }
    expect(readFileSync(`${db}.keys`, "utf8")).toBe(fileKeys);
    expect(asideFiles(db)).toEqual([]);
  }, 60_000);
});
