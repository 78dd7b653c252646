import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KEY_NAMES } from "../../src/security/key-file";
import { OPERATOR_PASSWORD, operatorAppPerTest } from "./operator-kit";

/**
 * Issue 34: the console's backups on a SQLite file: "Back up now" runs `suite backup` in a child
 * process (so this file spawns), the list shows it, a one-time link hands it over, deleting needs
 * step-up, the schedule is saved, and every action is in the audit log.
 */

const root = mkdtempSync(join(tmpdir(), "suite-console-backups-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const setup = operatorAppPerTest();
let n = 0;

async function fileApp() {
  const dir = join(root, `case-${n++}`);
  const backups = join(dir, "backups");
  const o = await setup({ SUITE_BACKUP_DIR: backups }, { db: join(dir, "suite.db"), backend: "sqlite" });
  return { ...o, backups };
}

/** Polls the list until no backup is under way (the child process ends in a second or two). */
async function settled(app: Awaited<ReturnType<typeof fileApp>>["app"], op: string) {
  for (let i = 0; i < 300; i++) {
    const r = await app.json("GET", "/api/v1/operator/backups", { token: op });
    if (r.body.running === null) return r.body;
    await Bun.sleep(50);
  }
  throw new Error("the backup did not end in 15 s");
}

describe("backups in the console (SQLite file)", () => {
  test("back up now in the background, listed with its outcome; the file is checked, private and holds no key", async () => {
    const { app, signIn, backups } = await fileApp();
    await app.signup("acme");
    const op = await signIn();
    const before = await app.json("GET", "/api/v1/operator/backups", { token: op });
    expect(before.status).toBe(200);
    expect(before.body).toMatchObject({ available: true, folder: backups, backups: [], running: null, last: null });
    expect(before.body.schedule).toMatchObject({ source: "environment", enabled: true, every_hours: 24, keep: 7 });
    expect(before.body.note).toContain("key file");

    const started = await app.json("POST", "/api/v1/operator/backups", { token: op });
    expect(started.status).toBe(202);
    expect(started.body.name).toMatch(/^suite-2026-11-27T09-00-30\.000Z\.db$/);
    // One at a time: a second press while it runs is refused (the child takes longer than this turn).
    const twice = await app.json("POST", "/api/v1/operator/backups", { token: op });
    expect(twice.status).toBe(409);
    expect(twice.body.code).toBe("backup_running");

    const after = await settled(app, op);
    expect(after.last).toMatchObject({ name: started.body.name, by: "ops@server.test", ok: true, error: null });
    expect(after.backups).toHaveLength(1);
    expect(after.backups[0]).toMatchObject({ name: started.body.name, created_at: "2026-11-27T09:00:30.000Z" });
    const file = join(backups, started.body.name);
    expect(after.backups[0].bytes).toBe(statSync(file).size);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(backups).mode & 0o777).toBe(0o700);
    const copy = new Database(file, { readonly: true });
    try {
      expect((copy.query("PRAGMA integrity_check").get() as { integrity_check: string }).integrity_check).toBe("ok");
      expect((copy.query("SELECT count(*) AS n FROM tenants WHERE subdomain = 'acme'").get() as { n: number }).n).toBe(1);
      const keys = copy.query("SELECT key FROM settings").all() as { key: string }[];
      expect(keys.filter((k) => (KEY_NAMES as readonly string[]).includes(k.key))).toEqual([]);
    } finally {
      copy.close();
    }
    const audit = await app.json("GET", "/api/v1/operator/audit?size=100", { token: op });
    expect(audit.body.items.find((r: { action: string }) => r.action === "backup.started")).toMatchObject({ operator: "ops@server.test", target: `backup:${started.body.name}` });
  }, 30_000);

  test("download: a link needs step-up and works once, for this operator; deleting needs step-up; both audited", async () => {
    const { app, clock, signIn, backups } = await fileApp();
    const op = await signIn();
    const started = await app.json("POST", "/api/v1/operator/backups", { token: op });
    await settled(app, op);
    const name = started.body.name as string;

    clock.t += 11 * 60_000;
    const refused = await app.json("POST", `/api/v1/operator/backups/${name}/link`, { token: op });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe("reauthentication_required");
    const notDeleted = await app.json("DELETE", `/api/v1/operator/backups/${name}`, { token: op });
    expect(notDeleted.body.code).toBe("reauthentication_required");
    expect((await app.json("POST", "/api/v1/operator/auth/reauthenticate", { token: op, body: { password: OPERATOR_PASSWORD } })).status).toBe(200);

    expect((await app.json("POST", "/api/v1/operator/backups/suite-nope.db/link", { token: op })).body.code).toBe("backup_not_found");
    const link = await app.json("POST", `/api/v1/operator/backups/${name}/link`, { token: op });
    expect(link.status).toBe(200);
    expect(link.body.url).toMatch(/^\/api\/v1\/operator\/backup-downloads\/[A-Za-z0-9_-]{43}$/);
    // Another operator session (the same operator signed in again is allowed; the link is not a bearer of its own).
    const noSession = await app.request("GET", link.body.url);
    expect(noSession.status).toBe(401);
    const got = await app.request("GET", link.body.url, { token: op });
    expect(got.status).toBe(200);
    expect(got.headers.get("content-disposition")).toBe(`attachment; filename="${name}"`);
    expect(got.headers.get("cache-control")).toBe("no-store");
    expect(new Uint8Array(await got.arrayBuffer())).toEqual(new Uint8Array(readFileSync(join(backups, name))));
    const again = await app.json("GET", link.body.url, { token: op });
    expect(again.status).toBe(404);
    expect(again.body.code).toBe("download_not_found");

    // A link expires after 10 minutes.
    const late = await app.json("POST", `/api/v1/operator/backups/${name}/link`, { token: op });
    clock.t += 10 * 60_000 + 1;
    const op2 = await signIn();
    expect((await app.json("GET", late.body.url, { token: op2 })).status).toBe(404);

    expect((await app.json("POST", "/api/v1/operator/auth/reauthenticate", { token: op2, body: { password: OPERATOR_PASSWORD } })).status).toBe(200);
    const del = await app.json("DELETE", `/api/v1/operator/backups/${name}`, { token: op2 });
    expect(del.status).toBe(200);
    expect((await app.json("GET", "/api/v1/operator/backups", { token: op2 })).body.backups).toEqual([]);
    expect((await app.json("DELETE", `/api/v1/operator/backups/${name}`, { token: op2 })).status).toBe(404);
    const actions = (await app.json("GET", "/api/v1/operator/audit?size=100", { token: op2 })).body.items.map((r: { action: string }) => r.action);
    expect(actions).toEqual(expect.arrayContaining(["backup.download_link_created", "backup.downloaded", "backup.deleted"]));
  }, 30_000);

  test("the schedule: daily at a time, saved in settings over the environment's, step-up, 422 for a wrong time, audited", async () => {
    const { app, clock, signIn } = await fileApp();
    const op = await signIn();
    const bad = await app.json("PUT", "/api/v1/operator/backups/schedule", { token: op, body: { enabled: true, at_utc: "25:00", keep: 5 } });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(["body", "at_utc"]);
    expect((await app.json("PUT", "/api/v1/operator/backups/schedule", { token: op, body: { enabled: true, at_utc: "03:30", keep: 0 } })).status).toBe(422);

    const saved = await app.json("PUT", "/api/v1/operator/backups/schedule", { token: op, body: { enabled: true, at_utc: "03:30", keep: 5 } });
    expect(saved.status).toBe(200);
    // No backup since today's 03:30 (it is 09:00): the next is due now; then tomorrow at 03:30.
    expect(saved.body.schedule).toMatchObject({ source: "console", enabled: true, at_utc: "03:30", every_hours: null, keep: 5, next_at: "2026-11-27T09:00:30.000Z" });
    await app.json("POST", "/api/v1/operator/backups", { token: op });
    await settled(app, op);
    expect((await app.json("GET", "/api/v1/operator/backups", { token: op })).body.schedule.next_at).toBe("2026-11-28T03:30:00.000Z");
    expect(await app.ctx.repos.operators.backupSchedule()).toBe(JSON.stringify({ enabled: true, at_utc: "03:30", keep: 5 }));

    clock.t += 11 * 60_000;
    const late = await app.json("PUT", "/api/v1/operator/backups/schedule", { token: op, body: { enabled: false, at_utc: "03:30", keep: 5 } });
    expect(late.body.code).toBe("reauthentication_required");
    expect((await app.json("POST", "/api/v1/operator/auth/reauthenticate", { token: op, body: { password: OPERATOR_PASSWORD } })).status).toBe(200);
    const off = await app.json("PUT", "/api/v1/operator/backups/schedule", { token: op, body: { enabled: false, at_utc: "03:30", keep: 5 } });
    expect(off.body.schedule).toMatchObject({ source: "console", enabled: false, next_at: null });
    const rows = (await app.json("GET", "/api/v1/operator/audit?size=100", { token: op })).body.items.filter((r: { action: string }) => r.action === "backup.schedule_changed");
    expect(rows.map((r: { detail: unknown }) => r.detail)).toEqual([{ enabled: false, at_utc: "03:30", keep: 5 }, { enabled: true, at_utc: "03:30", keep: 5 }]);
  }, 30_000);

  test("a backup folder that cannot be made is said, as a 409 naming it, not a server error", async () => {
    const dir = join(root, `case-${n++}`);
    mkdirSync(dir, { recursive: true });
    // A file where the folder should be.
    writeFileSync(join(dir, "backups"), "not a folder");
    const { app, signIn } = await setup({ SUITE_BACKUP_DIR: join(dir, "backups", "inner") }, { db: join(dir, "suite.db"), backend: "sqlite" });
    const op = await signIn();
    const r = await app.json("POST", "/api/v1/operator/backups", { token: op });
    expect(r.status).toBe(409);
    expect(r.body.code).toBe("backup_folder_unusable");
    expect(r.body.detail).toContain(join(dir, "backups", "inner"));
    expect((await app.json("GET", "/api/v1/operator/backups", { token: op })).body.running).toBeNull();
  });
});
