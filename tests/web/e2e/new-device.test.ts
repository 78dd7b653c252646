import { Database } from "bun:sqlite";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { type ReceivedMail, type TestSmtp, startSmtp } from "../../mail/smtp-support";
import { noteSecret } from "../../security/ledger";
import { type Suite, ensureBinary, launch, look, secretPassword, startSuite, watchedPage } from "./support";

// Issue 33.2 in Chromium against the built binary, mail caught by a real SMTP server: a sign-in
// from a new browser mails the account; the same browser again does not; the mail's
// "this wasn't me" link, opened anywhere, ends that sign-in (and later ones) and mails a reset link.
let dir: string;
let suite: Suite;
let smtp: TestSmtp;
let browser: Browser;
const PASSWORD = secretPassword("nd-owner");
const EMAIL = "nia@ndco.test";

beforeAll(async () => {
  ensureBinary();
  dir = mkdtempSync(join(tmpdir(), "suite-web-nd-"));
  smtp = await startSmtp();
  suite = await startSuite(dir, { SUITE_SMTP_URL: smtp.url });
  browser = await launch();
  const body = { email: EMAIL, password: PASSWORD, tenant_name: "Nd Co", subdomain: "ndco", full_name: "Nia Device" };
  expect((await suite.call("POST", "/api/v1/auth/signup", { body })).status).toBe(201);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await suite?.stop();
  await smtp?.close();
  rmSync(dir, { recursive: true, force: true });
});

const noticeMails = (): ReceivedMail[] => smtp.received.filter((m) => m.subject === "New sign-in to Nd Co");

async function waitForMails(pick: () => ReceivedMail[], n: number): Promise<ReceivedMail[]> {
  for (let i = 0; i < 1500; i++) {
    const found = pick();
    if (found.length >= n) return found;
    await Bun.sleep(20);
  }
  throw new Error(`fewer than ${n} mails arrived`);
}

/** New-device mails written to the outbox so far (sent or not): a sign-in commits its mail before it answers. */
function noticeRows(): number {
  const d = new Database(suite.db, { readonly: true });
  try {
    return (d.query("SELECT count(*) AS n FROM mail_outbox WHERE kind = 'new_device'").get() as { n: number }).n;
  } finally {
    d.close();
  }
}

async function signIn(context: BrowserContext) {
  const w = await watchedPage(context, suite.port);
  await w.page.goto(`${suite.origin("ndco")}/sign-in`);
  await w.page.getByLabel("Email").fill(EMAIL);
  await w.page.getByLabel("Password").fill(PASSWORD);
  await w.page.getByRole("button", { name: "Sign in", exact: true }).click();
  await w.page.waitForURL(`${suite.origin("ndco")}/deals`);
  await w.page.getByRole("navigation", { name: "Main" }).waitFor();
  return w;
}

/** GET /auth/me from a page of the browser, with its cookies: 200 while its session lives. */
const me = async (page: Page) => page.evaluate(async () => (await fetch("/api/v1/auth/me")).status);

test("a new browser's sign-in is mailed; the same browser again is not; \"this wasn't me\" ends that sign-in and mails a reset link", async () => {
  // The owner's own browser: its first sign-in is new (signup was made from a script).
  const own = await browser.newContext();
  const mine = await signIn(own);
  const [first] = await waitForMails(noticeMails, 1);
  expect(first!.to).toEqual([EMAIL]);
  expect(first!.text).toContain("Browser and system: Chrome on Linux.");
  expect(first!.text).toContain("IP address: 127.0.0.1.");
  expect(first!.text).toContain("Signed in with: password.");
  // Signed out and in again in the same browser: its device cookie stays, no mail.
  await mine.page.getByRole("button", { name: "Sign out" }).click();
  await mine.page.waitForURL(/\/sign-in/);
  const again = await signIn(own);
  expect(noticeRows()).toBe(1);

  // Someone else, with the password, in another browser.
  const intruder = await signIn(await browser.newContext());
  const mails = await waitForMails(noticeMails, 2);
  const link = /https?:\/\/\S+\/not-me#token=[^\s"<]+/.exec(mails[1]!.text)![0];
  noteSecret("mailed link", link);
  expect(link.startsWith(`${suite.origin("ndco")}/not-me#token=`)).toBe(true);
  expect(await me(intruder.page)).toBe(200);

  // The owner opens the link (in their own browser): one sentence, one button.
  const w = await watchedPage(own, suite.port);
  await w.page.goto(link);
  await w.page.getByRole("heading", { name: "Was this not you?" }).waitFor();
  expect(w.page.url()).not.toContain("token=");
  const found = await look(w.page, "not-me");
  await w.page.getByRole("button", { name: "Sign that device out" }).click();
  await w.page.getByRole("status").filter({ hasText: "That sign-in has been signed out" }).waitFor();
  found.push(...(await look(w.page, "not-me-done")));
  expect(found).toEqual([]);
  expect(w.watch.problems).toEqual([]);

  // The intruder's session is over; the owner's, started before it, is not.
  expect(await me(intruder.page)).toBe(401);
  expect(await me(again.page)).toBe(200);
  const reset = await waitForMails(() => smtp.received.filter((m) => /\/reset-password#token=/.test(m.text)), 1);
  expect(reset[0]!.to).toEqual([EMAIL]);
  const resetLink = /https?:\/\/\S+#token=[^\s"<]+/.exec(reset[0]!.text)![0];
  noteSecret("mailed link", resetLink);

  // The link works once.
  await w.page.goto(link);
  await w.page.getByRole("button", { name: "Sign that device out" }).click();
  await w.page.getByRole("alert").filter({ hasText: "expired or was already used" }).waitFor();

  // The reset link: a common password is refused with its sentence at the field (issue 33.3).
  await w.page.goto(resetLink);
  await w.page.getByRole("heading", { name: "Choose a new password" }).waitFor();
  await w.page.getByLabel("New password").fill("Password123");
  await w.page.getByRole("button", { name: "Set my new password" }).click();
  await w.page.getByText("This password is on a list of common or leaked passwords").waitFor();
  expect(await w.page.getByLabel("New password").getAttribute("aria-invalid")).toBe("true");
  expect(await look(w.page, "reset-too-common")).toEqual([]);
  const fresh = secretPassword("nd-fresh");
  await w.page.getByLabel("New password").fill(fresh);
  await w.page.getByRole("button", { name: "Set my new password" }).click();
  await w.page.getByRole("status").filter({ hasText: "Your password has been changed" }).waitFor();
  expect(w.watch.problems).toEqual([]);
}, 120_000);
