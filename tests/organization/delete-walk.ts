import type { TestApp } from "../helpers";
import { testSql } from "../support/sql";

/**
 * Every table of the schema, read from the database's own catalog (sqlite_master with the search
 * index's virtual and shadow tables; PostgreSQL's base tables of the schema), so that a table
 * added later is walked without a change here.
 */
export async function everyTable(t: TestApp): Promise<string[]> {
  const s = testSql(t.ctx);
  if (t.ctx.pg) {
    return (await s.all<{ name: string }>("SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name")).map((r) => r.name);
  }
  return (await s.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")).map((r) => r.name);
}

const latin1 = new TextDecoder("latin1");

/** Every row of a table as one text (each value's text; blobs byte for byte), in a stable order. */
export async function rowsOf(t: TestApp, table: string): Promise<string[]> {
  const s = testSql(t.ctx);
  const quoted = `"${table.replaceAll('"', '""')}"`;
  if (t.ctx.pg) return (await s.all<{ r: string }>(`SELECT x::text AS r FROM ${quoted} x`)).map((r) => r.r).sort();
  const rows = await s.all<Record<string, unknown>>(`SELECT * FROM ${quoted}`);
  return rows.map((r) => Object.values(r).map((v) => (v instanceof Uint8Array ? latin1.decode(v) : String(v))).join("\u0001")).sort();
}

/** Table → its rows that mention `text` (an organization's id), for every table that has some. */
export async function mentions(t: TestApp, text: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of await everyTable(t)) {
    const n = (await rowsOf(t, table)).filter((r) => r.includes(text)).length;
    if (n > 0) out[table] = n;
  }
  return out;
}

/** Table → its rows that do not mention `text`: what must come through another organization's deletion unchanged. */
export async function rowsWithout(t: TestApp, text: string): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const table of await everyTable(t)) out[table] = (await rowsOf(t, table)).filter((r) => !r.includes(text));
  return out;
}
