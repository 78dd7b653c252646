import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { TENANT, type World, crmWorld, look } from "./crm-kit";
import { waitUntil } from "./support";

/**
 * Bulk changes on the deals screen in a real browser (issue 32): tick rows (a click, `x`), move
 * them to a stage, undo it; the header's box and "Select all N matching", delete after a
 * confirmation, undo brings them back; a tick survives another person's change (live reload).
 * axe-core and screenshots at 1280 and 390 px of the bar and of the result with its Undo.
 */

const STEP = 90_000;
let w: World;
let page: Page;
const deals = async (query: string) => (await w.server.call("GET", `/api/v1/crm/deals?${query}`, { token: w.token, tenant: TENANT })).body as { total: number; items: Array<{ id: string; title: string; stage: string }> };

beforeAll(async () => {
  w = await crmWorld();
  page = w.page;
  const account = (await w.server.call("POST", "/api/v1/crm/accounts", { token: w.token, tenant: TENANT, body: { name: "Globex" } })).body as { id: string };
  for (let i = 1; i <= 24; i++) {
    const r = await w.server.call("POST", "/api/v1/crm/deals", { token: w.token, tenant: TENANT, body: { title: `Bulk deal ${String(i).padStart(2, "0")}`, account_id: account.id, value: String(i * 100) } });
    expect(r.status).toBe(201);
  }
}, STEP);
afterAll(() => w?.close());

test("tick two rows (a click and x), move them to Won, then Undo puts them back", async () => {
  await page.goto(`${w.origin}/deals?sort_by=title&size=10`);
  await page.getByLabel("Select Bulk deal 01").check();
  // j focuses the first row, j the second; x ticks it.
  await page.locator("body").click({ position: { x: 5, y: 5 } });
  await page.keyboard.press("j");
  await page.keyboard.press("j");
  await page.keyboard.press("x");
  expect(await page.getByLabel("Select Bulk deal 02").isChecked()).toBe(true);
  const bar = page.getByRole("region", { name: "Change the selected deals" });
  await bar.getByText("2 selected").waitFor();
  await look(page, "bulk-bar");
  await bar.getByLabel("Change stage").selectOption({ label: "Won" });
  await page.getByText("Moved 2 deals to Won.").waitFor();
  expect((await deals("stage=won")).items.map((d) => d.title).sort()).toEqual(["Bulk deal 01", "Bulk deal 02"]);
  // The ticks went with the change.
  expect(await page.getByLabel("Select Bulk deal 01").isChecked()).toBe(false);
  await look(page, "bulk-result");
  await page.getByRole("button", { name: "Undo", exact: true }).click();
  await page.getByText("Undone: 2 deals put back as they were.").waitFor();
  expect((await deals("stage=won")).total).toBe(0);
}, STEP);

test("the header box, Select all 24 matching, delete after a confirmation; Undo brings them back", async () => {
  await page.goto(`${w.origin}/deals?sort_by=title&size=10&search=bulk`);
  await page.getByLabel("Select every deal on this page").check();
  const bar = page.getByRole("region", { name: "Change the selected deals" });
  await bar.getByText("10 selected").waitFor();
  await bar.getByRole("button", { name: "Select all 24 matching" }).click();
  await bar.getByText("All 24 deals matching").waitFor();
  await bar.getByRole("button", { name: "Delete" }).click();
  await page.getByRole("button", { name: "Delete 24 deals" }).click();
  await page.getByText("Deleted 24 deals.").waitFor();
  expect((await deals("size=1")).total).toBe(0);
  await page.getByRole("button", { name: "Undo", exact: true }).click();
  await page.getByText("Undone: 24 deals brought back.").waitFor();
  expect((await deals("size=1")).total).toBe(24);
  await waitUntil(async () => (await page.locator("table.deals tbody tr").count()) === 10);
}, STEP);

test("a tick survives another person's change (the list reloads quietly)", async () => {
  await page.goto(`${w.origin}/deals?sort_by=title&size=10`);
  await page.getByLabel("Select Bulk deal 03").check();
  const target = (await deals("search=Bulk%20deal%2004")).items[0]!;
  await w.server.call("PATCH", `/api/v1/crm/deals/${target.id}`, { token: w.token, tenant: TENANT, body: { title: "Bulk deal 04 renamed" } });
  await page.getByRole("link", { name: "Bulk deal 04 renamed" }).waitFor();
  expect(await page.getByLabel("Select Bulk deal 03").isChecked()).toBe(true);
  await page.getByRole("region", { name: "Change the selected deals" }).getByText("1 selected").waitFor();
  expect(w.problems).toEqual([]);
}, STEP);
