import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { listBackups } from "../../src/cli/backup-schedule";
import { ConfigError, loadConfig } from "../../src/config";
import { startServer } from "../server";
import { PASSWORD, createTenant, mode, run } from "./backup-kit";

const dir = mkdtempSync(join(tmpdir(), "suite-backups-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Write {
  id: string;
  name: string;
  token: string;
  sentAt: number;
  ackAt: number;
}

const logLines = (text: string) =>
  text
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe("scheduled backups", () => {
  test("a backup taken under writes from several clients, restored, holds every write acknowledged before it began", async () => {
    const db = join(dir, "writes", "suite.db");
    const backups = join(dir, "writes-backups");
    await createTenant(db, "acme");
    // A backup every 1.08 s, none removed.
    const server = await startServer(db, { SUITE_BACKUP_DIR: backups, SUITE_BACKUP_EVERY: "0.0003", SUITE_BACKUP_KEEP: "100" });
    const tokens: string[] = [];
    for (let i = 0; i < 4; i++) {
      const login = await server.call("POST", "/api/v1/auth/login", { tenant: "acme", body: { email: "admin@acme.test", password: PASSWORD } });
      expect(login.status).toBe(200);
      tokens.push(login.body.access_token);
    }
    const writes: Write[] = [];
    let writing = true;
    const client = async (c: number) => {
      for (let i = 0; writing; i++) {
        const name = `client ${c} account ${i}`;
        const sentAt = Date.now();
        const r = await server.call("POST", "/api/v1/crm/accounts", { token: tokens[c]!, body: { name } });
        expect(r.status).toBe(201);
        writes.push({ id: r.body.id, name, token: tokens[c]!, sentAt, ackAt: Date.now() });
      }
    };
    const clients = tokens.map((_, c) => client(c));

    // The backup: the first one to start once writes have been acknowledged for a while.
    let chosen: { name: string; at: number } | undefined;
    const deadline = Date.now() + 45_000;
    while (!chosen && Date.now() < deadline) {
      await Bun.sleep(50);
      const firstAck = writes[0]?.ackAt;
      if (firstAck !== undefined) chosen = listBackups(backups, db).find((b) => b.at > firstAck + 300);
    }
    expect(chosen).toBeDefined();
    const backup = join(backups, chosen!.name);
    const finishedBy = statSync(backup).mtimeMs;
    // Writes go on after it, so that the restore visibly turns the clock back.
    while (writes.filter((w) => w.sentAt > finishedBy).length < 20 && Date.now() < deadline + 15_000) await Bun.sleep(50);
    writing = false;
    await Promise.all(clients);
    const stopped = await server.stop();
    expect(stopped.code).toBe(0);
    const written = logLines(stopped.stdout).find((l) => l.msg === "backup written" && l.path === backup);
    expect(written).toMatchObject({ level: "info", bytes: statSync(backup).size, integrity: "ok" });
    expect(typeof written!.ms).toBe("number");

    const restore = await run(["restore", backup], { SUITE_DB: db });
    expect(restore.stderr).toBe("");
    expect(restore.code).toBe(0);

    const before = writes.filter((w) => w.ackAt < chosen!.at);
    const after = writes.filter((w) => w.sentAt > finishedBy);
    expect(before.length).toBeGreaterThan(10);
    expect(after.length).toBeGreaterThanOrEqual(20);
    const again = await startServer(db);
    try {
      // The sessions of before the backup still sign requests: the keys stayed.
      const missing: string[] = [];
      for (const w of before) {
        const r = await again.call("GET", `/api/v1/crm/accounts/${w.id}`, { token: w.token });
        if (r.status !== 200 || r.body.name !== w.name) missing.push(`${w.name}: ${r.status}`);
      }
      expect(missing).toEqual([]);
      for (const w of after) expect((await again.call("GET", `/api/v1/crm/accounts/${w.id}`, { token: w.token })).status).toBe(404);
    } finally {
      expect((await again.stop()).code).toBe(0);
    }
    const d = new Database(db, { readonly: true });
    expect(d.query("PRAGMA integrity_check").all()).toEqual([{ integrity_check: "ok" }]);
    d.close();
  }, 120_000);

  test("keeps the newest SUITE_BACKUP_KEEP, removes only files it named itself, 0600 files in a 0700 folder", async () => {
    const db = join(dir, "keep", "suite.db");
    const backups = join(dir, "keep-backups");
    await createTenant(db, "acme");
    mkdirSync(backups, { mode: 0o755 });
    const foreign = ["notes.txt", "suite-manual.db", "other-2026-01-01T00-00-00.000Z.db", "suite-2026-01-01T00-00-00.000Z.db.copy"];
    for (const f of foreign) writeFileSync(join(backups, f), "not a suite backup");
    // Ours by name: the oldest, so pruned; and a temp file a crash left, so removed at start.
    const oldest = "suite-2020-01-01T00-00-00.000Z.db";
    writeFileSync(join(backups, oldest), "an old backup");
    const staleTemp = ".suite-2020-01-02T00-00-00.000Z.db.999.abcd1234.tmp";
    writeFileSync(join(backups, staleTemp), "half a backup");

    const server = await startServer(db, { SUITE_BACKUP_DIR: backups, SUITE_BACKUP_EVERY: "0.0002", SUITE_BACKUP_KEEP: "2" });
    const seen = new Set<string>();
    const deadline = Date.now() + 60_000;
    while (seen.size < 4 && Date.now() < deadline) {
      await Bun.sleep(50);
      for (const b of listBackups(backups, db)) if (b.name !== oldest) seen.add(b.name);
    }
    const stopped = await server.stop();
    expect(stopped.code).toBe(0);
    expect(seen.size).toBeGreaterThanOrEqual(4);

    const left = listBackups(backups, db).map((b) => b.name);
    expect(left).toHaveLength(2);
    expect(left).not.toContain(oldest);
    // The newest two of all it wrote (one may have been finished while the server was stopping).
    expect([...new Set([...seen, ...left])].sort().slice(-2)).toEqual(left);
    for (const f of foreign) expect(existsSync(join(backups, f))).toBe(true);
    expect(readdirSync(backups).filter((f) => f.endsWith(".tmp"))).toEqual([]);
    expect(mode(statSync(backups))).toBe(0o700);
    for (const name of left) {
      expect(mode(statSync(join(backups, name)))).toBe(0o600);
      const b = new Database(join(backups, name), { readonly: true });
      expect(b.query("PRAGMA integrity_check").all()).toEqual([{ integrity_check: "ok" }]);
      expect(b.query("SELECT subdomain FROM tenants").all()).toEqual([{ subdomain: "acme" }]);
      b.close();
    }
    const log = logLines(stopped.stdout);
    expect(log.find((l) => l.msg === "scheduled backups")).toMatchObject({ dir: backups, every_hours: 0.0002, keep: 2 });
    const removed = log.filter((l) => l.msg === "backup written").flatMap((l) => l.removed as string[]);
    expect(removed).toContain(oldest);
    expect(removed.every((r) => r.startsWith("suite-"))).toBe(true);
    expect(log.filter((l) => l.msg === "backup failed" && l.error !== "stopped with the server")).toEqual([]);
  }, 90_000);

  test("after a restart the next backup is due a period after the newest in the folder, not at once", async () => {
    const db = join(dir, "restart", "suite.db");
    const backups = join(dir, "restart-backups");
    await createTenant(db, "acme");
    mkdirSync(backups, { mode: 0o700 });
    const recent = `suite-${new Date(Date.now() - 60_000).toISOString().replace(/:/g, "-")}.db`;
    writeFileSync(join(backups, recent), "made a minute ago");
    const server = await startServer(db, { SUITE_BACKUP_DIR: backups, SUITE_BACKUP_EVERY: "1" });
    expect((await server.call("GET", "/api/v1/health")).status).toBe(200);
    const stopped = await server.stop();
    expect(stopped.code).toBe(0);
    const log = logLines(stopped.stdout);
    expect(log.find((l) => l.msg === "scheduled backups")).toMatchObject({ every_hours: 1, keep: 7 });
    expect(log.filter((l) => l.msg === "backup started")).toEqual([]);
    expect(readdirSync(backups)).toEqual([recent]);
  }, 60_000);
});

describe("backup settings", () => {
  test("defaults: off, every 24 hours, keep 7; fractions of an hour accepted; bad values refused in one line", () => {
    expect(loadConfig({}, {})).toMatchObject({ backupDir: null, backupEvery: 24, backupKeep: 7 });
    expect(loadConfig({}, { SUITE_BACKUP_DIR: "/srv/backups", SUITE_BACKUP_EVERY: "0.5", SUITE_BACKUP_KEEP: "30" })).toMatchObject({
      backupDir: "/srv/backups",
      backupEvery: 0.5,
      backupKeep: 30,
    });
    expect(loadConfig({ "backup-every": "6" }, {}).backupEvery).toBe(6);
    for (const bad of ["0", "-1", "abc", "1e3", "9000"]) {
      expect(() => loadConfig({}, { SUITE_BACKUP_EVERY: bad })).toThrow(ConfigError);
    }
    expect(() => loadConfig({}, { SUITE_BACKUP_EVERY: "0" })).toThrow('invalid SUITE_BACKUP_EVERY="0": expected a number of hours above 0');
    expect(() => loadConfig({}, { SUITE_BACKUP_KEEP: "0" })).toThrow(ConfigError);
  });
});
