import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { backupCommand } from "../../src/cli/admin";
import { ConfigError, loadConfig } from "../../src/config";
import { openDatabase } from "../../src/db/database";
import { CURRENT_PLAN, migrate } from "../../src/db/migrate";
import { KEY_NAMES, createKeyFile, generateKeys, keyFileOf, readKeyFile } from "../../src/security/key-file";
import { ME, forge } from "../auth/support";
import { type TestApp, testApp } from "../helpers";
import { freePort } from "../server";
import { noteSecret } from "./ledger";

const root = mkdtempSync(join(tmpdir(), "suite-keys-"));
const apps: TestApp[] = [];
afterAll(() => {
  for (const a of apps) a.close();
  rmSync(root, { recursive: true, force: true });
});

let n = 0;
/** A database path in a folder that does not exist yet. */
const freshDb = () => join(root, `d${++n}`, "data", "suite.db");
const mode = (f: string) => statSync(f).mode & 0o777;
const app = (db: string, env: Record<string, string> = {}) => {
  const t = testApp({ db, env });
  apps.push(t);
  for (const v of Object.values(t.ctx.keys)) noteSecret("server key", v);
  return t;
};
const close = (t: TestApp) => {
  apps.splice(apps.indexOf(t), 1);
  t.close();
};
const keysIn = (file: string) => JSON.parse(readFileSync(file, "utf8")) as Record<string, string>;
const settingsOf = (file: string) => {
  const d = new Database(file, { readonly: true });
  const rows = d.query("SELECT key, value FROM settings").all() as Array<{ key: string; value: string }>;
  d.close();
  return rows;
};

/** A database as an earlier release left it: world-readable, keys in the settings table, an account. */
async function earlierRelease(db: string) {
  const t = app(db);
  const org = await t.signup("olden");
  const keys = { jwt_secret: t.ctx.keys.jwtSecret, refresh_key: t.ctx.keys.refreshKey, encryption_key: t.ctx.keys.encryptionKey };
  close(t);
  const d = new Database(db);
  for (const [k, v] of Object.entries(keys)) d.run("INSERT INTO settings (key, value) VALUES (?, ?)", [k, v]);
  d.close();
  rmSync(keyFileOf(db));
  for (const f of [db, keyFileOf(db)]) if (existsSync(f)) chmodSync(f, 0o644);
  return { org, keys };
}

describe("files are the owner's alone", () => {
  test("the folder it creates is 0700; the database, -wal, -shm and key file 0600", async () => {
    const db = freshDb();
    const t = app(db);
    await t.signup("modes");
    expect(mode(join(db, ".."))).toBe(0o700);
    for (const f of [db, `${db}-wal`, `${db}-shm`, keyFileOf(db)]) expect({ f, mode: mode(f) }).toEqual({ f, mode: 0o600 });
  });

  test("files an earlier release left 0644 are tightened on open", () => {
    const db = freshDb();
    openDatabase(db).close();
    for (const f of [db, `${db}.v2.bak`, keyFileOf(db)]) {
      if (!existsSync(f)) writeFileSync(f, f.endsWith(".keys") ? JSON.stringify(generateKeys()) : "");
      chmodSync(f, 0o644);
    }
    openDatabase(db).close();
    for (const f of [db, `${db}.v2.bak`, keyFileOf(db)]) expect({ f, mode: mode(f) }).toEqual({ f, mode: 0o600 });
  });

  test("a migration's .v<N>.bak copy is 0600", () => {
    const db = freshDb();
    const d = openDatabase(db);
    migrate(d, CURRENT_PLAN, db);
    const extra = { schema: CURRENT_PLAN.schema, migrations: [...CURRENT_PLAN.migrations, { version: 99, name: "noop", sql: "CREATE TABLE x99 (a)" }] };
    const r = migrate(d, extra, db);
    d.close();
    expect(r.backup).not.toBeNull();
    expect(mode(r.backup!)).toBe(0o600);
  });
});

