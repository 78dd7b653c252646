import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { parse } from "csv-parse/sync";
import type { Page } from "playwright-core";
import { TENANT, type World, crmWorld, look } from "./crm-kit";

/**
 * CSV export and import in a real browser (issue 16): the deal list's "Export CSV" downloads the
 * current view (its stage filter and sort from the URL), and the import screen checks a file (the
 * dry run's errors in a table by line and column), takes the fixed file, and the deals show in the list.
 */
const STEP = 60_000;
let w: World;
let page: Page;

beforeAll(async () => {
  w = await crmWorld();
  page = w.page;
  const call = (path: string, body: unknown) => w.server.call("POST", `/api/v1/crm${path}`, { token: w.token, tenant: TENANT, body });
  const account = (await call("/accounts", { name: "Initech" })).body;
  for (const [title, stage, value] of [
    ["Printer upgrade", "won", "1200"],
    ["Stapler supply", "won", "35.5"],
    ["TPS reports", "new", "999"],
    ["Office move", "lost", "5000"],
  ] as const) {
    expect((await call("/deals", { title, stage, value, account_id: account.id })).status).toBe(201);
  }
}, STEP);
afterAll(() => w?.close());

test("Export CSV downloads the view: won deals only, by title", async () => {
  await page.goto(`${w.origin}/deals?stage=won&sort_by=title&sort_dir=desc`);
  await page.getByRole("cell", { name: "Stapler supply", exact: true }).waitFor();
  const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Export CSV" }).click()]);
  expect(download.suggestedFilename()).toMatch(/^deals-\d{4}-\d{2}-\d{2}\.csv$/);
  const rows = parse(readFileSync((await download.path())!), { bom: true, columns: true }) as Array<Record<string, string>>;
  expect(rows.map((r) => [r.title, r.stage, r.value, r.account_name])).toEqual([
    ["Stapler supply", "won", "35.50", "Initech"],
    ["Printer upgrade", "won", "1200.00", "Initech"],
  ]);
  await look(page, "deals-with-export");
}, STEP);

const file = (text: string) => ({ name: "deals.csv", mimeType: "text/csv", buffer: Buffer.from(text) });

test("import: a dry run shows the bad row, the fixed file goes in, the deals show", async () => {
  await page.getByRole("link", { name: "Import" }).click();
  await page.getByRole("heading", { name: "Import from CSV" }).waitFor();
  expect(await page.getByLabel("What the file holds").inputValue()).toBe("deals");
  const header = "Title,Account_Name,Value,Stage,Contact_Name";
  await page.getByLabel(/CSV file/).setInputFiles(file(`${header}\nSwingline order,Initech,12.345,won,Milton Waddams\nFlair audit,Chotchkies,80,new,\n`));
  await page.getByRole("button", { name: "Check file" }).click();
  const errors = page.locator("table.import-errors tbody tr");
  await errors.first().waitFor();
  // Without create_missing, the unknown contact and account are errors too.
  const cells = await errors.evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll("td")].slice(0, 2).map((td) => td.textContent)));
  expect(cells).toEqual([
    ["2", "value"],
    ["3", "account_name"],
  ]);
  await expect(page.getByRole("button", { name: "Import", exact: true }).isDisabled()).resolves.toBe(true);
  await look(page, "import-errors");

  await page.getByLabel(/CSV file/).setInputFiles(file(`${header}\nSwingline order,Initech,12.34,won,Milton Waddams\nFlair audit,Chotchkies,80,new,\n`));
  await page.getByLabel(/Create accounts and contacts/).check();
  await page.getByRole("button", { name: "Check file" }).click();
  await page.getByText("The file is ready: 2 rows, no errors").waitFor();
  await page.getByRole("button", { name: "Import", exact: true }).click();
  await page.getByText("The import is done: 2 deals added.").waitFor();
  await look(page, "import-done");
  await page.getByRole("link", { name: "See the deals" }).click();
  await page.getByRole("cell", { name: "Swingline order", exact: true }).waitFor();
  await page.getByRole("cell", { name: "Flair audit", exact: true }).waitFor();
  const list = await w.server.call("GET", "/api/v1/crm/deals?search=swingline", { token: w.token, tenant: TENANT });
  expect(list.body.items[0]).toMatchObject({ value: "12.34", stage: "won", account_name: "Initech", contact_name: "Milton Waddams" });
  expect(w.problems).toEqual([]);
}, STEP);

test("a long import shows its progress bar, then what its rows did; the same file again changes nothing", async () => {
  const rows = Array.from({ length: 4_000 }, (_, i) => `Bulk deal ${i},Initech,${i},new,B-${i}`).join("\n");
  const bulk = file(`title,account_name,value,stage,external_id\n${rows}\n`);
  for (const expected of ["The import is done: 4,000 deals added.", "The import is done: 4,000 deals already up to date, so left as they were."]) {
    await page.goto(`${w.origin}/import?kind=deals`);
    await page.getByLabel(/CSV file/).setInputFiles(bulk);
    await page.getByRole("button", { name: "Check file" }).click();
    await page.getByText("The file is ready: 4000 rows, no errors").waitFor();
    await page.getByRole("button", { name: "Import", exact: true }).click();
    if (expected.includes("added")) {
      await page.locator("progress#import-progress").waitFor();
      await expect(page.getByText(/^Importing: [\d,]+ of 4,000 deals written/).isVisible()).resolves.toBe(true);
      await look(page, "import-progress");
    }
    await page.getByText(expected).waitFor({ timeout: 120_000 });
  }
  await look(page, "import-upserted");
  const list = await w.server.call("GET", "/api/v1/crm/deals?search=bulk deal&size=1", { token: w.token, tenant: TENANT });
  expect(list.body.total).toBe(4_000);
  expect(w.problems).toEqual([]);
}, 4 * STEP);
