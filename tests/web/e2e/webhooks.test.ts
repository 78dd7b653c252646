import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { TENANT, type World, crmWorld, look } from "./crm-kit";
import { waitUntil } from "./support";
import { receiver } from "../../webhooks/support";
import { noteSecret } from "../../security/ledger";

/**
 * The Webhooks screen in a real browser against the built binary, which may reach this test's
 * loopback receiver through the operator's two settings: add a webhook with picked events, copy
 * the secret shown once, send a test (the receiver verifies its signature with that secret), see
 * it delivered in the log with its response code, and retry it. Screenshots at 1280 and 390 px.
 */

const STEP = 90_000;
const r = receiver();
let w: World;
let page: Page;

beforeAll(async () => {
  w = await crmWorld({ SUITE_OUTBOUND_ALLOW: "127.0.0.1", SUITE_WEBHOOK_HTTP: "true" });
  page = w.page;
}, STEP);
afterAll(async () => {
  await w?.close();
  r.stop();
});

test("add a webhook: the secret is shown once with a Copy button; a test event is delivered, signed, and shows in the log", async () => {
  await page.goto(`${w.origin}/organization`);
  await page.getByRole("link", { name: "Webhooks" }).click();
  await page.getByText("No webhooks yet.").waitFor();
  await look(page, "webhooks-empty");
  await page.getByRole("button", { name: "Add webhook" }).click();
  await page.getByLabel("Address (URL)").fill(r.url);
  await page.getByLabel("Description (optional)").fill("Billing sync");
  await page.getByLabel("Only the events I pick").check();
  await page.getByRole("checkbox", { name: "Deals", exact: true }).check();
  await look(page, "webhooks-add");
  await page.getByRole("button", { name: "Add webhook", exact: true }).last().click();
  await page.getByText("it is shown only this once.").waitFor();
  const secret = await page.getByLabel("Signing secret", { exact: true }).inputValue();
  expect(secret).toMatch(/^whsec_/);
  noteSecret("secret", secret);
  r.trust(secret);
  await look(page, "webhooks-secret");
  await page.getByRole("button", { name: "I have copied it" }).click();
  const hooks = (await w.server.call("GET", "/api/v1/webhooks", { token: w.token, tenant: TENANT })).body.items;
  expect(hooks).toMatchObject([{ url: r.url, description: "Billing sync", events: ["deal.created", "deal.updated", "deal.stage_changed", "deal.deleted"], enabled: true }]);
  // Shown once: the list never has it, nor does the page after a reload.
  await page.reload();
  await page.getByText("Billing sync").waitFor();
  expect(await page.content()).not.toContain(secret);

  await page.getByRole("button", { name: "Send test" }).click();
  await page.getByRole("heading", { name: `Deliveries to ${r.url}` }).waitFor();
  await waitUntil(async () => r.received.length >= 1);
  expect(r.received[0]!.event.type).toBe("webhook.test");
  expect(r.received[0]!.verifiedWith).toEqual([secret]);
  await waitUntil(async () => {
    await page.getByRole("button", { name: "Refresh" }).click();
    return (await page.getByText("HTTP 204").count()) > 0;
  });
  await page.getByText("Delivered").first().waitFor();
  await look(page, "webhooks-deliveries");
  await page.getByRole("button", { name: "Retry the webhook.test delivery" }).click();
  await waitUntil(async () => r.received.length >= 2);
  expect(r.received[1]!.id).toBe(r.received[0]!.id);
  expect(w.problems).toEqual([]);
}, STEP);

test("disable and enable again; rotating shows a new secret once, and both secrets sign for a day", async () => {
  await page.getByRole("button", { name: "Disable" }).click();
  await page.getByText("Disabled the webhook: no events are sent to it.").waitFor();
  await page.getByRole("button", { name: "Enable" }).click();
  await page.getByText("Enabled the webhook.").waitFor();
  await page.getByRole("button", { name: "Rotate secret" }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Rotate secret" }).click();
  await page.getByText("The previous secret keeps signing beside this one for 24 hours").waitFor();
  const rotated = await page.getByLabel("Signing secret", { exact: true }).inputValue();
  noteSecret("secret", rotated);
  r.trust(rotated);
  await page.getByRole("button", { name: "I have copied it" }).click();
  const before = r.received.length;
  await page.getByRole("button", { name: "Send test" }).click();
  await waitUntil(async () => r.received.length > before);
  expect(r.received.at(-1)!.verifiedWith).toHaveLength(2);
  expect(w.problems).toEqual([]);
}, STEP);
