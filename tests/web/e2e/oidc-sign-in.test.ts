import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { appCode } from "../../auth/two-factor/rfc6238";
import { noteSecret } from "../../security/ledger";
import { type Suite, ensureBinary, launch, look, secretPassword, startSuite, watchedPage } from "./support";

// The sign-in page's side of signing in through a provider (issue 17), in a real browser against
// the built binary: the callback's `?error=<code>` read as a sentence and cleaned from the address
// bar, and the 2FA hand-over `?step=2fa#temp_token=…` with a temp token the server really issued
// (the same kind the callback hands over), wiped from the address at once and spent by the code step.
let dir: string;
let suite: Suite;
let browser: Browser;
const PW = secretPassword("oidc-web");
const EMAIL = "olga@oidcweb.test";
let totpSecret = "";

async function api(method: string, path: string, body?: unknown, token?: string) {
  const r = await suite.call(method, `/api/v1${path}`, { body, token, tenant: "oidcweb" });
  for (const k of ["access_token", "refresh_token", "temp_token"]) if (r.body?.[k]) noteSecret("token", r.body[k]);
  return r;
}

beforeAll(async () => {
  ensureBinary();
  dir = mkdtempSync(join(tmpdir(), "suite-web-oidc-"));
  suite = await startSuite(dir);
  browser = await launch();
  const signup = await api("POST", "/auth/signup", { email: EMAIL, password: PW, tenant_name: "OIDC Web", subdomain: "oidcweb", full_name: "Olga" });
  expect(signup.status).toBe(201);
  const token = signup.body.access_token as string;
  const setup = await api("POST", "/auth/2fa/setup", {}, token);
  expect(setup.status).toBe(200);
  totpSecret = setup.body.secret;
  noteSecret("totp secret", totpSecret);
  for (const c of setup.body.backup_codes as string[]) noteSecret("backup code", c);
  const code = appCode(totpSecret, Date.now());
  noteSecret("totp code", code);
  expect((await api("POST", "/auth/2fa/confirm", { code }, token)).status).toBe(200);
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await suite?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test("a provider's error comes back as a readable sentence, and the code leaves the address bar", async () => {
  const context = await browser.newContext();
  const { page, watch } = await watchedPage(context, suite.port);
  await page.goto(`${suite.origin("oidcweb")}/sign-in?error=oauth_account_exists`);
  const alert = page.getByRole("alert");
  await alert.waitFor();
  expect(await alert.textContent()).toContain("An account with this email address already exists. Sign in the usual way");
  expect(await alert.textContent()).toContain("My account");
  expect(new URL(page.url()).search).toBe("");
  const found = await look(page, "oidc-sign-in-error");

  // An unknown code: a general sentence, the code only as a reference.
  await page.goto(`${suite.origin("oidcweb")}/sign-in?error=oauth_brand_new_failure&next=%2Fsettings`);
  await alert.waitFor();
  expect(await alert.textContent()).toBe("Signing in through that provider did not work. Try again, or sign in another way (reference: oauth_brand_new_failure).");
  expect(new URL(page.url()).search).toBe("?next=%2Fsettings");

  // The password form still works below it.
  await page.getByLabel("Email").fill(EMAIL);
  await page.getByLabel("Password").fill(PW);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.getByRole("heading", { name: "Two-step verification" }).waitFor();
  expect(found).toEqual([]);
  expect(watch.problems).toEqual([]);
  await context.close();
}, 120_000);

test("2FA after the provider: the handed-over temp token is wiped from the address at once and the code step signs in", async () => {
  const login = await api("POST", "/auth/login", { email: EMAIL, password: PW });
  expect(login.body.requires_2fa).toBe(true);
  const temp = login.body.temp_token as string;
  const context = await browser.newContext();
  const { page, watch } = await watchedPage(context, suite.port);
  await page.goto(`${suite.origin("oidcweb")}/sign-in?step=2fa#temp_token=${encodeURIComponent(temp)}`);
  await page.getByRole("heading", { name: "Two-step verification" }).waitFor();
  // Gone from the address bar, and from the history entry (Back does not bring it back).
  expect(page.url()).toBe(`${suite.origin("oidcweb")}/sign-in`);
  expect(await page.evaluate("location.hash + location.search")).toBe("");
  const found = await look(page, "oidc-2fa-handover");
  const code = appCode(totpSecret, Date.now(), 1);
  noteSecret("totp code", code);
  await page.getByLabel("Code").fill(code);
  await page.getByRole("button", { name: "Verify" }).click();
  await page.waitForURL(/\/deals$/);
  await page.getByRole("navigation", { name: "Main" }).waitFor();
  expect(found).toEqual([]);
  expect(watch.problems).toEqual([]);
  await context.close();
}, 120_000);
