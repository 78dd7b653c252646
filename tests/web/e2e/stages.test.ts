import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { TENANT, type World, crmWorld, look } from "./crm-kit";
import { waitUntil } from "./support";

/**
 * Stage editing in a real browser (issue 16): rename and recolour in a dialog (deals show it at
 * once), a 422 beside its field, reorder by the move buttons with the keyboard alone (focus stays
 * on the moved stage), and delete with a dialog that asks where the stage's deals go. axe-core
 * and screenshots at 1280 and 390 px; no console error, failed request or other host.
 */

const STEP = 60_000;
let w: World;
let page: Page;
let dealIds: string[] = [];

beforeAll(async () => {
  w = await crmWorld();
  page = w.page;
  const acc = await w.server.call("POST", "/api/v1/crm/accounts", { token: w.token, tenant: TENANT, body: { name: "Stage Co" } });
  for (const title of ["Alpha deal", "Beta deal", "Gamma deal"]) {
    const d = await w.server.call("POST", "/api/v1/crm/deals", { token: w.token, tenant: TENANT, body: { title, account_id: (acc.body as any).id, stage: "proposal" } });
    dealIds.push((d.body as any).id);
  }
}, STEP);
afterAll(() => w?.close());

const api = async (path: string) => (await w.server.call("GET", `/api/v1/crm${path}`, { token: w.token, tenant: TENANT })).body as any;
const stageNames = () => page.locator("table tbody tr td:nth-child(2)").allTextContents();
/** Waits until row n (from 1) shows `text` (waitForFunction would need eval, which the page's CSP forbids). */
const rowHas = (n: number, text: string) => page.locator("table tbody tr").nth(n - 1).locator("td").nth(1).getByText(text, { exact: true }).waitFor();
const focusedLabel = () => page.evaluate("document.activeElement && document.activeElement.getAttribute('aria-label')");

test("an admin renames and recolours a stage in a dialog; every deal of the stage shows it at once", async () => {
  await page.goto(`${w.origin}/pipeline`);
  await page.getByRole("cell", { name: "proposal", exact: true }).waitFor();
  await look(page, "stages");
  // On a phone every row's actions are on the screen, not past the table's right edge.
  await page.setViewportSize({ width: 390, height: 844 });
  const rights = await page.getByRole("button", { name: /^Delete / }).evaluateAll((els) => els.map((e) => Math.round(e.getBoundingClientRect().right)));
  await page.setViewportSize({ width: 1280, height: 800 });
  expect(rights.length).toBe(6);
  expect(rights.filter((r) => r > 390)).toEqual([]);
  await page.getByRole("button", { name: "Edit Proposal" }).click();
  const dialog = page.getByRole("dialog", { name: "Edit the stage “Proposal”" });
  await dialog.waitFor();
  await dialog.getByLabel("Name").fill("Offer sent");
  await dialog.getByLabel("Probability (%)").fill("lots");
  w.expected.push(422);
  await dialog.getByRole("button", { name: "Save stage" }).click();
  await dialog.getByText("Probability must be a whole number.").waitFor();
  await look(page, "stage-edit-422");
  await dialog.getByLabel("Probability (%)").fill("65");
  await dialog.getByLabel("Colour").fill("#123456");
  await dialog.getByRole("button", { name: "Save stage" }).click();
  await dialog.waitFor({ state: "hidden" });
  await page.getByText("Offer sent", { exact: true }).first().waitFor();
  for (const id of dealIds) expect(await api(`/deals/${id}`)).toMatchObject({ stage: "proposal", pipeline_stage_name: "Offer sent", pipeline_stage_color: "#123456" });
  expect((await api("/pipeline-stages")).find((s: any) => s.key === "proposal")).toMatchObject({ probability: 65, name: "Offer sent" });
}, STEP);

test("keyboard alone: move a stage up twice and down once; focus follows the stage", async () => {
  expect((await stageNames()).slice(0, 4)).toEqual(["New", "Qualified", "Offer sent", "Negotiation"]);
  await page.getByRole("button", { name: "Move Offer sent up" }).focus();
  await page.keyboard.press("Enter");
  await rowHas(2, "Offer sent");
  await waitUntil(async () => (await focusedLabel()) === "Move Offer sent up");
  await page.keyboard.press("Enter");
  await rowHas(1, "Offer sent");
  // At the top its up button is disabled: the down button has the focus.
  await waitUntil(async () => (await focusedLabel()) === "Move Offer sent down");
  await page.keyboard.press("Enter");
  await rowHas(2, "Offer sent");
  expect((await stageNames()).slice(0, 3)).toEqual(["New", "Offer sent", "Qualified"]);
  expect((await api("/pipeline-stages")).map((s: any) => s.key).slice(0, 3)).toEqual(["new", "proposal", "qualified"]);
}, STEP);

test("deleting a stage asks where its deals go and moves them", async () => {
  await page.getByRole("button", { name: "Delete Offer sent" }).click();
  const dialog = page.getByRole("dialog", { name: "Delete the stage “Offer sent”" });
  await dialog.getByText("“Offer sent” has 3 deals.", { exact: false }).waitFor();
  await dialog.getByLabel("Move its deals to").selectOption({ label: "Won" });
  await look(page, "stage-delete");
  await dialog.getByRole("button", { name: "Delete stage" }).click();
  await dialog.waitFor({ state: "hidden" });
  await page.getByRole("cell", { name: "proposal", exact: true }).waitFor({ state: "detached" });
  expect(await page.locator("table tbody tr").count()).toBe(5);
  for (const id of dealIds) expect(await api(`/deals/${id}`)).toMatchObject({ stage: "won", is_won: true });
  // The deal list counts them in their new stage.
  await page.goto(`${w.origin}/deals?stage=won`);
  await page.getByText("3 deals").waitFor();
}, STEP);

test("a stage without deals is deleted after a plain confirmation", async () => {
  await page.goto(`${w.origin}/pipeline`);
  await page.getByRole("button", { name: "Delete Lost" }).click();
  const dialog = page.getByRole("dialog", { name: "Delete the stage “Lost”" });
  await dialog.getByText("“Lost” has no deals. Delete it?").waitFor();
  await dialog.getByRole("button", { name: "Delete stage" }).click();
  await dialog.waitFor({ state: "hidden" });
  await page.getByRole("cell", { name: "lost", exact: true }).waitFor({ state: "detached" });
}, STEP);

test("no console error, no failed request, no request to another host", () => {
  expect(w.problems).toEqual([]);
  expect(w.expected).toEqual([]);
}, STEP);
