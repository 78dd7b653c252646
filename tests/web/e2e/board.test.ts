import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { TENANT, type World, crmWorld, look } from "./crm-kit";
import { waitUntil } from "./support";

/**
 * The deals board in a real browser: the Table/Board switch (aria-pressed, in the URL), a column
 * per stage headed by its exact count and sum, a card moved with its "Move to…" list and another
 * by drag and drop, both still there after a reload. axe-core and screenshots at 1280 and 390 px;
 * no console error, failed request or other host.
 */

const STEP = 60_000;
let w: World;
let page: Page;
const ids: Record<string, string> = {};

beforeAll(async () => {
  w = await crmWorld();
  page = w.page;
  const acc = await w.server.call("POST", "/api/v1/crm/accounts", { token: w.token, tenant: TENANT, body: { name: "Board Co" } });
  for (const [title, stage, value] of [["Alpha deal", "new", "1000.50"], ["Beta deal", "new", "250"], ["Gamma deal", "qualified", "99.99"], ["Delta deal", "won", "5000"]] as const) {
    const d = await w.server.call("POST", "/api/v1/crm/deals", { token: w.token, tenant: TENANT, body: { title, account_id: (acc.body as any).id, stage, value } });
    ids[title] = (d.body as any).id;
  }
}, STEP);
afterAll(() => w?.close());

const stageOf = async (title: string) => ((await w.server.call("GET", `/api/v1/crm/deals/${ids[title]}`, { token: w.token, tenant: TENANT })).body as any).stage;
const column = (name: string) => page.getByRole("region", { name: "Deals by stage" }).locator("section.board-column").filter({ has: page.getByRole("heading", { name, exact: true }) });
const countOf = (name: string) => column(name).locator(".column-count").textContent();

test("the Board button shows a column per stage with exact counts and sums, and the URL keeps it", async () => {
  await page.goto(`${w.origin}/deals`);
  await page.getByRole("button", { name: "Board", exact: true }).click();
  await waitUntil(async () => page.url().includes("view=board"));
  expect(await page.getByRole("button", { name: "Board", exact: true }).getAttribute("aria-pressed")).toBe("true");
  expect(await page.getByRole("button", { name: "Table", exact: true }).getAttribute("aria-pressed")).toBe("false");
  await column("New").getByRole("link", { name: "Alpha deal", exact: true }).waitFor();
  const headings = await page.locator(".board-column h2").allTextContents();
  expect(headings).toEqual(["New", "Qualified", "Proposal", "Negotiation", "Won", "Lost"]);
  await waitUntil(async () => (await countOf("New")) === "2 deals");
  expect(await column("New").locator(".column-sums").textContent()).toContain("1,250.50");
  expect(await countOf("Proposal")).toBe("0 deals");
  await look(page, "board");
}, STEP);

test("a card moves with its Move to… list: at once, announced, saved", async () => {
  await column("New").getByLabel("Move “Alpha deal” to another stage").selectOption({ label: "Won" });
  await column("Won").getByRole("link", { name: "Alpha deal", exact: true }).waitFor();
  await page.getByRole("status").filter({ hasText: "Moved “Alpha deal” from New to Won." }).waitFor({ state: "attached" });
  await waitUntil(async () => (await stageOf("Alpha deal")) === "won");
  expect([await countOf("New"), await countOf("Won")]).toEqual(["1 deal", "2 deals"]);
}, STEP);

test("a card moves by drag and drop, and both moves are there after a reload", async () => {
  await column("New").locator("li.board-card", { hasText: "Beta deal" }).dragTo(column("Qualified"));
  await column("Qualified").getByRole("link", { name: "Beta deal", exact: true }).waitFor();
  await waitUntil(async () => (await stageOf("Beta deal")) === "qualified");
  await page.reload();
  await column("Qualified").getByRole("link", { name: "Beta deal", exact: true }).waitFor();
  await column("Won").getByRole("link", { name: "Alpha deal", exact: true }).waitFor();
  expect([await countOf("New"), await countOf("Qualified"), await countOf("Won")]).toEqual(["0 deals", "2 deals", "2 deals"]);
  expect(await column("Won").locator(".column-sums").textContent()).toContain("6,000.50");
  await look(page, "board-moved");
  expect(w.problems).toEqual([]);
}, STEP);
