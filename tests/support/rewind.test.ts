import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { migrate } from "../../src/db/migrate";
import { MIGRATIONS } from "../../src/db/migrations";
import { missingUndos, undoMigrationsAfter } from "./rewind";

test("every migration a rewinding test may meet has its undo in tests/support/rewind.ts", () => {
  expect(missingUndos()).toEqual([]);
});

test("a current database taken back to version 15 migrates forward again to the same schema", () => {
  const schema = (db: Database) => db.query("SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name").all();
  const db = new Database(":memory:");
  migrate(db);
  const current = schema(db);
  undoMigrationsAfter(db, 15);
  db.run("PRAGMA user_version = 15");
  expect(schema(db)).not.toEqual(current);
  expect(migrate(db)).toMatchObject({ from: 15, to: MIGRATIONS[MIGRATIONS.length - 1]!.version });
  expect(schema(db)).toEqual(current);
});
