import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { TENANT, type World, crmWorld, look } from "./crm-kit";

/**
 * An account's and a contact's pages in a real browser (issue 32): the account opened from the
 * accounts table shows its contacts, its deals and its timeline; a field edited in place shows
 * in the timeline; a contact's page is reached from the account's, and a deal's from either.
 * Screenshots at 1280 and 390 px with axe (test-artifacts/web/crm-account-page-*,
 * crm-contact-page-*). No console error, failed request or unexpected 4xx (crm-kit's watch).
 */

const STEP = 180_000;
let w: World;
let page: Page;
let accountId: string;

beforeAll(async () => {
  w = await crmWorld();
  page = w.page;
  const call = (method: string, path: string, body?: unknown) => w.server.call(method, path, { token: w.token, tenant: TENANT, body });
  const account = (await call("POST", "/api/v1/crm/accounts", { name: "Globex Corporation", domain: "globex.test" })).body;
  accountId = account.id;
  const other = (await call("POST", "/api/v1/crm/accounts", { name: "Initech" })).body;
  const ada = (await call("POST", "/api/v1/crm/contacts", { first_name: "Ada", last_name: "Lovelace", email: "ada@globex.test", account_id: account.id })).body;
  await call("POST", "/api/v1/crm/contacts", { first_name: "Hank", last_name: "Scorpio", account_id: account.id });
  for (const [title, value] of [["Rollout to every plant", "125000"], ["Pilot in Cypress Creek", "9000"], ["Support renewal", "30000"]]) {
    expect((await call("POST", "/api/v1/crm/deals", { title, account_id: account.id, contact_id: title.startsWith("Pilot") ? null : ada.id, value })).status).toBe(201);
  }
  expect((await call("POST", "/api/v1/crm/deals", { title: "Initech upgrade", account_id: other.id, value: "500" })).status).toBe(201);
}, STEP);
afterAll(() => w?.close());

test("the accounts table opens an account's page: its contacts, its deals and its timeline; a field edited in place", async () => {
  await page.goto(`${w.origin}/accounts`);
  await page.getByRole("link", { name: "Globex Corporation", exact: true }).click();
  await page.waitForURL(new RegExp(`/accounts/${accountId}$`));
  await page.getByRole("heading", { name: "Globex Corporation", level: 1 }).waitFor();

  // Its deals (only its: not Initech's), each a link to the deal's page, and its contacts.
  const deals = page.locator(".record-list").filter({ has: page.getByRole("heading", { name: "Deals" }) });
  await deals.getByRole("link", { name: "Rollout to every plant" }).waitFor();
  expect(await deals.locator("tbody tr").count()).toBe(3);
  expect(await deals.getByText("Initech upgrade").count()).toBe(0);
  await deals.getByText("3 deals").waitFor();
  const contacts = page.locator(".record-list").filter({ has: page.getByRole("heading", { name: "Contacts" }) });
  await contacts.getByRole("link", { name: "Ada Lovelace" }).waitFor();
  await contacts.getByRole("link", { name: "Hank Scorpio" }).waitFor();

  // The timeline: created; then the industry set in place shows as a change.
  await page.getByText("created the account").waitFor();
  await page.getByRole("button", { name: "Edit industry" }).click();
  await page.getByLabel("Industry").fill("Energy");
  await page.getByRole("button", { name: "Save industry" }).click();
  const change = page.locator(".timeline .entry.updated").first();
  await change.getByText("Industry").waitFor();
  expect(await change.innerText()).toContain("none → Energy");
  await look(page, "account-page");

  // A contact's page from the account's; its account links back; a deal's page from its list.
  await contacts.getByRole("link", { name: "Ada Lovelace" }).click();
  await page.getByRole("heading", { name: "Ada Lovelace", level: 1 }).waitFor();
  await page.getByText("created the contact at Globex Corporation").waitFor();
  const contactDeals = page.locator(".record-list");
  await contactDeals.getByRole("link", { name: "Support renewal" }).waitFor();
  expect(await contactDeals.locator("tbody tr").count()).toBe(2);
  await look(page, "contact-page");
  await contactDeals.getByRole("link", { name: "Support renewal" }).click();
  await page.getByRole("heading", { name: "Support renewal", level: 1 }).waitFor();
  // The deal page's account and contact lead to their pages.
  await page.locator(".deal-fields").getByRole("link", { name: "Globex Corporation", exact: true }).click();
  await page.waitForURL(new RegExp(`/accounts/${accountId}$`));
  await page.getByRole("heading", { name: "Globex Corporation", level: 1 }).waitFor();
  expect(w.problems).toEqual([]);
}, STEP);
