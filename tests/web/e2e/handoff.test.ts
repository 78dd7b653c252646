/**
 * Login CSRF (issue 29.5), in Chromium against the built binary: a `#handoff=` link made by
 * someone else signs nobody in (only the tab that signed in on the base domain may hand its token
 * over), and a magic link this browser did not ask for says whose account it opened first.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { noteSecret } from "../../security/ledger";
import { type TestSmtp, startSmtp } from "../../mail/smtp-support";
import { type Suite, ensureBinary, launch, look, secretPassword, startSuite, watchedPage } from "./support";

let dir: string;
let suite: Suite;
let smtp: TestSmtp;
let browser: Browser;
const VICTIM = secretPassword("victim");
const ATTACKER = secretPassword("attacker");

beforeAll(async () => {
  ensureBinary();
  dir = mkdtempSync(join(tmpdir(), "suite-web-handoff-"));
  smtp = await startSmtp();
  suite = await startSuite(dir, { SUITE_SMTP_URL: smtp.url });
  browser = await launch();
  for (const [sub, email, password, name] of [
    ["acme", "owner@acme.test", VICTIM, "Acme Inc"],
    ["evil", "mallory@evil.test", ATTACKER, "Evil Corp"],
  ]) {
    const r = await suite.call("POST", "/api/v1/auth/signup", { body: { email, password, tenant_name: name, subdomain: sub } });
    expect(r.status).toBe(201);
  }
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await suite?.stop();
  await smtp?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The session this page's host holds: 200 with the account, or 401. */
const meOf = (page: Page) =>
  page.evaluate(() => fetch("/api/v1/auth/me").then(async (r) => ({ status: r.status, email: r.status === 200 ? ((await r.json()) as { user: { email: string } }).user.email : null })));

describe("the base-domain handoff", () => {
  test("a #handoff link made by someone else signs nobody in and leaves the token unspent", async () => {
    const login = await suite.call("POST", "/api/v1/auth/login", { body: { email: "mallory@evil.test", password: ATTACKER } });
    expect(login.status).toBe(200);
    const token = login.body.refresh_token as string;
    const context = await browser.newContext();
    const { page, watch } = await watchedPage(context, suite.port);
    for (const fragment of [`handoff=${encodeURIComponent(token)}`, `handoff=${encodeURIComponent(token)}&nonce=0123456789abcdef`]) {
      await page.goto(`${suite.origin("evil")}/welcome?next=%2Fdeals#${fragment}`);
      await page.waitForURL(/\/sign-in/);
      expect(page.url()).not.toContain("handoff");
      expect(await meOf(page)).toEqual({ status: 401, email: null });
    }
    // Never spent: the attacker's own token still refreshes.
    expect((await suite.call("POST", "/api/v1/auth/refresh", { body: { refresh_token: token } })).status).toBe(200);
    expect(watch.problems).toEqual([]);
    await context.close();
  }, 180_000);

  test("signing in on the base domain still lands signed in on the workspace, with no token left in the address bar", async () => {
    const context = await browser.newContext();
    const { page, watch } = await watchedPage(context, suite.port);
    await page.goto(`${suite.origin()}/sign-in`);
    await page.getByLabel("Email").fill("owner@acme.test");
    await page.getByLabel("Password").fill(VICTIM);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.waitForURL(`${suite.origin("acme")}/deals`);
    await page.getByRole("navigation", { name: "Main" }).waitFor();
    expect(page.url()).not.toContain("#");
    expect(await meOf(page)).toEqual({ status: 200, email: "owner@acme.test" });
    // Nothing of the handoff is left in either origin's storage.
    expect(await page.evaluate(() => Object.keys(sessionStorage))).toEqual([]);
    await page.goto(`${suite.origin()}/`);
    expect(await page.evaluate(() => Object.keys(sessionStorage))).toEqual([]);
    expect(watch.problems).toEqual([]);
    await context.close();
  }, 180_000);
});

describe("a magic link this browser did not ask for", () => {
  async function attackersLink(): Promise<string> {
    const before = smtp.received.length;
    expect((await suite.call("POST", "/api/v1/auth/magic-link", { body: { email: "mallory@evil.test" }, tenant: "evil" })).status).toBe(202);
    const [mail] = (await smtp.waitFor(before + 1, 30_000)).slice(before);
    const link = /https?:\/\/\S+magic-link#token=[^\s"<]+/.exec(mail!.text)![0];
    noteSecret("mailed link", link);
    return link;
  }

  test("says whose account it opened; “This is not me” signs out", async () => {
    const link = await attackersLink();
    const context = await browser.newContext();
    const { page, watch } = await watchedPage(context, suite.port);
    await page.goto(link);
    await page.getByText("You are signed in as mallory@evil.test in Evil Corp.").waitFor();
    expect(page.url()).not.toContain("token=");
    const found = await look(page, "magic-link-confirm-account");
    expect(found).toEqual([]);
    await page.getByRole("button", { name: "This is not me: sign out" }).click();
    await page.waitForURL(/\/sign-in/);
    expect(await meOf(page)).toEqual({ status: 401, email: null });
    expect(watch.problems).toEqual([]);
    await context.close();
  }, 180_000);

  test("Continue goes on into the workspace", async () => {
    const link = await attackersLink();
    const context = await browser.newContext();
    const { page, watch } = await watchedPage(context, suite.port);
    await page.goto(link);
    await page.getByRole("button", { name: "Continue" }).click();
    await page.waitForURL(`${suite.origin("evil")}/deals`);
    await page.getByRole("navigation", { name: "Main" }).waitFor();
    expect(watch.problems).toEqual([]);
    await context.close();
  }, 180_000);
});
