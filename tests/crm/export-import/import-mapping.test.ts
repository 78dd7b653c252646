import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { testApp } from "../../helpers";
import { type CrmOrg, crmOrg } from "../support";

const t = testApp();
let org: CrmOrg;

beforeAll(async () => {
  org = await crmOrg(t, "maporg");
  await org.account("Initech");
});
afterAll(() => t.close());

const upload = (csv: string, query = "") =>
  t.json("POST", `/api/v1/crm/deals/import${query ? `?${query}` : ""}`, { token: org.token, raw: csv, headers: { "content-type": "text/csv" } });

async function imported(csv: string, query: string) {
  const r = await upload(csv, query);
  expect(r.status).toBe(202);
  for (let i = 0; i < 2000; i++) {
    const j = await t.json("GET", `/api/v1/crm/jobs/${r.body.id}`, { token: org.token });
    if (j.body.status !== "running") return j.body;
    await Bun.sleep(5);
  }
  throw new Error("job still running");
}

const dealsTitled = async (prefix: string) =>
  (await org.ok("GET", `/deals?search=${encodeURIComponent(prefix)}&size=100&sort_by=title`)).items as Array<Record<string, unknown>>;

describe("the separator is the header line's", () => {
  test("semicolons: the cells are read as such, commas inside cells stay text", async () => {
    const csv = 'title;account_name;value;currency\r\nSemi one;Initech;12.50;EUR\r\n"Semi two; quoted";Initech;3;USD\r\nSemi, three;Initech;0;GBP\r\n';
    const dry = await upload(csv, "dry_run=true");
    expect(dry.status).toBe(200);
    expect(dry.body).toMatchObject({ rows: 3, valid_rows: 3, error_count: 0 });
    expect((await imported(csv, "")).status).toBe("succeeded");
    const got = await dealsTitled("Semi");
    expect(got.map((d) => [d.title, d.value, d.currency])).toEqual([
      ["Semi one", "12.50", "EUR"],
      ["Semi two; quoted", "3.00", "USD"],
      ["Semi, three", "0.00", "GBP"],
    ]);
  });

  test("tabs", async () => {
    const csv = "title\taccount_name\tvalue\nTabbed\tInitech\t7\n";
    expect((await imported(csv, "")).status).toBe("succeeded");
    expect((await dealsTitled("Tabbed")).map((d) => d.value)).toEqual(["7.00"]);
  });

  test("a comma file with a semicolon in a quoted header cell stays a comma file", async () => {
    const dry = await upload('title,account_name,notes\n"Comma one",Initech,"a; b; c"\n', "dry_run=true");
    expect(dry.body).toMatchObject({ rows: 1, valid_rows: 1, error_count: 0 });
  });

  test("a semicolon file whose header comes in many small pieces is read the same", async () => {
    const csv = "title;account_name\nPieces;Initech\n";
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        for (const ch of new TextEncoder().encode(csv)) c.enqueue(new Uint8Array([ch]));
        c.close();
      },
    });
    const res = await t.request("POST", "/api/v1/crm/deals/import?dry_run=true", { token: org.token, raw: body as unknown as string, headers: { "content-type": "text/csv" } });
    expect(await res.json()).toMatchObject({ rows: 1, valid_rows: 1, error_count: 0 });
  });
});

describe("columns: the field of each column, by position", () => {
  const file = "Deal name;Company;Amount;Internal code;Cur\nMapped one;Initech;99.90;X-1;EUR\nMapped two;Globex;5;X-2;JPY\n";

  test("a mapped file with unknown header names imports, ignored columns dropped, and names a new account when asked", async () => {
    const columns = "columns=" + encodeURIComponent("title,account_name,value,,currency");
    const without = await upload(file, "dry_run=true");
    expect(without.body.errors[0]).toMatchObject({ line: 1 });
    const dry = await upload(file, `dry_run=true&${columns}`);
    expect(dry.body).toMatchObject({ rows: 2, valid_rows: 1, error_count: 1 });
    expect(dry.body.errors[0]).toMatchObject({ line: 3, column: "account_name" });
    expect(dry.body.errors[0].message).toBe('No account is named "Globex". Check the name, or import with missing accounts and contacts created.');
    expect((await imported(file, `${columns}&create_missing=true`)).status).toBe("succeeded");
    const got = await dealsTitled("Mapped");
    expect(got.map((d) => [d.title, d.account_name, d.value, d.currency, d.notes])).toEqual([
      ["Mapped one", "Initech", "99.90", "EUR", null],
      ["Mapped two", "Globex", "5.00", "JPY", null],
    ]);
  });

  test("a mapping of the wrong length, or without a required field, is a row error of line 1", async () => {
    const short = await upload(file, `dry_run=true&columns=${encodeURIComponent("title,account_name")}`);
    expect(short.body.errors).toContainEqual({ line: 1, column: null, message: "The column mapping names 2 columns, but the file has 5." });
    const noAccount = await upload(file, `dry_run=true&columns=${encodeURIComponent("title,,value,,currency")}`);
    expect(noAccount.body.errors).toContainEqual({ line: 1, column: "account_name", message: "No column is mapped to account_name, which is required." });
  });

  test("a field that does not exist, or mapped twice, is a 422 at query.columns before the file is read", async () => {
    for (const columns of ["title,account_name,price,,", "title,title,value,,currency", "x".repeat(2001)]) {
      const r = await upload(file, `columns=${encodeURIComponent(columns)}`);
      expect(r.status).toBe(422);
      expect(r.body.detail.map((i: { loc: unknown[] }) => i.loc)).toEqual([["query", "columns"]]);
    }
  });
});
