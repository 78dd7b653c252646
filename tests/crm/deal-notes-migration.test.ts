import { afterAll, expect, test } from "bun:test";
import type { Database } from "bun:sqlite";
import { migrate } from "../../src/db/migrate";
import { MIGRATIONS } from "../../src/db/migrations";
import type { Pg } from "../../src/stores/postgres/database";
import { migratePostgres, pgTargetVersion } from "../../src/stores/postgres/migrate";
import { schemaFiles } from "../../src/stores/postgres/schema";
import { foldAll } from "../../src/stores/postgres/search-fold";
import { testApp } from "../helpers";
import { undoMigrationsAfter } from "../support/rewind";
import { testSql } from "../support/sql";
import { crmOrg } from "./support";

// An upgrade finds the deals' notes: SQLite's migration 33 and PostgreSQL's schema 72 fill in the
// notes' text and search text of deals that had notes before, the same as the note writes make them.

let clock = Date.now();
const t = testApp({ now: () => (clock += 3) });
afterAll(() => t.close());

/**
 * PostgreSQL back at version 21: what schema 73 made undone (its pending rows folded first, the
 * gram counters' trigger as 51 made it), then what 72 made (the search text without the notes).
 */
async function rewindPostgres(pg: Pg): Promise<void> {
  await foldAll(pg);
  const s51 = schemaFiles().find((f) => f.name === "51-deal-search.sql")!.sql;
  const trigger = /CREATE FUNCTION deal_gram_counts_trigger\(\)[\s\S]*?\n\$\$;/.exec(s51)![0];
  await pg.begin(async (tx) => {
    await tx.unsafe(trigger.replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION"));
    await tx.unsafe("DROP TABLE deal_search_pending");
    await tx.unsafe("DROP FUNCTION deal_search_fold_lock(text)");
    await tx.unsafe("DROP FUNCTION deal_search_fold_try_lock(text)");
    await tx.unsafe("DELETE FROM schema_version WHERE version = 23");
    await tx.unsafe(`CREATE OR REPLACE FUNCTION deal_search_head_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.search_head := CASE WHEN octet_length(NEW.search_text) <= 600 THEN NEW.search_text ELSE left(NEW.search_text, 150) END;
  RETURN NEW;
END
$$`);
    await tx.unsafe("DROP INDEX deal_notes_newest");
    await tx.unsafe("CREATE INDEX deal_notes_by_deal ON deal_notes (tenant_id, deal_id)");
    await tx.unsafe("UPDATE deals SET search_text = left(search_text, char_length(search_text) - char_length(note_text) - 1) WHERE note_text <> ''");
    await tx.unsafe("ALTER TABLE deals DROP COLUMN note_text");
    await tx.unsafe("DELETE FROM schema_version WHERE version = 22");
  });
}

test("deals with notes before the upgrade are found by them after it, with the text a note's write makes", async () => {
  const org = await crmOrg(t, "notemigrate");
  const account = await org.account("Migrated Co");
  const noted = await org.deal({ title: "Had notes", account_id: account.id, notes: "its own field" });
  const long = await org.deal({ title: "Had many notes", account_id: account.id });
  const bare = await org.deal({ title: "No notes", account_id: account.id });
  await org.ok("POST", `/deals/${noted.id}/notes`, { body: "Ж dingomigrated ΨΩ" });
  await org.ok("POST", `/deals/${noted.id}/notes`, { body: "Second WORD" });
  for (const m of ["bottom", "lower", "middle", "top"]) await org.ok("POST", `/deals/${long.id}/notes`, { body: `${m}migrated ${"lorem ipsum ".repeat(900)}`.slice(0, 9_000) });
  const sql = testSql(t.ctx);
  const texts = () => sql.all<{ id: string; note_text: string; search_text: string }>("SELECT id, note_text, search_text FROM deals WHERE tenant_id = ? ORDER BY id", org.tenant.id);
  const written = await texts();
  expect(written.find((d) => d.id === noted.id)!.search_text).toBe("had notes\nits own field\nmigrated co\n\nsecond word\nж dingomigrated ψω");
  expect(written.find((d) => d.id === bare.id)!.note_text).toBe("");

  const ctx = t.ctx as { db?: Database; pg?: Pg };
  if (ctx.db) {
    undoMigrationsAfter(ctx.db, 32);
    ctx.db.run("PRAGMA user_version = 32");
    const before = ctx.db.query("SELECT search_text FROM deals WHERE id = ?1").get(noted.id) as { search_text: string };
    expect(before.search_text).toBe("had notes\nits own field\nmigrated co\n");
    expect(migrate(ctx.db)).toMatchObject({ from: 32, to: MIGRATIONS.at(-1)!.version });
  } else {
    await rewindPostgres(ctx.pg!);
    expect(await migratePostgres(ctx.pg!)).toEqual({ from: 21, to: pgTargetVersion() });
  }
  expect(await texts()).toEqual(written);
  const found = async (term: string) => (await org.list(`search=${encodeURIComponent(term)}`)).items.map((d: { id: string }) => d.id);
  expect(await found("dingomigrated")).toEqual([noted.id]);
  expect(await found("ψω")).toEqual([noted.id]);
  expect(await found("topmigrated")).toEqual([long.id]);
  expect(await found("lowermigrated")).toEqual([long.id]);
  expect(await found("bottommigrated")).toEqual([]);
  // Note writes after the upgrade keep it.
  await org.ok("POST", `/deals/${bare.id}/notes`, { body: "latecomer" });
  expect(await found("latecomer")).toEqual([bare.id]);
});
