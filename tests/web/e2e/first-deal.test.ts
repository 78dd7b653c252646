import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { type World, crmWorld, look } from "./crm-kit";
import { waitUntil } from "./support";

/**
 * A new organization's first ten minutes in a real browser: the first deal with an account typed
 * in the picker and created from it ("Create “Globex”"), a wrong value that keeps everything typed
 * and says in a sentence what to fix, probability following the stage, the deal list's keyboard
 * shortcuts, the import's column-mapping step for a semicolon file, and the navigation folded
 * behind a Menu button at 390 px. Screenshots at 1280 and 390 px of each (crm-kit's look).
 */
const STEP = 90_000;
let w: World;
let page: Page;

beforeAll(async () => {
  w = await crmWorld();
  page = w.page;
}, STEP);
afterAll(() => w?.close());

const fieldError = (label: string): Promise<string | null> =>
  page.evaluate(`(() => {
    const label = [...document.querySelectorAll("label")].find((x) => x.textContent === ${JSON.stringify(label)});
    const input = label && document.getElementById(label.getAttribute("for"));
    const ids = input?.getAttribute("aria-describedby")?.split(" ") ?? [];
    return ids.map((id) => document.getElementById(id)).find((e) => e?.classList.contains("error"))?.textContent ?? null;
  })()`);

test("the first deal: a new account typed in the picker and created there; a wrong value keeps what was typed", async () => {
  await page.getByRole("button", { name: "Create your first deal" }).click();
  const dialog = page.getByRole("dialog", { name: "New deal" });
  await dialog.getByLabel("Title").fill("Globex rollout");
  const account = dialog.getByRole("combobox", { name: "Account" });
  await account.fill("Globex");
  const create = dialog.getByRole("option", { name: /^Create “Globex”/ });
  await create.waitFor();
  await page.screenshot({ path: "test-artifacts/web/crm-first-deal-picker-create-1280.png" });
  await create.click();
  await waitUntil(async () => (await account.getAttribute("aria-busy")) === null && (await account.inputValue()) === "Globex");
  // Probability follows the stage until typed.
  const probability = dialog.getByLabel("Probability (%)");
  expect(await probability.inputValue()).toBe("10");
  await dialog.getByLabel("Stage").selectOption("proposal");
  expect(await probability.inputValue()).toBe("50");
  // Currency: a list of ISO codes.
  await dialog.getByLabel("Currency").selectOption("EUR");
  await dialog.getByLabel("Value").fill("12,50");
  w.expected.push(422);
  await dialog.getByRole("button", { name: "Create deal" }).click();
  await dialog.locator(".field.has-error").first().waitFor();
  const error = await fieldError("Value");
  expect(error).toMatch(/^Value must be an amount written like 1234\.50/);
  expect(await dialog.textContent()).not.toMatch(/Value error|String should|Input should|create_missing/);
  // Nothing typed was cleared.
  expect(await dialog.getByLabel("Value").inputValue()).toBe("12,50");
  expect(await account.inputValue()).toBe("Globex");
  expect(await dialog.getByLabel("Title").inputValue()).toBe("Globex rollout");
  await look(page, "first-deal-form-error");
  await dialog.getByLabel("Value").fill("12.50");
  await dialog.getByRole("button", { name: "Create deal" }).click();
  await page.getByRole("cell", { name: "Globex rollout", exact: true }).waitFor();
  const deals = (await w.server.call("GET", "/api/v1/crm/deals", { token: w.token, tenant: "acme" })).body.items;
  expect(deals.map((d: Record<string, unknown>) => [d.title, d.account_name, d.value, d.currency, d.stage, d.probability])).toEqual([
    ["Globex rollout", "Globex", "12.50", "EUR", "proposal", 50],
  ]);
}, STEP);

test("keyboard: / n j k Enter ?, never while typing or with a modifier", async () => {
  for (const title of ["Beta deal", "Gamma deal"]) {
    const acc = (await w.server.call("GET", "/api/v1/crm/accounts", { token: w.token, tenant: "acme" })).body.items[0];
    expect((await w.server.call("POST", "/api/v1/crm/deals", { token: w.token, tenant: "acme", body: { title, account_id: acc.id } })).status).toBe(201);
  }
  await page.goto(`${w.origin}/deals?sort_by=title&sort_dir=asc`);
  await page.getByRole("cell", { name: "Gamma deal", exact: true }).waitFor();
  await page.locator("h1").click();
  await page.keyboard.press("?");
  await page.getByRole("dialog", { name: "Keyboard shortcuts" }).waitFor();
  await look(page, "first-deal-shortcuts");
  await page.keyboard.press("Escape");
  await page.getByRole("dialog", { name: "Keyboard shortcuts" }).waitFor({ state: "hidden" });
  await page.keyboard.press("/");
  expect(await page.evaluate("document.activeElement.type")).toBe("search");
  // Typing in the search box: "n" and "j" are letters there.
  await page.keyboard.type("nj");
  await page.waitForURL(/search=nj/);
  expect(await page.getByRole("dialog", { name: "New deal" }).isVisible()).toBe(false);
  await page.goto(`${w.origin}/deals?sort_by=title&sort_dir=asc`);
  await page.getByRole("cell", { name: "Gamma deal", exact: true }).waitFor();
  await page.locator("h1").click();
  // A modifier held: not a shortcut.
  await page.keyboard.press("Alt+n");
  expect(await page.getByRole("dialog", { name: "New deal" }).isVisible()).toBe(false);
  await page.keyboard.press("n");
  await page.getByRole("dialog", { name: "New deal" }).waitFor();
  await page.keyboard.press("Escape");
  await page.getByRole("dialog", { name: "New deal" }).waitFor({ state: "hidden" });
  await page.locator("h1").click();
  const focusedRow = () => page.evaluate(`document.activeElement?.closest("tr")?.querySelector("td.title")?.textContent ?? null`);
  await page.keyboard.press("j");
  expect(await focusedRow()).toBe("Beta deal");
  await page.keyboard.press("j");
  expect(await focusedRow()).toBe("Gamma deal");
  await page.keyboard.press("j");
  await page.keyboard.press("j"); // the last row stays the last
  expect(await focusedRow()).toBe("Globex rollout");
  await page.keyboard.press("k");
  expect(await focusedRow()).toBe("Gamma deal");
  // Enter on the row's title opens the deal's page.
  await page.keyboard.press("Enter");
  await page.getByRole("heading", { level: 1, name: "Gamma deal" }).waitFor();
  await page.waitForURL(/\/deals\/[^/?]+$/);
  await page.goBack();
  await page.getByRole("heading", { level: 1, name: "Deals" }).waitFor();
}, STEP);

