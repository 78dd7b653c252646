import { describe, expect, test } from "bun:test";
import { testApp } from "../helpers";
import { REQUEST_ID, expectError } from "./support";
import { mkdtempSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ON_POSTGRES, closeDatabase } from "../support/backend";
import { testSql } from "../support/sql";

describe("GET /api/v1/health", () => {
  test("200 {status: ok} when the database answers", async () => {
    const t = testApp();
    try {
      const r = await t.json("GET", "/api/v1/health");
      expect(r.status).toBe(200);
      expect(r.body).toStrictEqual({ status: "ok" });
      expect(r.headers.get("content-type")).toStartWith("application/json");
      expect(r.headers.get("cache-control")).toBe("no-store");
      expect(r.headers.get("x-request-id")).toMatch(REQUEST_ID);
    } finally {
      t.close();
    }
  });

  test("needs no credentials and no tenant, and ignores both", async () => {
    const t = testApp();
    try {
      expect((await t.json("GET", "/api/v1/health", { tenant: "nosuch" })).body).toEqual({ status: "ok" });
      expect((await t.json("GET", "/api/v1/health", { token: "garbage", headers: { "x-tenant": "other" } })).body).toEqual({ status: "ok" });
    } finally {
      t.close();
    }
  });

  test("503 unavailable once the database is closed", async () => {
    const t = testApp();
    expect((await t.json("GET", "/api/v1/health")).status).toBe(200);
    await closeDatabase(t.ctx);
    const r = await t.json("GET", "/api/v1/health");
    expect(r.body).toEqual({ detail: "The database does not answer.", code: "unavailable" });
    expectError(r, 503, "unavailable");
    // A known outage, not a crash: no error line, one access line.
    expect(t.logs.filter((l) => l.level === "error")).toEqual([]);
    expect(t.logs.at(-1)).toMatchObject({ msg: "request", path: "/api/v1/health", status: 503 });
  });

  test("503 also when the app's statements were prepared before the close (a busy app)", async () => {
    const t = testApp();
    const org = await t.signup("busy");
    await closeDatabase(t.ctx);
    // Statements prepared while open keep a closed connection half alive: health must not trust them.
    const r = await t.json("GET", "/api/v1/health");
    expectError(r, 503, "unavailable");
    expect(org.tenant.subdomain).toBe("busy");
  });

  test("only under /api/v1, and only GET (or HEAD)", async () => {
    const t = testApp();
    try {
      expectError(await t.json("GET", "/health"), 404, "not_found");
      expectError(await t.json("GET", "/api/health"), 404, "not_found");
      const head = await t.request("HEAD", "/api/v1/health");
      expect(head.status).toBe(200);
    } finally {
      t.close();
    }
  });
});

describe("GET /api/v1/health/ready", () => {
  test("200 ready when the database answers, its schema is this release's and the key file can be read; storage pressure is a field", async () => {
    const t = testApp();
    try {
      const r = await t.json("GET", "/api/v1/health/ready");
      expect(r.status).toBe(200);
      // An in-memory database (or PostgreSQL) has no file whose disk the server watches.
      expect(r.body).toStrictEqual({ status: "ready", storage: "ok", free_mb: null });
    } finally {
      t.close();
    }
  });

  test("503 not_ready naming the reason: the database closed, a schema of another release", async () => {
    const t = testApp();
    const v = await t.ctx.repos.schemaVersion();
    expect(v.current).toBe(v.target);
    // A newer release's step recorded in the database: this binary is not the one it needs.
    if (ON_POSTGRES) await testSql(t.ctx).run("INSERT INTO schema_version (version, name, applied_at) VALUES (?, 'later', 0)", v.target + 1);
    else (t.ctx.db as { run(sql: string): void }).run(`PRAGMA user_version = ${v.target + 1}`);
    const behind = await t.json("GET", "/api/v1/health/ready");
    expectError(behind, 503, "not_ready");
    expect(behind.body.detail).toBe(`Not ready: The database's schema is version ${v.target + 1}; this release needs ${v.target}: run suite migrate.`);
    // Liveness is another question: the database still answers.
    expect((await t.json("GET", "/api/v1/health")).status).toBe(200);
    await closeDatabase(t.ctx);
    const closed = await t.json("GET", "/api/v1/health/ready");
    expectError(closed, 503, "not_ready");
    expect(closed.body.detail).toBe("Not ready: The database does not answer.");
  });

  test.skipIf(ON_POSTGRES)("on a database file: its disk's free space, and 503 when the key file cannot be read", async () => {
    const dir = mkdtempSync(join(tmpdir(), "suite-ready-"));
    const t = testApp({ db: join(dir, "suite.db") });
    try {
      const r = await t.json("GET", "/api/v1/health/ready");
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ status: "ready", storage: "ok" });
      expect(r.body.free_mb).toBeGreaterThan(0);
      renameSync(join(dir, "suite.db.keys"), join(dir, "elsewhere.keys"));
      const gone = await t.json("GET", "/api/v1/health/ready");
      expectError(gone, 503, "not_ready");
      expect(gone.body.detail).toBe(`Not ready: The key file ${join(dir, "suite.db.keys")} cannot be read (ENOENT).`);
    } finally {
      await t.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
