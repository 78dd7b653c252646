import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { TENANT, type World, crmWorld, look } from "./crm-kit";
import { waitUntil } from "./support";

/**
 * The deals screen's Views menu in a real browser: save the current state as a shared view,
 * apply it from another state, make it the default (it opens on a bare /deals), delete it.
 * axe-core and screenshots of the open menu at 1280 and 390 px.
 */

const STEP = 60_000;
let w: World;
let page: Page;

beforeAll(async () => {
  w = await crmWorld();
  page = w.page;
}, STEP);
afterAll(() => w?.close());

const openMenu = async () => {
  if (!(await page.locator("details.views-menu").getAttribute("open").then((v) => v !== null))) await page.locator("details.views-menu > summary").click();
};

test("Save view… keeps the filters, order and mode, shared with everyone", async () => {
  await page.goto(`${w.origin}/deals?view=board&stage=won&sort_by=title`);
  await openMenu();
  await page.getByText("You have no saved views yet.").waitFor();
  await look(page, "views-menu-empty");
  await page.getByRole("button", { name: "Save view…" }).click();
  await page.getByLabel("Name").fill("Won deals board");
  await page.getByLabel("Share with everyone in the organization").check();
  await page.getByRole("button", { name: "Save view", exact: true }).click();
  await page.getByText("Saved the view “Won deals board”.").waitFor();
  const views = (await w.server.call("GET", "/api/v1/crm/views", { token: w.token, tenant: TENANT })).body as any[];
  expect(views).toMatchObject([{ name: "Won deals board", kind: "board", shared: true, query: { stage: ["won"], sort_by: "title", sort_dir: "asc" } }]);
}, STEP);

test("choosing a view applies it; its default opens on a bare /deals", async () => {
  await page.goto(`${w.origin}/deals?search=nothing`);
  await openMenu();
  await page.getByRole("button", { name: /^Won deals board/ }).click();
  await waitUntil(async () => page.url().includes("view=board") && page.url().includes("stage=won") && !page.url().includes("search="));
  // The search box follows the URL on its next render (the board's chunk may still be loading).
  await waitUntil(async () => (await page.getByLabel("Search deals").inputValue()) === "");
  expect(await page.getByLabel("Search deals").inputValue()).toBe("");
  await openMenu();
  await page.getByRole("button", { name: "Make default" }).click();
  await page.getByText("“Won deals board” now opens when you go to Deals.").waitFor();
  await page.goto(`${w.origin}/deals`);
  await waitUntil(async () => page.url().includes("view=board") && page.url().includes("stage=won"));
  await openMenu();
  await page.getByRole("button", { name: "Default ✓" }).waitFor();
  await look(page, "views-menu");
  // A link with its own query keeps it.
  await page.goto(`${w.origin}/deals?search=acme`);
  await page.locator("details.views-menu").waitFor();
  await Bun.sleep(300);
  expect(page.url()).toContain("search=acme");
  expect(page.url()).not.toContain("view=board");
}, STEP);

test("a view is deleted after a confirmation", async () => {
  await openMenu();
  await page.getByRole("button", { name: "Delete the view Won deals board" }).click();
  await page.getByRole("button", { name: "Delete view" }).click();
  await page.getByText("Deleted the view “Won deals board”.").waitFor();
  expect((await w.server.call("GET", "/api/v1/crm/views", { token: w.token, tenant: TENANT })).body).toEqual([]);
}, STEP);