test("import: a semicolon file's columns are matched in a mapping step, prefilled by name", async () => {
  await page.goto(`${w.origin}/import?kind=deals`);
  await page.getByRole("heading", { name: "Import from CSV" }).waitFor();
  const csv = "Deal name;Company;Amount;Internal code\nSemicolon deal;Globex;99,5;X-1\n";
  await page.getByLabel(/CSV file/).setInputFiles({ name: "deals.csv", mimeType: "text/csv", buffer: Buffer.from(csv) });
  const mapping = page.getByRole("group", { name: "Match the file's columns" });
  await mapping.waitFor();
  const chosen = async () => mapping.locator("select").evaluateAll((ss) => ss.map((s) => (s as unknown as { value: string }).value));
  expect(await chosen()).toEqual(["title", "account_name", "value", ""]);
  await look(page, "first-deal-import-mapping");
  await page.getByRole("button", { name: "Check file" }).click();
  // 99,5 is no amount: the error reads as a sentence, by line and column.
  await page.locator("table.import-errors tbody tr").first().waitFor();
  expect(await page.locator("table.import-errors").textContent()).toMatch(/value.*Value must be an amount written like 1234\.50/);
  await page.getByLabel(/CSV file/).setInputFiles({ name: "deals.csv", mimeType: "text/csv", buffer: Buffer.from(csv.replace("99,5", "99.5")) });
  await mapping.waitFor();
  await mapping.getByLabel("Internal code").selectOption("external_id");
  await page.getByRole("button", { name: "Check file" }).click();
  await page.getByText("The file is ready: 1 rows, no errors").waitFor();
  await page.getByRole("button", { name: "Import", exact: true }).click();
  await page.getByText(/The import is done/).waitFor();
  const deal = (await w.server.call("GET", "/api/v1/crm/deals?search=Semicolon", { token: w.token, tenant: "acme" })).body.items[0];
  expect([deal.title, deal.account_name, deal.value]).toEqual(["Semicolon deal", "Globex", "99.50"]);
}, STEP);

test("at 390 px the navigation folds behind a Menu button: expanded on click, closed by Escape and by navigating", async () => {
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`${w.origin}/deals`);
  await page.getByRole("cell", { name: "Globex rollout", exact: true }).waitFor();
  const menu = page.getByRole("button", { name: "Menu" });
  const nav = page.getByRole("navigation", { name: "Main" });
  expect(await menu.getAttribute("aria-expanded")).toBe("false");
  expect(await nav.getByRole("link", { name: "Accounts" }).isVisible()).toBe(false);
  const head = await page.locator("header.topbar").boundingBox();
  expect(head!.height).toBeLessThan(844 / 8);
  await page.screenshot({ path: "test-artifacts/web/crm-first-deal-menu-closed-390.png" });
  await menu.click();
  expect(await menu.getAttribute("aria-expanded")).toBe("true");
  await nav.getByRole("link", { name: "Accounts" }).waitFor();
  await page.screenshot({ path: "test-artifacts/web/crm-first-deal-menu-open-390.png" });
  await page.keyboard.press("Escape");
  expect(await menu.getAttribute("aria-expanded")).toBe("false");
  expect(await page.evaluate("document.activeElement?.textContent")).toContain("Menu");
  await menu.click();
  await nav.getByRole("link", { name: "Accounts" }).click();
  await page.waitForURL(/\/accounts$/);
  // The menu closes in the render that follows the new address, a moment after it.
  await page.locator('.menu-button[aria-expanded="false"]').waitFor({ timeout: 2_000 });
  expect(await menu.getAttribute("aria-expanded")).toBe("false");
  expect(await nav.getByRole("link", { name: "Deals" }).isVisible()).toBe(false);
  await page.setViewportSize({ width: 1280, height: 900 });
  expect(await menu.isVisible()).toBe(false);
  expect(await nav.getByRole("link", { name: "Deals" }).isVisible()).toBe(true);
  expect(w.problems).toEqual([]);
}, STEP);
