import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import type { Page } from "playwright-core";
import { TENANT, type World, crmWorld, look } from "./crm-kit";

/**
 * The Security log screen in a real browser (issue 16): the admin's nav entry, the rows newest
 * first, filters by action (several), person and time range held in the URL (the back button
 * restores a view), paging, and "Download CSV" giving the same rows as the filters. axe-core and
 * screenshots at 1280 and 390 px; no console error, failed request or other host.
 */

const STEP = 60_000;
let w: World;
let page: Page;
let ownerId: string;

const call = (method: string, path: string, body?: unknown) => w.server.call(method, `/api/v1${path}`, { token: w.token, tenant: TENANT, body });

beforeAll(async () => {
  w = await crmWorld();
  page = w.page;
  ownerId = ((await call("GET", "/auth/me")).body as any).user.id;
  const stages = (await call("GET", "/crm/pipeline-stages")).body as Array<{ id: string }>;
  // 24 stage renames: more rows than one page of 20.
  for (let i = 0; i < 24; i++) expect((await call("PATCH", `/crm/pipeline-stages/${stages[0]!.id}`, { name: `New ${i}` })).status).toBe(200);
  expect((await call("POST", "/users/invite", { email: "invitee@acme.test" })).status).toBe(201);
}, STEP);
afterAll(() => w?.close());

const rows = () => page.locator("table tbody tr");
/** The log's size as the API counts it (signup, sign-in and verification mail rows come before the test's own). */
const entries = async () => `${((await call("GET", "/audit-log?size=1")).body as { total: number }).total} entries`;
const settled = () => page.locator(".table-wrap.dim").waitFor({ state: "detached" });
const actionsShown = async () => [...new Set(await page.locator("table tbody tr td:nth-child(3)").allTextContents())].sort();

test("an admin opens the Security log from the navigation: newest first, paged", async () => {
  await page.goto(`${w.origin}/deals`);
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Security log" }).click();
  await page.waitForURL(/\/security-log$/);
  await page.getByRole("heading", { name: "Security log" }).waitFor();
  await rows().first().waitFor();
  expect(await rows().count()).toBe(20);
  expect(await rows().first().locator("td:nth-child(3)").textContent()).toBe("invitation.created");
  await page.getByText(await entries()).waitFor();
  await look(page, "security-log");
  await page.getByRole("button", { name: "Next" }).click();
  await page.waitForURL(/page=2/);
  await settled();
  // Page 2 holds what page 1 left of the total (the setup adds 25 rows to the signup's own).
  const total = ((await call("GET", "/audit-log?size=1")).body as { total: number }).total;
  expect(await rows().count()).toBe(total - 20);
  expect(await rows().last().locator("td:nth-child(3)").textContent()).toBe("tenant.signup");
}, STEP);

test("filters by actions and person live in the URL; the back button restores a view", async () => {
  await page.goto(`${w.origin}/security-log`);
  await rows().first().waitFor();
  await page.locator("summary", { hasText: "Actions" }).click();
  await page.getByRole("checkbox", { name: "invitation.created" }).check();
  await page.waitForURL(/action=invitation\.created/);
  await settled();
  expect(await actionsShown()).toEqual(["invitation.created"]);
  await page.getByRole("checkbox", { name: "tenant.signup" }).check();
  await page.waitForURL(/action=invitation\.created&action=tenant\.signup/);
  await settled();
  expect(await actionsShown()).toEqual(["invitation.created", "tenant.signup"]);
  await page.getByLabel("Person").selectOption({ label: "Olive Owner (owner@acme.test)" });
  await page.waitForURL(new RegExp(`user_id=${ownerId}`));
  await settled();
  expect(await rows().count()).toBe(2);
  await look(page, "security-log-filtered");
  await page.goBack();
  await page.waitForURL((u) => !u.searchParams.has("user_id") && u.searchParams.getAll("action").length === 2);
  await settled();
  await page.goBack();
  await page.waitForURL((u) => u.searchParams.getAll("action").join() === "invitation.created");
  await settled();
  expect(await actionsShown()).toEqual(["invitation.created"]);
}, STEP);

test("a time range in the future shows nothing; clearing the filters shows everything again", async () => {
  await page.goto(`${w.origin}/security-log?action=crm.stage_updated`);
  await rows().first().waitFor();
  await page.getByLabel("From").fill("2099-01-01T10:00");
  await page.waitForURL(/since=2099-01-01T/);
  await page.getByText("No entries match these filters.").waitFor();
  await page.getByRole("button", { name: "Clear filters" }).click();
  await page.waitForURL((u) => u.search === "");
  await page.getByText(await entries()).waitFor();
}, STEP);

test("Download CSV gives the filtered rows, newest first, with a header row", async () => {
  await page.goto(`${w.origin}/security-log?action=crm.stage_updated&size=50`);
  await page.getByText("24 entries").waitFor();
  const href = await page.getByRole("link", { name: "Download CSV" }).getAttribute("href");
  expect(href).toBe("/api/v1/audit-log?action=crm.stage_updated&format=csv");
  const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Download CSV" }).click()]);
  expect(download.suggestedFilename()).toMatch(/^audit-log-\d{4}-\d{2}-\d{2}\.csv$/);
  const text = readFileSync((await download.path())!, "utf8").replace(/^\uFEFF/, "");
  const lines = text.trimEnd().split("\r\n");
  expect(lines[0]).toBe("id,created_at,user_id,user_email,user_name,action,ip,user_agent,detail");
  expect(lines.length).toBe(25);
  expect(lines.slice(1).every((l) => l.includes(",crm.stage_updated,"))).toBe(true);
  expect(lines[1]).toContain('""to"":""New 23""');
  expect(lines[1]).toContain("owner@acme.test,Olive Owner");
}, STEP);

test("no console error, no failed request, no request to another host", () => {
  expect(w.problems).toEqual([]);
  expect(w.expected).toEqual([]);
}, STEP);
