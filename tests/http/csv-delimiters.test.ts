import { rng } from "../security/http-fuzz/generate";
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { parse } from "csv-parse/sync";
import { csvCell, csvCellSql, csvLine, unguard } from "../../src/kernel/csv";
import { type CrmOrg, crmOrg } from "../crm/support";
import { testApp } from "../helpers";

/**
 * The formula guard holds for a spreadsheet that splits lines on `;` or tab (Europe's default is
 * `;`): such a reader ignores our quotes (they are not at the start of its fields), so a formula
 * may start after any delimiter inside a cell, not only at the cell's start.
 */
const EVIL = ["Mozilla/5.0;=HYPERLINK(A1);", "a,=1+1", "tab\t@SUM(A1)", "two\n-lines", "x;\t=CMD()", "semi;+1;-2", 'q";=1', 'x;"=1+1"', "x\t\t=1"];

/**
 * Every place where a spreadsheet splitting on `,`, `;` or tab (or a line break) may start a field
 * in `text`, whose content (after a quote that opens a quoted field) starts a formula: = + - @.
 * Stricter than any one reader: every delimiter counts, quoted or not.
 */
function formulasIn(text: string): string[] {
  const found: string[] = [];
  for (let p = 0; p <= text.length; p++) {
    if (p > 0 && !",;\t\r\n".includes(text[p - 1]!)) continue;
    let q = p;
    // A quote opens a quoted field; two are a literal quote, whose content is no formula.
    if (text[q] === '"') {
      if (text[q + 1] === '"') continue;
      q++;
    }
    if (q < text.length && "=+-@".includes(text[q]!)) found.push(JSON.stringify(text.slice(Math.max(0, p - 10), q + 10)));
  }
  return found;
}

// Seeded (the HTTP fuzz's mulberry32): a failure replays.
const AWKWARD = [..."=+-@'\t\r\n\",; a"];
const randomTexts = (seed: number, n: number) => {
  const next = rng(seed).next;
  return Array.from({ length: n }, () => Array.from({ length: Math.floor(next() * 9) }, () => AWKWARD[Math.floor(next() * AWKWARD.length)]).join(""));
};

describe("formula guard after delimiters", () => {
  test("no field starts a formula, split on , ; or tab", () => {
    for (const s of EVIL) {
      const line = csvLine(["before", s, "-1 text", "after"]);
      expect({ s, formulas: formulasIn(line) }).toEqual({ s, formulas: [] });
    }
    expect(csvCell("Mozilla/5.0;=HYPERLINK(A1);")).toBe("Mozilla/5.0;'=HYPERLINK(A1);");
  });

  test("random awkward text: never a formula, and the import's unguard gives it back", () => {
    for (const s of randomTexts(20261127, 4000)) {
      const line = csvLine(["x", s, "y"]);
      expect({ s, formulas: formulasIn(line) }).toEqual({ s, formulas: [] });
      const [cells] = parse(line, { relax_column_count: true }) as string[][];
      expect({ s, back: unguard(cells![1]!) }).toEqual({ s, back: s });
    }
  });

  test("SQLite's cells equal csvCell's on delimiter-heavy text", () => {
    const db = new Database(":memory:");
    db.run("CREATE TABLE t (v TEXT)");
    const values = [...EVIL, "\t\t\t=", "\r\r\r", ";''=x", "'", "''", ",'", ...randomTexts(7, 3000)];
    const insert = db.prepare("INSERT INTO t (v) VALUES (?)");
    for (const v of values) insert.run(v);
    const got = (db.query(`SELECT ${csvCellSql("v")} AS cell FROM t ORDER BY rowid`).all() as Array<{ cell: string }>).map((r) => r.cell);
    const mismatches = values.map((v, i) => ({ v, want: csvCell(v), got: got[i] })).filter((m) => m.want !== m.got);
    expect(mismatches.slice(0, 5)).toEqual([]);
    db.close();
  });
});

describe("every CSV download is guarded", () => {
  const t = testApp();
  let org: CrmOrg;
  let other: CrmOrg;
  afterAll(() => t.close());
  beforeAll(async () => {
    org = await crmOrg(t, "delimorg");
    other = await crmOrg(t, "delimback");
  });

  const download = async (o: CrmOrg, path: string) => {
    const res = await t.request("GET", path, { token: o.token, headers: { accept: "text/csv" } });
    expect(res.status).toBe(200);
    return new TextDecoder("utf-8", { ignoreBOM: true }).decode(new Uint8Array(await res.arrayBuffer()));
  };

  test("the audit log: a User-Agent with ;=HYPERLINK is no formula in a ;-spreadsheet", async () => {
    const ua = "Mozilla/5.0;=HYPERLINK(A1);";
    const r = await t.json("POST", "/api/v1/auth/login", { body: { email: org.email, password: org.password }, tenant: "delimorg", headers: { "user-agent": ua } });
    expect(r.status).toBe(200);
    const text = await download(org, "/api/v1/audit-log?format=csv");
    expect(text).toContain("Mozilla/5.0;'=HYPERLINK(A1);");
    expect(formulasIn(text)).toEqual([]);
  });

  test("deal titles in the export (written by the database's SQL), and the import gives them back", async () => {
    // Titles refuse control characters; notes keep line breaks (and so a spreadsheet's row breaks).
    const titles = ["Deal;=HYPERLINK(A1)", "Plain;'=quoted", 'x;"=1+1"', "semi;+1;-2", "at,@x"];
    const notes = "first line\n=HYPERLINK(A1)\r\n-2;@3";
    const account = await org.account("Delimiters Ltd");
    for (const title of titles) await org.deal({ title, account_id: account.id, stage: "new", notes });
    const text = await download(org, "/api/v1/crm/deals/export");
    expect(text).toContain("Deal;'=HYPERLINK(A1)");
    expect(formulasIn(text)).toEqual([]);
    const back = await t.json("POST", "/api/v1/crm/deals/import?create_missing=true", { token: other.token, raw: text, headers: { "content-type": "text/csv" } });
    // A real import is a job: 202, then its rows once it has finished.
    expect(back.status).toBe(202);
    let job = back.body as { id: string; status: string };
    for (let i = 0; i < 2000 && job.status === "running"; i++) {
      await Bun.sleep(5);
      job = (await t.json("GET", `/api/v1/crm/jobs/${job.id}`, { token: other.token })).body;
    }
    expect(job.status).toBe("succeeded");
    const imported = (await other.list("size=100")).items.map((d: { title: string; notes: string }) => [d.title, d.notes]).sort();
    expect(imported).toEqual(titles.map((title) => [title, notes]).sort());
  });
});
