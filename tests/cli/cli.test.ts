import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { CURRENT_PLAN, targetVersion } from "../../src/db/migrate";
import { noteLog, noteSecret } from "../security/ledger";
import { startServer } from "../server";

const BUN = process.execPath;
const TARGET = targetVersion(CURRENT_PLAN);
const MAIN = join(import.meta.dir, "..", "..", "src", "main.ts");
const dir = mkdtempSync(join(tmpdir(), "suite-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const freshDb = () => join(dir, `db-${++n}`, "suite.db");

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `bun src/main.ts ...args` with only the given settings (none of the runner's SUITE_*). */
function spawn(args: string[], env: Record<string, string>) {
  return Bun.spawn([BUN, MAIN, ...args], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, SUITE_HASH_CONCURRENCY: "2", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
}

async function run(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const p = spawn(args, env);
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  noteLog(stdout);
  noteLog(stderr);
  return { code, stdout, stderr };
}

const lines = (s: string) => s.split("\n").filter((l) => l.length > 0);

/** A failure: non-zero, exactly one line on stderr, no stack trace. */
function expectOneLineFailure(r: Run): string {
  expect(r.code).not.toBe(0);
  expect(lines(r.stderr)).toHaveLength(1);
  expect(r.stderr).not.toMatch(/^\s+at /m);
  expect(r.stderr.startsWith("suite: ")).toBe(true);
  return r.stderr.trim();
}

const PASSWORD = "long enough pw";
noteSecret("password", PASSWORD);
const ACME = ["tenant", "create", "--name", "Acme", "--subdomain", "acme", "--admin-email", "a@acme.io"];
/** The admin's password comes from the environment (or a prompt, or stdin), never an option. */
// The default address spelt out: tenant create mails a link, and warns when the address is the default.
const WITH_PASSWORD = { SUITE_NEW_PASSWORD: PASSWORD, SUITE_PUBLIC_URL: "http://localhost:8000" };

describe("migrate", () => {
  test("creates the database and prints the version; a second run is up to date", async () => {
    const db = freshDb();
    const first = await run(["migrate"], { SUITE_DB: db });
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(`schema version 0 -> ${TARGET}`);
    expect(existsSync(db)).toBe(true);
    const again = await run(["migrate", "--db", db]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`schema version ${TARGET}, up to date`);
    const d = new Database(db, { readonly: true });
    expect(d.query("PRAGMA user_version").get()).toEqual({ user_version: TARGET });
    d.close();
  });

  test("several migrate runs at once on a new file all succeed", async () => {
    const db = freshDb();
    const runs = await Promise.all(Array.from({ length: 6 }, () => run(["migrate"], { SUITE_DB: db })));
    for (const r of runs) {
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
    }
    expect(runs.filter((r) => r.stdout.includes(`0 -> ${TARGET}`))).toHaveLength(1);
  });

  test("a database from a newer release, or not ours, is refused in one line", async () => {
    const newer = freshDb();
    expect((await run(["migrate"], { SUITE_DB: newer })).code).toBe(0);
    const d = new Database(newer);
    d.run("PRAGMA user_version = 99");
    d.close();
    expect(expectOneLineFailure(await run(["migrate"], { SUITE_DB: newer }))).toContain("newer");

    const foreign = join(dir, "foreign.db");
    const f = new Database(foreign, { create: true });
    f.run("CREATE TABLE stuff (x INTEGER)");
    f.close();
    expect(expectOneLineFailure(await run(["migrate"], { SUITE_DB: foreign }))).toContain("not a Workspace Suite database");
  });
});

describe("tenant create", () => {
  const db = freshDb();

  test("creates what signup creates", async () => {
    const r = await run(ACME, { SUITE_DB: db, ...WITH_PASSWORD });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("acme");
    expect(r.stdout).not.toContain("long enough pw");

    const d = new Database(db, { readonly: true });
    const tenant = d.query("SELECT * FROM tenants").get() as { id: string; name: string; subdomain: string };
    expect(tenant).toMatchObject({ name: "Acme", subdomain: "acme" });
    expect(d.query("SELECT module FROM tenant_modules WHERE tenant_id = ? ORDER BY module").all(tenant.id)).toEqual([{ module: "crm" }, { module: "users" }]);
    const profiles = d.query("SELECT id, name, is_admin FROM profiles WHERE tenant_id = ? ORDER BY name").all(tenant.id) as { id: string; name: string; is_admin: number }[];
    expect(profiles.map((p) => [p.name, p.is_admin])).toEqual([["Administrator", 1], ["Standard user", 0]]);
    const stages = d.query("SELECT key FROM pipeline_stages WHERE tenant_id = ? ORDER BY position").all(tenant.id) as { key: string }[];
    expect(stages.map((s) => s.key)).toEqual(["new", "qualified", "proposal", "negotiation", "won", "lost"]);
    const users = d.query("SELECT * FROM users WHERE tenant_id = ?").all(tenant.id) as { email: string; role: string; profile_id: string; password_hash: string }[];
    expect(users).toHaveLength(1);
    expect(users[0]).toMatchObject({ email: "a@acme.io", role: "admin", profile_id: profiles[0]!.id });
    expect(users[0]!.password_hash.startsWith("$argon2id$")).toBe(true);
    expect(await Bun.password.verify("long enough pw", users[0]!.password_hash)).toBe(true);
    d.close();
  });

  test("a taken subdomain fails in one line saying so, and changes nothing", async () => {
    const r = await run(ACME, { SUITE_DB: db, ...WITH_PASSWORD });
    expect(expectOneLineFailure(r)).toContain("taken");
    const d = new Database(db, { readonly: true });
    expect(d.query("SELECT count(*) AS n FROM tenants").get()).toEqual({ n: 1 });
    expect(d.query("SELECT count(*) AS n FROM users").get()).toEqual({ n: 1 });
    d.close();
  });

  test("--modules and --admin-name are honoured; email and subdomain are normalized", async () => {
    const r = await run(
      ["tenant", "create", "--name", "Beta", "--subdomain", "Beta", "--admin-email", " Boss@Beta.IO ", "--modules", "users,users", "--admin-name", "Bea Boss"],
      { SUITE_DB: db, SUITE_NEW_PASSWORD: "long enough pw", SUITE_PUBLIC_URL: "http://localhost:8000" },
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const d = new Database(db, { readonly: true });
    const t = d.query("SELECT id FROM tenants WHERE subdomain = 'beta'").get() as { id: string };
    expect(d.query("SELECT module FROM tenant_modules WHERE tenant_id = ?").all(t.id)).toEqual([{ module: "users" }]);
    expect(d.query("SELECT email, full_name FROM users WHERE tenant_id = ?").get(t.id)).toEqual({ email: "boss@beta.io", full_name: "Bea Boss" });
    d.close();
  });

  test("bad option values fail in one line naming the option, with no stack trace", async () => {
    const withOpt = (name: string, value: string) => {
      const args = [...ACME];
      args[args.indexOf(name) + 1] = value;
      return run(args, { SUITE_DB: db, ...WITH_PASSWORD });
    };
    expect(expectOneLineFailure(await withOpt("--subdomain", "-x"))).toContain("--subdomain");
    expect(expectOneLineFailure(await withOpt("--subdomain", "bad-"))).toContain("--subdomain");
    expect(expectOneLineFailure(await withOpt("--subdomain", "admin"))).toContain("--subdomain");
    expect(expectOneLineFailure(await withOpt("--admin-email", "not-an-email"))).toContain("--admin-email");
    const short = expectOneLineFailure(await run([...ACME.slice(0, 4), "--subdomain", "shortpw", "--admin-email", "s@shortpw.io"], { SUITE_DB: db, SUITE_NEW_PASSWORD: "short" }));
    expect(short).toContain("the admin's password");
    expect(short).not.toContain("short\"");
    expect(expectOneLineFailure(await withOpt("--name", ""))).toContain("--name");
    expect(expectOneLineFailure(await run([...ACME.slice(0, 2), "--name", "X"], { SUITE_DB: db, ...WITH_PASSWORD }))).toContain("--subdomain");
    expect(expectOneLineFailure(await run([...ACME, "--modules", "crm,billing"], { SUITE_DB: db, ...WITH_PASSWORD }))).toContain("--modules");
    expectOneLineFailure(await run(["tenant", "delete"], { SUITE_DB: db }));
    expectOneLineFailure(await run([...ACME.slice(0, -1)], { SUITE_DB: db }));
    const d = new Database(db, { readonly: true });
    expect(d.query("SELECT count(*) AS n FROM tenants").get()).toEqual({ n: 2 });
    d.close();
  });
});

describe("backup", () => {
  test("writes a copy that passes integrity_check, and refuses an existing file", async () => {
    const db = freshDb();
    expect((await run(ACME, { SUITE_DB: db, ...WITH_PASSWORD })).code).toBe(0);
    const copy = join(dir, "copy.db");
    const r = await run(["backup", copy], { SUITE_DB: db });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("integrity ok");
    // The data only, private, and the answer says where the keys are.
    expect(r.stdout).toContain(`keep a copy of ${db}.keys`);
    expect(statSync(copy).mode & 0o777).toBe(0o600);
    const b = new Database(copy, { readonly: true });
    expect(b.query("SELECT count(*) AS n FROM settings").get()).toEqual({ n: 0 });
    expect(b.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
    expect(b.query("SELECT subdomain FROM tenants").all()).toEqual([{ subdomain: "acme" }]);
    expect(b.query("SELECT count(*) AS n FROM pipeline_stages").get()).toEqual({ n: 6 });
    b.close();

    const before = readFileSync(copy);
    expect(expectOneLineFailure(await run(["backup", copy], { SUITE_DB: db }))).toContain("exists");
    expect(readFileSync(copy).equals(before)).toBe(true);

    const other = join(dir, "not-a-db.txt");
    writeFileSync(other, "keep me");
    expectOneLineFailure(await run(["backup", other], { SUITE_DB: db }));
    expect(readFileSync(other, "utf8")).toBe("keep me");
  });

  test("needs a FILE and an existing database", async () => {
    expectOneLineFailure(await run(["backup"], { SUITE_DB: freshDb() }));
    const missing = freshDb();
    expect(expectOneLineFailure(await run(["backup", join(dir, "never.db")], { SUITE_DB: missing }))).toContain("no database");
    expect(existsSync(missing)).toBe(false);
    expect(existsSync(join(dir, "never.db"))).toBe(false);
  });
});

describe("usage", () => {
  test("help prints the usage and exits 0", async () => {
    for (const args of [["help"], ["--help"]]) {
      const r = await run(args, { SUITE_PORT: "abc" });
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("usage: suite");
      for (const word of ["serve", "migrate", "tenant create", "backup FILE", "SUITE_PORT", "SUITE_DB"]) expect(r.stdout).toContain(word);
    }
  });

  test("an unknown command or option fails in one line", async () => {
    const db = freshDb();
    expect(expectOneLineFailure(await run(["frobnicate"], { SUITE_DB: db }))).toContain("frobnicate");
    expect(expectOneLineFailure(await run(["migrate", "--bogus", "1"], { SUITE_DB: db }))).toContain("--bogus");
    expectOneLineFailure(await run(["migrate", "--port"], { SUITE_DB: db }));
    expect(expectOneLineFailure(await run(["migrate", "now"], { SUITE_DB: db }))).toContain("now");
    expect(expectOneLineFailure(await run(["backup", join(dir, "b1.db"), join(dir, "b2.db")], { SUITE_DB: db }))).toContain("b2.db");
    expect(existsSync(db)).toBe(false);
  });

  test("serve with a bad setting exits non-zero with exactly one stderr line", async () => {
    const db = freshDb();
    const r = await run(["serve"], { SUITE_DB: db, SUITE_PORT: "abc" });
    expect(r.stderr).toBe('suite: invalid SUITE_PORT="abc": expected a port number from 1 to 65535\n');
    expect(r.code).not.toBe(0);
    expect(r.stdout).toBe("");
    expect(existsSync(db)).toBe(false);
    expect(expectOneLineFailure(await run([], { SUITE_DB: db, SUITE_COOKIE_SECURE: "maybe" }))).toContain("SUITE_COOKIE_SECURE");
  });

  test("serve on a port already in use fails in one line", async () => {
    const busy = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
    try {
      const r = await run(["serve"], { SUITE_DB: freshDb(), SUITE_HOST: "127.0.0.1", SUITE_PORT: String(busy.port) });
      expectOneLineFailure(r);
    } finally {
      busy.stop(true);
    }
  });
});

const signupBody = (subdomain: string) => ({ body: { email: `a@${subdomain}.io`, password: PASSWORD, tenant_name: subdomain, subdomain } });

describe("serve", () => {
  test("answers health, and on SIGTERM stops cleanly within 10 s", async () => {
    const db = freshDb();
    const s = await startServer(db);
    let stopped: Awaited<ReturnType<typeof s.stop>>;
    try {
      const health = await s.call("GET", "/api/v1/health");
      expect(health.status).toBe(200);
      expect(health.body).toEqual({ status: "ok" });
      // A write, so that the WAL has something in it to checkpoint.
      expect((await s.call("POST", "/api/v1/auth/signup", signupBody("acme"))).status).toBe(201);

      const started = performance.now();
      stopped = await s.stop();
      expect(stopped.code).toBe(0);
      expect(performance.now() - started).toBeLessThan(10_000);
    } finally {
      s.kill();
    }
    expect(stopped.stderr).toBe("");
    const log = lines(stopped.stdout).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(log.some((l) => l.msg === "request" && l.path === "/api/v1/health" && l.status === 200)).toBe(true);
    expect(JSON.stringify(log)).not.toContain("long enough pw");

    const wal = `${db}-wal`;
    expect(!existsSync(wal) || statSync(wal).size === 0).toBe(true);
    const d = new Database(db, { readonly: true });
    expect(d.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
    expect(d.query("SELECT subdomain FROM tenants").all()).toEqual([{ subdomain: "acme" }]);
    d.close();
  });

  test("an acknowledged write survives kill -9", async () => {
    const db = freshDb();
    const s = await startServer(db);
    try {
      expect((await s.call("GET", "/api/v1/health")).status).toBe(200);
      expect((await s.call("POST", "/api/v1/auth/signup", signupBody("durable"))).status).toBe(201);
    } finally {
      s.kill();
      await s.process.exited;
    }
    const d = new Database(db);
    expect(d.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
    expect(d.query("SELECT subdomain FROM tenants").all()).toEqual([{ subdomain: "durable" }]);
    expect(d.query("SELECT count(*) AS n FROM users").get()).toEqual({ n: 1 });
    d.close();
  });
});
