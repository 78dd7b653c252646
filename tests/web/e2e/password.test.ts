import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { type TestSmtp, startSmtp } from "../../mail/smtp-support";
import { noteSecret } from "../../security/ledger";
import { type Suite, type Watch, ensureBinary, launch, look, secretPassword, startSuite, watchedPage } from "./support";

// Issue 16, items 1 to 3 in Chromium against the built binary, mail caught by a real SMTP server:
// signup → the verification link → the banner gone; forgot → reset → old sessions gone → sign in
// with the new password; change password in My account.
let dir: string;
let suite: Suite;
let smtp: TestSmtp;
let browser: Browser;
let password = secretPassword("pw-owner");
const EMAIL = "pat@pwco.test";

beforeAll(async () => {
  ensureBinary();
  dir = mkdtempSync(join(tmpdir(), "suite-web-pw-"));
  smtp = await startSmtp();
  suite = await startSuite(dir, { SUITE_SMTP_URL: smtp.url });
  browser = await launch();
  const body = { email: EMAIL, password, tenant_name: "Pw Co", subdomain: "pwco", full_name: "Pat Password" };
  expect((await suite.call("POST", "/api/v1/auth/signup", { body })).status).toBe(201);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await suite?.stop();
  await smtp?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The newest mailed link to `path`, waiting for it to arrive. */
async function mailedLink(path: string): Promise<string> {
  const pattern = new RegExp(`https?://\\S+${path}#token=[^\\s"<]+`);
  for (let i = 0; i < 500; i++) {
    const found = smtp.received.map((m) => pattern.exec(m.text)?.[0]).filter((l): l is string => !!l);
    if (found.length) {
      const link = found[found.length - 1]!;
      noteSecret("mailed link", link);
      return link;
    }
    await Bun.sleep(20);
  }
  throw new Error(`no mail with a ${path} link`);
}

async function signIn(pw: string): Promise<{ page: Page; watch: Watch }> {
  const w = await watchedPage(await browser.newContext(), suite.port);
  await w.page.goto(`${suite.origin("pwco")}/sign-in`);
  await w.page.getByLabel("Email").fill(EMAIL);
  await w.page.getByLabel("Password").fill(pw);
  await w.page.getByRole("button", { name: "Sign in", exact: true }).click();
  await w.page.waitForURL(`${suite.origin("pwco")}/deals`);
  await w.page.getByRole("navigation", { name: "Main" }).waitFor();
  return w;
}

test("signup mails a verification link; the banner shows until it is opened", async () => {
  const a = await signIn(password);
  const banner = a.page.getByRole("status").filter({ hasText: "Please confirm your email address" });
  await banner.waitFor();
  const found = await look(a.page, "verify-banner");
  const link = await mailedLink("/verify-email");
  expect(link.startsWith(`${suite.origin("pwco")}/verify-email#token=`)).toBe(true);

  await a.page.goto(link);
  await a.page.getByText(`Thank you: ${EMAIL} is confirmed.`).waitFor();
  expect(a.page.url()).not.toContain("token=");
  found.push(...(await look(a.page, "verify-email-done")));
  await a.page.getByRole("link", { name: "Go to your workspace" }).click();
  await a.page.getByRole("navigation", { name: "Main" }).waitFor();
  await a.page.getByRole("heading", { name: "Deals", level: 1 }).waitFor();
  expect(await banner.count()).toBe(0);
  expect(found).toEqual([]);
  expect(a.watch.problems).toEqual([]);
}, 60_000);

test("forgot password → the mailed link → a new password; every old session ends; sign in with the new one", async () => {
  const old = await signIn(password);

  const w = await watchedPage(await browser.newContext(), suite.port);
  await w.page.goto(`${suite.origin("pwco")}/sign-in`);
  await w.page.getByRole("link", { name: "Forgot your password?" }).click();
  await w.page.getByRole("heading", { name: "Forgot your password?" }).waitFor();
  const found = await look(w.page, "forgot-password");
  await w.page.getByLabel("Email").fill(EMAIL);
  await w.page.getByRole("button", { name: "Send me a link" }).click();
  await w.page.getByRole("status").filter({ hasText: "a link to choose a new password is on its way" }).waitFor();
  const link = await mailedLink("/reset-password");
  expect(link.startsWith(`${suite.origin("pwco")}/reset-password#token=`)).toBe(true);

  await w.page.goto(link);
  await w.page.getByRole("heading", { name: "Choose a new password" }).waitFor();
  expect(w.page.url()).not.toContain("token=");
  found.push(...(await look(w.page, "reset-password")));
  const fresh = secretPassword("pw-reset");
  await w.page.getByLabel("New password").fill(fresh);
  await w.page.getByRole("button", { name: "Set my new password" }).click();
  await w.page.getByRole("heading", { name: "Password changed" }).waitFor();

  // The old session is gone: its next request sends it to sign-in.
  await old.page.reload();
  await old.page.waitForURL(/\/sign-in/);

  // The same link again explains itself.
  const again = await watchedPage(await browser.newContext(), suite.port);
  await again.page.goto(link);
  await again.page.getByLabel("New password").fill(secretPassword("pw-again"));
  await again.page.getByRole("button", { name: "Set my new password" }).click();
  await again.page.getByRole("alert").filter({ hasText: "expired or was already used" }).waitFor();

  password = fresh;
  const back = await signIn(password);
  expect(found).toEqual([]);
  for (const x of [old, w, again, back]) expect(x.watch.problems).toEqual([]);
}, 90_000);

test("change password in My account: a wrong current one is refused; the new one signs in", async () => {
  const a = await signIn(password);
  const other = await signIn(password);
  await a.page.goto(`${suite.origin("pwco")}/settings`);
  await a.page.getByRole("heading", { name: "Password" }).waitFor();
  const next = secretPassword("pw-changed");
  await a.page.getByLabel("Current password").fill(secretPassword("pw-wrong"));
  await a.page.getByLabel("New password").fill(next);
  await a.page.getByRole("button", { name: "Change password" }).click();
  await a.page.getByText("This is not your current password.").waitFor();
  const found = await look(a.page, "change-password-error");

  await a.page.getByLabel("Current password").fill(password);
  await a.page.getByRole("button", { name: "Change password" }).click();
  await a.page.getByText(/Password changed\. \d+ other sessions? signed out\./).waitFor();
  // This session stays; the other one ends.
  await a.page.reload();
  await a.page.getByRole("heading", { name: "My account", level: 1 }).waitFor();
  await other.page.reload();
  await other.page.waitForURL(/\/sign-in/);

  password = next;
  await signIn(password);
  expect(found).toEqual([]);
  expect(a.watch.problems).toEqual([]);
}, 90_000);
