/**
 * Passkeys in Chromium against the built binary, with the DevTools protocol's virtual
 * authenticator (CTAP2, internal transport, resident keys, user verification): the offer after a
 * password sign-in, adding one in My account after a step-up by password, signing out and in
 * through the "Sign in with a passkey" button and through the email field's autofill
 * (conditional mediation), and a step-up by passkey before removing it.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { type Suite, ensureBinary, launch, look, secretPassword, startSuite, watchedPage } from "./support";

let dir: string;
let suite: Suite;
let browser: Browser;
const PW = secretPassword("passkeys-admin");
const SUB = "keys";
const EMAIL = `ada@${SUB}.test`;

beforeAll(async () => {
  ensureBinary();
  dir = mkdtempSync(join(tmpdir(), "suite-web-passkeys-"));
  suite = await startSuite(dir, { SUITE_REAUTH_WINDOW: "3" });
  browser = await launch();
  const admin = await suite.call("POST", "/api/v1/auth/signup", { body: { email: EMAIL, password: PW, tenant_name: "Keys Ltd", subdomain: SUB, full_name: "Ada Admin" } });
  expect(admin.status).toBe(201);
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await suite?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Signs out through My account and waits for the sign-in page. */
async function signOut(page: Page) {
  await page.goto(`${suite.origin(SUB)}/settings`);
  await page.getByRole("button", { name: "Sign out of this device" }).click();
  await page.waitForURL(/\/sign-in/);
}

const sessionMethods = (page: Page) =>
  page.evaluate(() => fetch("/api/v1/auth/sessions").then((r) => r.json() as Promise<{ method: string; current: boolean }[]>));

test("offer after a password sign-in, add in My account, sign in by button and by autofill, step up with a passkey", async () => {
  const context = await browser.newContext();
  const { page, watch } = await watchedPage(context, suite.port);
  const cdp = await context.newCDPSession(page);
  await cdp.send("WebAuthn.enable");
  const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: { protocol: "ctap2", transport: "internal", hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });
  const found: string[] = [];

  // A password sign-in without a passkey: the offer, once.
  await page.goto(`${suite.origin(SUB)}/sign-in`);
  expect(await page.getByLabel("Email").getAttribute("autocomplete")).toBe("username webauthn");
  found.push(...(await look(page, "passkeys-sign-in")));
  await page.getByLabel("Email").fill(EMAIL);
  await page.getByLabel("Password").fill(PW);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.waitForURL(`${suite.origin(SUB)}/deals`);
  const offer = page.getByRole("region", { name: "Sign in faster with a passkey" });
  await offer.waitFor();
  found.push(...(await look(page, "passkeys-offer")));
  await offer.getByRole("button", { name: "Not now" }).click();

  // Add one in My account: the session is past the step-up window, so the password is asked first.
  await Bun.sleep(3500);
  await page.goto(`${suite.origin(SUB)}/settings`);
  await page.getByRole("heading", { name: "Passkeys" }).waitFor();
  await page.getByText("You have no passkeys yet.").waitFor();
  await page.getByRole("button", { name: "Add a passkey" }).click();
  const confirm = page.getByRole("dialog", { name: "Confirm it's you" });
  await confirm.getByText("enter your password again to change your passkeys").waitFor();
  await confirm.getByLabel("Password").fill(PW);
  await confirm.getByRole("button", { name: "Confirm" }).click();
  await page.getByText("Passkey added.").waitFor();
  const credentials = (await cdp.send("WebAuthn.getCredentials", { authenticatorId })).credentials;
  expect(credentials.map((c) => ({ rpId: c.rpId, resident: c.isResidentCredential }))).toEqual([{ rpId: `${SUB}.localhost`, resident: true }]);
  await page.getByRole("button", { name: /^Rename the passkey / }).click();
  const rename = page.getByRole("dialog", { name: "Rename passkey" });
  await rename.getByLabel("Name").fill("Test laptop");
  await rename.getByRole("button", { name: "Save" }).click();
  await page.getByText("Test laptop").waitFor();
  found.push(...(await look(page, "passkeys-account")));

  // Sign out, and in through the button. Chromium's virtual authenticator answers the autofill's
  // waiting request at once, so that request's options are held back here: only the button's
  // own request (the second) can sign in.
  let asked = 0;
  const options = "**/api/v1/auth/passkeys/login/options";
  await page.route(options, (route) => (asked++ === 0 ? undefined : route.continue()));
  await signOut(page);
  await page.getByRole("button", { name: "Sign in with a passkey" }).click();
  await page.waitForURL(`${suite.origin(SUB)}/deals`);
  expect(asked).toBe(2);
  await page.unroute(options);
  expect((await sessionMethods(page)).find((s) => s.current)?.method).toBe("passkey");
  // No offer after a passkey sign-in, and none again after the first.
  expect(await page.getByRole("region", { name: "Sign in faster with a passkey" }).isVisible()).toBe(false);

  // Sign out, and in through the email field's autofill: the browser offers the passkey there
  // (the virtual authenticator picks it without being asked; a real browser lists it under the field).
  await signOut(page);
  const email = page.getByLabel("Email");
  await email.click().catch(() => {});
  await page.waitForURL(`${suite.origin(SUB)}/deals`, { timeout: 15_000 }).catch(async () => {
    // A browser that shows its autofill list waits for a pick: take the first entry.
    await email.press("ArrowDown");
    await email.press("Enter");
    await page.waitForURL(`${suite.origin(SUB)}/deals`);
  });
  expect((await sessionMethods(page)).find((s) => s.current)?.method).toBe("passkey");

  // Step-up with the passkey: removing it, past the window, asks; "Use a passkey" answers.
  await Bun.sleep(3500);
  await page.goto(`${suite.origin(SUB)}/settings`);
  await page.getByRole("button", { name: "Remove the passkey Test laptop" }).click();
  await page.getByRole("dialog", { name: "Remove this passkey?" }).getByRole("button", { name: "Remove passkey" }).click();
  const stepUp = page.getByRole("dialog", { name: "Confirm it's you" });
  await stepUp.waitFor();
  found.push(...(await look(page, "passkeys-step-up")));
  await stepUp.getByRole("button", { name: "Use a passkey" }).click();
  await page.getByText("Passkey removed.").waitFor();
  await page.getByText("You have no passkeys yet.").waitFor();

  expect(found).toEqual([]);
  expect(watch.problems).toEqual([]);
  await context.close();
}, 240_000);
