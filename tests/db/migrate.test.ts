import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../src/db/database";
import { CURRENT_PLAN, type MigrationPlan, migrate, targetVersion } from "../../src/db/migrate";
import { MIGRATIONS } from "../../src/db/migrations";

const dir = mkdtempSync(join(tmpdir(), "suite-migrate-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const freshFile = () => join(dir, `db-${++n}.sqlite`);

const SCHEMA_V1_FILE = join(import.meta.dir, "fixtures", "schema-v1.sql");
const schemaV1 = readFileSync(SCHEMA_V1_FILE, "utf8");
const schemaNow = readFileSync(join(import.meta.dir, "..", "..", "schema.sql"), "utf8");

const version = (db: Database): number => (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;

/** Comments, whitespace and the spacing ALTER TABLE leaves behind do not count; everything else does. */
const normalize = (sql: string | null): string | null =>
  sql === null
    ? null
    : sql
        .replace(/--[^\n]*/g, "")
        .replace(/\s+/g, " ")
        .replace(/\s*([(),])\s*/g, "$1")
        .trim();

function schemaOf(db: Database) {
  const rows = db
    .query("SELECT type, name, tbl_name, sql FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name")
    .all() as { type: string; name: string; tbl_name: string; sql: string | null }[];
  return rows.map((r) => ({ ...r, sql: normalize(r.sql) }));
}

// A synthetic history: release 1 had notes(id, body); release 2 added a title; release 3 an index.
const V1 = "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL) STRICT;";
const M2 = { version: 2, name: "notes title", sql: "ALTER TABLE notes ADD COLUMN title TEXT NOT NULL DEFAULT 'untitled';" };
const M3 = { version: 3, name: "notes by title", sql: "CREATE INDEX notes_by_title ON notes (title);" };
const PLAN_V3: MigrationPlan = {
  schema: `CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL, title TEXT NOT NULL DEFAULT 'untitled') STRICT;
           CREATE INDEX notes_by_title ON notes (title);`,
  migrations: [M2, M3],
};

function v1Database(file: string): Database {
  const db = openDatabase(file);
  db.run(V1);
  db.run("INSERT INTO notes (body) VALUES ('first'), ('second')");
  db.run("PRAGMA user_version = 1");
  return db;
}

describe("the current plan", () => {
  test("a fresh database gets schema.sql at the target version; migrating again is a no-op", () => {
    const db = openDatabase(":memory:");
    const target = targetVersion(CURRENT_PLAN);
    expect(target).toBe(MIGRATIONS.length === 0 ? 1 : MIGRATIONS[MIGRATIONS.length - 1]!.version);
    expect(migrate(db, CURRENT_PLAN)).toEqual({ from: 0, to: target, backup: null });
    expect(version(db)).toBe(target);
    const tables = (db.query("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name").all() as { name: string }[]).map((r) => r.name);
    for (const t of ["settings", "tenants", "tenant_modules", "profiles", "users", "sessions", "pipeline_stages", "rate_limits", "audit_log"]) {
      expect(tables).toContain(t);
    }
    const before = schemaOf(db);
    expect(migrate(db, CURRENT_PLAN)).toEqual({ from: target, to: target, backup: null });
    expect(schemaOf(db)).toEqual(before);
    expect(version(db)).toBe(target);
    db.close();
  });

  test("a fresh file database keeps no backup and passes integrity_check", () => {
    const file = freshFile();
    const db = openDatabase(file);
    expect(migrate(db, CURRENT_PLAN, file).backup).toBeNull();
    expect(db.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
    expect(db.query("PRAGMA foreign_key_check").all()).toEqual([]);
    db.close();
    expect(existsSync(`${file}.v0.bak`)).toBe(false);
  });

  test("drift guard: the first release's schema plus every migration equals schema.sql", () => {
    const fresh = openDatabase(":memory:");
    migrate(fresh, CURRENT_PLAN);

    const upgraded = openDatabase(":memory:");
    upgraded.run(schemaV1);
    upgraded.run("PRAGMA user_version = 1");
    const r = migrate(upgraded, CURRENT_PLAN);
    expect(r.from).toBe(1);
    expect(r.to).toBe(targetVersion(CURRENT_PLAN));
    expect(version(upgraded)).toBe(version(fresh));
    expect(schemaOf(upgraded)).toEqual(schemaOf(fresh));
    expect(schemaOf(fresh).length).toBeGreaterThan(10);
    fresh.close();
    upgraded.close();
  });

  test("the migration list is ordered, starts at 2 and has no gaps", () => {
    MIGRATIONS.forEach((m, i) => {
      expect(m.version).toBe(i + 2);
      expect(m.name.length).toBeGreaterThan(0);
    });
    // Version 1 is frozen: schema.sql may only differ from it when a migration exists.
    if (MIGRATIONS.length === 0) expect(normalize(schemaNow)).toBe(normalize(schemaV1));
  });

  test("the drift guard's comparison notices a migration that schema.sql does not match", () => {
    const plan: MigrationPlan = { schema: V1, migrations: [M2] };
    const fresh = openDatabase(":memory:");
    migrate(fresh, plan);
    const upgraded = v1Database(":memory:");
    migrate(upgraded, plan);
    expect(schemaOf(upgraded)).not.toEqual(schemaOf(fresh));
    fresh.close();
    upgraded.close();
  });
});

describe("upgrading an older database", () => {
  test("runs the migrations in place, keeps the rows, sets user_version and keeps a backup beside the file", () => {
    const file = freshFile();
    v1Database(file).close();

    const db = openDatabase(file);
    const r = migrate(db, PLAN_V3, file);
    expect(r).toEqual({ from: 1, to: 3, backup: `${file}.v1.bak` });
    expect(version(db)).toBe(3);
    expect(db.query("SELECT id, body, title FROM notes ORDER BY id").all()).toEqual([
      { id: 1, body: "first", title: "untitled" },
      { id: 2, body: "second", title: "untitled" },
    ]);
    expect(db.query("SELECT name FROM sqlite_schema WHERE type = 'index' AND name = 'notes_by_title'").get()).toEqual({ name: "notes_by_title" });
    // Upgraded and fresh databases agree.
    const fresh = openDatabase(":memory:");
    migrate(fresh, PLAN_V3);
    expect(schemaOf(db)).toEqual(schemaOf(fresh));
    fresh.close();
    db.close();

    // The backup is the database as it was: version 1, the old columns, the rows.
    const bak = new Database(r.backup!, { readonly: true });
    expect(bak.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
    expect(version(bak)).toBe(1);
    expect(bak.query("SELECT * FROM notes ORDER BY id").all()).toEqual([
      { id: 1, body: "first" },
      { id: 2, body: "second" },
    ]);
    bak.close();
  });

  test("runs only the steps after the database's version; an in-memory database gets no backup", () => {
    const db = v1Database(":memory:");
    db.run("ALTER TABLE notes ADD COLUMN title TEXT NOT NULL DEFAULT 'untitled'");
    db.run("PRAGMA user_version = 2");
    expect(migrate(db, PLAN_V3, ":memory:")).toEqual({ from: 2, to: 3, backup: null });
    expect(version(db)).toBe(3);
    db.close();
  });

  test("an older backup of the same version is kept, not overwritten", () => {
    const file = freshFile();
    v1Database(file).close();
    const db = openDatabase(file);
    const old = new Database(`${file}.v1.bak`, { create: true });
    old.run("CREATE TABLE marker (x INTEGER)");
    old.close();
    const r = migrate(db, PLAN_V3, file);
    db.close();
    expect(r.backup).toBe(`${file}.v1.bak`);
    const fresh = new Database(r.backup!, { readonly: true });
    expect(fresh.query("SELECT count(*) AS n FROM notes").get()).toEqual({ n: 2 });
    fresh.close();
    const kept = [...new Bun.Glob(`db-${n}.sqlite.v1.bak.*`).scanSync(dir)];
    expect(kept.length).toBe(1);
  });

  test("a failing migration leaves the database exactly at its previous version", () => {
    const broken: MigrationPlan = {
      schema: PLAN_V3.schema,
      // The first statement works, the second fails: neither may remain.
      migrations: [{ version: 2, name: "broken", sql: "ALTER TABLE notes ADD COLUMN title TEXT; INSERT INTO nowhere VALUES (1);" }, M3],
    };
    const file = freshFile();
    v1Database(file).close();
    const db = openDatabase(file);
    const before = schemaOf(db);
    expect(() => migrate(db, broken, file)).toThrow(/nowhere/);
    expect(version(db)).toBe(1);
    expect(schemaOf(db)).toEqual(before);
    expect(db.query("SELECT * FROM notes ORDER BY id").all()).toEqual([
      { id: 1, body: "first" },
      { id: 2, body: "second" },
    ]);
    expect(db.inTransaction).toBe(false);
    // Fixed, the upgrade goes through on the next start.
    expect(migrate(db, PLAN_V3, file).to).toBe(3);
    db.close();
  });

  test("a later step failing keeps the earlier, complete steps and none of its own", () => {
    const broken: MigrationPlan = {
      schema: PLAN_V3.schema,
      migrations: [M2, { version: 3, name: "broken", sql: "CREATE INDEX notes_by_title ON notes (title); CREATE INDEX bad ON missing (x);" }],
    };
    const db = v1Database(":memory:");
    expect(() => migrate(db, broken)).toThrow(/missing/);
    expect(version(db)).toBe(2);
    expect(db.query("SELECT count(*) AS n FROM sqlite_schema WHERE type = 'index' AND name = 'notes_by_title'").get()).toEqual({ n: 0 });
    expect(db.query("SELECT title FROM notes WHERE id = 1").get()).toEqual({ title: "untitled" });
    db.close();
  });

  test("a database from a newer release is refused with a clear error and left untouched", () => {
    const db = openDatabase(":memory:");
    db.run(V1);
    db.run("PRAGMA user_version = 99");
    expect(() => migrate(db, PLAN_V3)).toThrow(/the database is at schema version 99, this suite \(\d+\.\d+\.\d+\S*\) knows up to 3: use a newer suite/);
    expect(() => migrate(db, CURRENT_PLAN)).toThrow(/newer/);
    expect(version(db)).toBe(99);
    db.close();
  });

  test("a non-empty database without a schema version is refused", () => {
    const file = freshFile();
    const db = openDatabase(file);
    db.run("CREATE TABLE something_else (x INTEGER)");
    db.run("INSERT INTO something_else VALUES (1)");
    expect(() => migrate(db, CURRENT_PLAN, file)).toThrow(/not a Workspace Suite database/);
    expect(version(db)).toBe(0);
    expect(db.query("SELECT count(*) AS n FROM sqlite_schema WHERE name = 'tenants'").get()).toEqual({ n: 0 });
    db.close();
    expect(existsSync(`${file}.v0.bak`)).toBe(false);
  });
});

/** `db`, except that its first `PRAGMA user_version` answers `stale`: what a process that read the
 * version just before another process migrated the same file would have seen. */
function staleVersion(db: Database, stale: number): Database {
  let lie = true;
  return new Proxy(db, {
    get(target, prop) {
      if (prop === "query") {
        return (sql: string) => {
          if (lie && /PRAGMA user_version/.test(sql)) {
            lie = false;
            return { get: () => ({ user_version: stale }) };
          }
          return target.query(sql);
        };
      }
      const v = Reflect.get(target, prop, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}

describe("two processes migrating the same file", () => {
  test("a schema created by another process after the version was read is not created again", () => {
    const file = freshFile();
    const first = openDatabase(file);
    const second = openDatabase(file);
    migrate(first, CURRENT_PLAN, file);
    expect(() => migrate(staleVersion(second, 0), CURRENT_PLAN, file)).not.toThrow();
    expect(version(second)).toBe(targetVersion(CURRENT_PLAN));
    first.close();
    second.close();
  });

  test("a step another process already ran is not run twice", () => {
    const file = freshFile();
    v1Database(file).close();
    const first = openDatabase(file);
    const second = openDatabase(file);
    migrate(first, PLAN_V3, file);
    expect(() => migrate(staleVersion(second, 1), PLAN_V3, file)).not.toThrow();
    expect(version(second)).toBe(3);
    expect(second.query("SELECT count(*) AS n FROM notes").get()).toEqual({ n: 2 });
    first.close();
    second.close();
  });
});
