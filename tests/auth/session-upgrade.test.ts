/**
 * Migration 4 (issue 13, 2d): sessions of an older release, whose ids were the secret in their
 * tokens, stored in clear, end on upgrade; nothing else is touched.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../src/db/database";
import { CURRENT_PLAN, migrate } from "../../src/db/migrate";
import { MIGRATIONS } from "../../src/db/migrations";
import { testApp } from "../helpers";
import { login } from "./support";

const dir = mkdtempSync(join(tmpdir(), "suite-upgrade-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("upgrading a version 3 database ends its sessions (their ids were secrets in clear); users and tenants stay", async () => {
  const file = join(dir, "v3.db");
  const db = openDatabase(file);
  db.run(readFileSync(join(import.meta.dir, "..", "db", "fixtures", "schema-v1.sql"), "utf8"));
  db.run("PRAGMA user_version = 1");
  migrate(db, { schema: "", migrations: MIGRATIONS.filter((m) => m.version <= 3) });
  const hash = await Bun.password.hash("correct horse battery", { algorithm: "argon2id", memoryCost: 19456, timeCost: 2 });
  db.run("INSERT INTO tenants (id, name, subdomain, created_at) VALUES ('t1', 'Acme', 'acme', 1)");
  db.run("INSERT INTO users (id, tenant_id, email, role, password_hash, created_at, updated_at) VALUES ('u1', 't1', 'a@acme.test', 'admin', ?1, 1, 1)", [hash]);
  const oldSid = "an-old-release-session-id-that-was-the-secret-0";
  db.run(
    "INSERT INTO sessions (id, tenant_id, user_id, method, created_at, last_used_at, expires_at) VALUES (?1, 't1', 'u1', 'password', 1, 1, ?2)",
    [oldSid, Date.now() + 86_400_000],
  );
  expect((db.query("PRAGMA user_version").get() as { user_version: number }).user_version).toBe(3);

  const r = migrate(db, CURRENT_PLAN, file);
  expect(r.from).toBe(3);
  expect(r.to).toBeGreaterThanOrEqual(4);
  expect(db.query("SELECT count(*) AS n FROM sessions").get()).toEqual({ n: 0 });
  expect(JSON.stringify(db.query("SELECT * FROM sessions").all())).not.toContain(oldSid);
  expect(db.query("SELECT id, email FROM users").all()).toEqual([{ id: "u1", email: "a@acme.test" }]);
  db.close();

  // The upgraded database works: the user signs in again and gets a session of the new kind.
  // (This hand-made file never had keys: `{}` is the operator's "start over with new keys".)
  await Bun.write(`${file}.keys`, "{}");
  const t = testApp({ db: file });
  try {
    const s = await login(t, "a@acme.test", "correct horse battery");
    expect(s.status).toBe(200);
    const row = t.ctx.db.query("SELECT id, sid_hash, proven_at FROM sessions").get() as { id: string; sid_hash: string; proven_at: number };
    expect(row.sid_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(row.id).toHaveLength(21);
  } finally {
    t.close();
  }
});
