import type { Db } from "../../db/database";

/**
 * Many deals inserted by one statement, from a JSON array of rows (each row `columns`' values in
 * order), for the writers that add deals in batches with the deals' triggers on (an import's
 * batch, the live seed's transaction). One statement, not one a deal: FTS5 writes what a
 * statement's triggers gave it as a new segment of the full-text index as soon as the next
 * statement of the transaction opens a savepoint (every deal write with triggers opens one), so a
 * statement a deal made a segment a deal, each merged again later (a whole level at once, inside
 * a batch, when a level reached `crisismerge` segments). The rows go in the array's order, their
 * rowids ascending: FTS5 also starts a segment when a rowid comes lower than the last.
 */
export function dealsInsertFromJson(db: Db, columns: readonly string[]): (rows: ReadonlyArray<ReadonlyArray<string | number | null>>) => void {
  const insert = db.prepare(`INSERT INTO deals (${columns.join(", ")}) SELECT ${columns.map((_, i) => `value ->> ${i}`).join(", ")} FROM json_each(?1) ORDER BY key`);
  return (rows) => void insert.run(JSON.stringify(rows));
}
