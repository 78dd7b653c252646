import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { TENANT, type World, crmWorld, look } from "./crm-kit";

/**
 * The deal page in a real browser (issue 32): opened from the list's title, a field edited in
 * place, a note with a link added, both in the timeline newest first; screenshots at 1280 and
 * 390 px with axe (test-artifacts/web/crm-deal-page-*). No console error, failed request or
 * unexpected 4xx (crm-kit's watch).
 */

const STEP = 180_000;
let w: World;
let page: Page;
let dealId: string;

beforeAll(async () => {
  w = await crmWorld();
  page = w.page;
  const call = (method: string, path: string, body?: unknown) => w.server.call(method, path, { token: w.token, tenant: TENANT, body });
  const account = (await call("POST", "/api/v1/crm/accounts", { name: "Globex Corporation" })).body;
  const contact = (await call("POST", "/api/v1/crm/contacts", { first_name: "Ada", last_name: "Lovelace", account_id: account.id })).body;
  const deal = await call("POST", "/api/v1/crm/deals", { title: "Rollout to every plant", account_id: account.id, contact_id: contact.id, value: "125000", probability: 20 });
  expect(deal.status).toBe(201);
  dealId = deal.body.id;
}, STEP);
afterAll(() => w?.close());

test("the list's title opens the deal's page; a field edited in place and a note both show in the timeline", async () => {
  await page.goto(`${w.origin}/deals`);
  await page.getByRole("link", { name: "Rollout to every plant" }).click();
  await page.waitForURL(new RegExp(`/deals/${dealId}$`));
  await page.getByRole("heading", { name: "Rollout to every plant", level: 1 }).waitFor();
  await page.getByText("since today").waitFor();
  await page.getByRole("link", { name: "Globex Corporation" }).waitFor();
  await page.getByText("created the deal in New").waitFor();

  // Probability edited in place.
  await page.getByRole("button", { name: "Edit probability (%)" }).click();
  await page.getByLabel("Probability (%)").fill("60");
  await page.getByRole("button", { name: "Save probability (%)" }).click();
  await page.getByText("60%").first().waitFor();
  const change = page.locator(".timeline .entry.updated").first();
  await change.getByText("Probability").waitFor();
  expect(await change.innerText()).toContain("20% → 60%");

  // A note with a link: the link opens safely; a script address stays text.
  await page.getByLabel("Add a note").fill("Spoke with Ada. Plan: https://example.com/plan?x=1. Not a link: javascript:alert(1)");
  await page.getByRole("button", { name: "Add note" }).click();
  const note = page.locator(".timeline .entry.note").first();
  await note.getByText("Spoke with Ada.").waitFor();
  const link = note.getByRole("link", { name: "https://example.com/plan?x=1" });
  expect(await link.getAttribute("href")).toBe("https://example.com/plan?x=1");
  expect(await link.getAttribute("rel")).toBe("noopener noreferrer");
  expect(await note.locator("a").count()).toBe(1);

  // Newest first: the note, then the change, then the creation.
  const kinds = await page.locator(".timeline .entry").evaluateAll((els) => els.map((e) => e.className.replace("entry ", "")));
  expect(kinds).toEqual(["note", "updated", "created"]);

  // The author edits their note in place.
  await note.getByRole("button", { name: "Edit note" }).click();
  await note.getByLabel("Note").fill("Spoke with Ada again.");
  await note.getByRole("button", { name: "Save note" }).click();
  await note.getByText("Spoke with Ada again.").waitFor();

  await look(page, "deal-page");
  expect(w.problems).toEqual([]);
}, STEP);