describe("the key file", () => {
  test("created on first start beside the database; no key in the database; SUITE_JWT_SECRET still wins", async () => {
    const db = freshDb();
    const t = app(db);
    const org = await t.signup("keyfile");
    const file = keysIn(keyFileOf(db));
    expect(Object.keys(file).sort()).toEqual([...KEY_NAMES].sort());
    expect(t.ctx.keys).toEqual({ jwtSecret: file.jwt_secret!, refreshKey: file.refresh_key!, encryptionKey: file.encryption_key! });
    expect(settingsOf(db).filter((r) => (KEY_NAMES as readonly string[]).includes(r.key))).toEqual([]);
    close(t);
    // A restart reads the same keys: the session lives on.
    const again = app(db);
    expect((await again.json("GET", ME, { token: org.access_token })).status).toBe(200);
    close(again);
    const env = app(db, { SUITE_JWT_SECRET: "e".repeat(40) });
    expect(env.ctx.keys.jwtSecret).toBe("e".repeat(40));
    expect(env.ctx.keys.refreshKey).toBe(file.refresh_key!);
  });

  test("an earlier release's keys move from the settings table to the file, and its sessions live on", async () => {
    const db = freshDb();
    const { org, keys } = await earlierRelease(db);
    const t = app(db);
    expect(keysIn(keyFileOf(db))).toEqual(keys);
    expect(mode(keyFileOf(db))).toBe(0o600);
    expect(settingsOf(db)).toEqual([]);
    expect((await t.json("GET", ME, { token: org.access_token })).status).toBe(200);
    // The rows were deleted with secure_delete: their bytes are nowhere in the file once checkpointed.
    close(t);
    const bytes = readFileSync(db);
    for (const v of Object.values(keys)) expect(bytes.includes(Buffer.from(v))).toBe(false);
  });

  test("upgrading a first-release database: the keys leave it before the migration's .v1.bak copy is made", () => {
    const db = freshDb();
    const d = openDatabase(db);
    d.run(readFileSync(join(import.meta.dir, "..", "db", "fixtures", "schema-v1.sql"), "utf8"));
    d.run("PRAGMA user_version = 1");
    const keys = generateKeys();
    for (const [k, v] of Object.entries(keys)) d.run("INSERT INTO settings (key, value) VALUES (?, ?)", [k, v]);
    d.close();
    const t = app(db);
    expect(t.ctx.keys.jwtSecret).toBe(keys.jwt_secret);
    expect(keysIn(keyFileOf(db))).toEqual(keys);
    const bak = `${db}.v1.bak`;
    expect(mode(bak)).toBe(0o600);
    expect(settingsOf(bak)).toEqual([]);
    const bytes = readFileSync(bak);
    for (const v of Object.values(keys)) expect(bytes.includes(Buffer.from(v))).toBe(false);
  });

  test("a crash between writing the file and deleting the rows: the next start finds the file and deletes the rows", async () => {
    const db = freshDb();
    const { keys } = await earlierRelease(db);
    createKeyFile(keyFileOf(db), keys);
    const files = readdirSync(join(db, ".."));
    const t = app(db);
    expect(t.ctx.keys.jwtSecret).toBe(keys.jwt_secret);
    expect(settingsOf(db)).toEqual([]);
    // Nothing was replaced: the file already held these keys.
    expect(readdirSync(join(db, "..")).filter((f) => f.includes("replaced"))).toEqual([]);
    expect(files.filter((f) => f.includes("replaced"))).toEqual([]);
  });

  test("an earlier release's backup put beside a newer key file by hand: refused, never silently replacing the file (issue 29)", async () => {
    const db = freshDb();
    const { keys } = await earlierRelease(db);
    const current = generateKeys();
    createKeyFile(keyFileOf(db), current);
    expect(() => app(db)).toThrow(ConfigError);
    expect(() => app(db)).toThrow("suite restore --adopt-keys");
    expect(keysIn(keyFileOf(db))).toEqual(current);
    expect(readdirSync(join(db, "..")).filter((f) => f.includes("replaced"))).toEqual([]);
    // The rows stay until the operator decides (tests/cli/restore-keys.test.ts adopts them).
    expect(settingsOf(db).map((r) => r.key).sort()).toEqual(Object.keys(keys).sort());
  });

  test("two starting at once agree on one file: the second to create it gets the first's keys", () => {
    const file = join(root, "race.keys");
    const a = generateKeys();
    const b = generateKeys();
    expect(createKeyFile(file, a)).toEqual(a);
    expect(createKeyFile(file, b)).toEqual(a);
    expect(readKeyFile(file)).toEqual(a);
    // No temp file is left behind.
    expect(readdirSync(root).filter((f) => f.includes("race.keys") && f.endsWith(".tmp"))).toEqual([]);
  });

  test("four processes starting at once on a new database all use the one key file's keys", async () => {
    const db = freshDb();
    const script = `
      const { createContext } = await import(${JSON.stringify(join(import.meta.dir, "..", "..", "src", "context.ts"))});
      const { loadConfig } = await import(${JSON.stringify(join(import.meta.dir, "..", "..", "src", "config.ts"))});
      const ctx = createContext({ config: loadConfig({}, { SUITE_DB: ${JSON.stringify(db)} }), log: () => {} });
      const k = ctx.keys;
      console.log(new Bun.CryptoHasher("sha256").update(k.jwtSecret + k.refreshKey + k.encryptionKey).digest("hex"));
      ctx.close();`;
    const runs = await Promise.all(
      [0, 1, 2, 3].map(async () => {
        const p = Bun.spawn([process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe", env: { PATH: process.env.PATH ?? "" } });
        const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
        return { out: out.trim(), err, code };
      }),
    );
    const file = keysIn(keyFileOf(db));
    const want = new Bun.CryptoHasher("sha256").update(file.jwt_secret! + file.refresh_key! + file.encryption_key!).digest("hex");
    expect(runs.map((r) => ({ code: r.code, err: r.err, out: r.out }))).toEqual(runs.map(() => ({ code: 0, err: "", out: want })));
    expect(readdirSync(join(db, "..")).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });

  test("a database with accounts but no key file is refused, naming the file (exit 78); {} starts over with new keys", async () => {
    const db = freshDb();
    const t = app(db);
    await t.signup("lostkeys");
    const old = t.ctx.keys;
    close(t);
    rmSync(keyFileOf(db));
    expect(() => testApp({ db })).toThrow(ConfigError);
    expect(() => testApp({ db })).toThrow(keyFileOf(db));
    const r = Bun.spawnSync([process.execPath, join(import.meta.dir, "..", "..", "src", "main.ts"), "serve", "--port", String(freePort())], {
      env: { PATH: process.env.PATH ?? "", SUITE_DB: db },
      timeout: 20_000,
    });
    expect(r.exitCode).toBe(78);
    const err = r.stderr.toString();
    expect(err.trim().split("\n")).toHaveLength(1);
    expect(err).toContain(keyFileOf(db));
    expect(existsSync(keyFileOf(db))).toBe(false);
    // The operator's way out: an empty object, filled with new keys.
    writeFileSync(keyFileOf(db), "{}");
    const fresh = app(db);
    expect(fresh.ctx.keys.jwtSecret).not.toBe(old.jwtSecret);
    expect(Object.keys(keysIn(keyFileOf(db))).sort()).toEqual([...KEY_NAMES].sort());
  });

  test("an in-memory database keeps its keys in memory", () => {
    const t = testApp();
    apps.push(t);
    expect(t.ctx.keys.jwtSecret.length).toBeGreaterThanOrEqual(32);
    expect(t.ctx.db.query("SELECT count(*) AS n FROM settings").get()).toEqual({ n: 0 });
  });
});

describe("suite backup", () => {
  /** Every text and blob value of every table of a database. */
  const everything = (file: string): string[] => {
    const d = new Database(file, { readonly: true });
    const out = new Set<string>();
    const tables = d.query("SELECT name FROM sqlite_schema WHERE type = 'table'").all() as Array<{ name: string }>;
    for (const { name } of tables) {
      for (const row of d.query(`SELECT * FROM "${name}"`).values() as unknown[][]) {
        for (const v of row) if (typeof v === "string") out.add(v);
        else if (v instanceof Uint8Array) out.add(Buffer.from(v).toString("utf8"));
      }
    }
    d.close();
    return [...out];
  };

  for (const origin of ["this release", "an earlier release (keys in the database)"]) {
    test(`from ${origin}: the copy is 0600, holds no key, and nothing in it forges an accepted token`, async () => {
      const db = freshDb();
      let keys: Record<string, string>;
      let t: TestApp;
      let org: Awaited<ReturnType<TestApp["signup"]>>;
      if (origin === "this release") {
        t = app(db);
        org = await t.signup("backedup");
        keys = keysIn(keyFileOf(db));
      } else {
        const before = await earlierRelease(db);
        keys = before.keys;
        org = before.org;
        t = undefined as unknown as TestApp;
      }
      const copy = join(root, `backup-${n}.db`);
      const lines: string[] = [];
      backupCommand(loadConfig({}, { SUITE_DB: db }), copy, (l) => lines.push(l));
      expect(mode(copy)).toBe(0o600);
      expect(lines.join("\n")).toContain(`keep a copy of ${keyFileOf(db)}`);
      expect(keysIn(keyFileOf(db))).toEqual(keys);
      expect(settingsOf(copy).filter((r) => (KEY_NAMES as readonly string[]).includes(r.key))).toEqual([]);
      const bytes = readFileSync(copy);
      for (const v of Object.values(keys)) expect(bytes.includes(Buffer.from(v))).toBe(false);

      // The attacker's attempt: sign the session's own claims with every value the copy holds.
      t ??= app(db);
      const candidates = everything(copy);
      expect(candidates.length).toBeGreaterThan(20);
      let accepted = 0;
      for (const c of candidates) {
        if (c.length === 0) continue;
        const token = await forge(t, org.access_token, {}, {}, new TextEncoder().encode(c));
        if ((await t.json("GET", ME, { token })).status !== 401) accepted++;
      }
      expect(accepted).toBe(0);
      // The same forgery with the key file's key is accepted: the attempt itself was sound.
      const real = await forge(t, org.access_token, {}, {}, new TextEncoder().encode(keys.jwt_secret!));
      expect((await t.json("GET", ME, { token: real })).status).toBe(200);
    });
  }
});
