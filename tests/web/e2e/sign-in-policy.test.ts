/**
 * The organization's sign-in policy (issue 33) in Chromium against the built binary, with the
 * DevTools protocol's virtual authenticator: the admin turns "everyone must use a passkey or
 * two-step verification" on in the Organization screen and is sent, like everyone, to the setup
 * screen; a member who signs in is sent there too, cannot open the deals, and is let through
 * once a passkey is added.
 */
import { openMailOfFile } from "../../support/outbox";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { noteSecret } from "../../security/ledger";
import { type Suite, ensureBinary, launch, look, secretPassword, startSuite, watchedPage } from "./support";

let dir: string;
let suite: Suite;
let browser: Browser;
const ADMIN_PW = secretPassword("policy-admin");
const MEMBER_PW = secretPassword("policy-member");
const SUB = "policy";
const SETUP = "/sign-in-setup";

beforeAll(async () => {
  ensureBinary();
  dir = mkdtempSync(join(tmpdir(), "suite-web-policy-"));
  suite = await startSuite(dir);
  browser = await launch();
  const admin = await suite.call("POST", "/api/v1/auth/signup", { body: { email: `admin@${SUB}.test`, password: ADMIN_PW, tenant_name: "Policy Ltd", subdomain: SUB, full_name: "Ada Admin" } });
  expect(admin.status).toBe(201);
  expect((await suite.call("POST", "/api/v1/users/invite", { body: { email: `bob@${SUB}.test` }, token: admin.body.access_token, tenant: SUB })).status).toBe(201);
  const { Database } = await import("bun:sqlite");
  const db = new Database(suite.db, { readonly: true });
  const row = db.query("SELECT id, link FROM mail_outbox WHERE recipient = ?1 ORDER BY rowid DESC LIMIT 1").get(`bob@${SUB}.test`) as { id: string; link: string };
  db.close();
  const link = openMailOfFile(suite.db, row).link!;
  noteSecret("mailed link", link);
  const token = decodeURIComponent(/token=([^&]+)/.exec(new URL(link).hash)![1]!);
  expect((await suite.call("POST", "/api/v1/auth/invitations/accept", { body: { token, password: MEMBER_PW, full_name: "Bob Builder" } })).status).toBe(201);
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await suite?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A browser context with a virtual platform authenticator (resident keys, user verification). */
async function withAuthenticator(context: BrowserContext, page: Page) {
  const cdp = await context.newCDPSession(page);
  await cdp.send("WebAuthn.enable");
  await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: { protocol: "ctap2", transport: "internal", hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });
}

async function signIn(page: Page, email: string, password: string) {
  await page.goto(`${suite.origin(SUB)}/sign-in`);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
}

/** On the setup screen: adds a passkey, and continues to the deals. */
async function comply(page: Page) {
  await page.getByRole("button", { name: "Add a passkey" }).click();
  await page.getByText("Passkey added.").waitFor();
  await page.getByText("Your sign-in now meets your organization's rules.").waitFor();
  await page.getByRole("button", { name: "Continue" }).click();
  await page.waitForURL(`${suite.origin(SUB)}/deals`);
  await page.getByRole("heading", { name: "Deals" }).waitFor();
}

test("the admin turns the policy on; a member is sent to set up a passkey, and let through once they have", async () => {
  const found: string[] = [];

  // The admin turns the rule on in the Organization screen, and is held back by it too.
  const adminContext = await browser.newContext();
  const admin = await watchedPage(adminContext, suite.port);
  await withAuthenticator(adminContext, admin.page);
  await signIn(admin.page, `admin@${SUB}.test`, ADMIN_PW);
  await admin.page.waitForURL(`${suite.origin(SUB)}/deals`);
  await admin.page.goto(`${suite.origin(SUB)}/organization`);
  const rule = admin.page.getByRole("switch", { name: "Everyone must use a passkey or two-step verification" });
  await rule.waitFor();
  expect(await rule.isChecked()).toBe(false);
  await rule.check();
  found.push(...(await look(admin.page, "policy-organization")));
  await admin.page.getByRole("button", { name: "Save sign-in rules" }).click();
  await admin.page.waitForURL(`${suite.origin(SUB)}${SETUP}`);
  await comply(admin.page);
  await admin.page.goto(`${suite.origin(SUB)}/organization`);
  expect(await admin.page.getByRole("switch", { name: "Everyone must use a passkey or two-step verification" }).isChecked()).toBe(true);
  expect(admin.watch.problems).toEqual([]);
  await adminContext.close();

  // The member signs in: the setup screen, with a plain sentence, and nothing else opens.
  const context = await browser.newContext();
  const { page, watch } = await watchedPage(context, suite.port);
  await withAuthenticator(context, page);
  await signIn(page, `bob@${SUB}.test`, MEMBER_PW);
  await page.waitForURL(`${suite.origin(SUB)}${SETUP}`);
  await page.getByText("Your organization requires a passkey or two-step verification. Set one up to continue.").waitFor();
  await page.getByRole("heading", { name: "Two-step verification" }).waitFor();
  found.push(...(await look(page, "policy-setup")));
  await page.goto(`${suite.origin(SUB)}/deals`);
  await page.waitForURL(`${suite.origin(SUB)}${SETUP}`);
  const blocked = await page.evaluate(() => fetch("/api/v1/crm/deals").then(async (r) => ({ status: r.status, code: ((await r.json()) as { code: string }).code })));
  expect(blocked).toEqual({ status: 403, code: "policy_setup_required" });

  await comply(page);
  found.push(...(await look(page, "policy-released")));
  expect(found).toEqual([]);
  expect(watch.problems).toEqual([]);
  await context.close();
}, 240_000);
