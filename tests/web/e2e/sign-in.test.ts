import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { noteSecret } from "../../security/ledger";
import { type TestSmtp, startSmtp } from "../../mail/smtp-support";
import { type Suite, axe, ensureBinary, keyboardReach, launch, look, secretPassword, startSuite, watchedPage } from "./support";

// Sign-up on the base domain, sign-in (wrong password, rate limit, success), the session across
// a reload and two tabs, sign-out, and a magic link caught by a real SMTP server: in Chromium,
// against the built binary.
let dir: string;
let suite: Suite;
let smtp: TestSmtp;
let browser: Browser;
const PASSWORD = secretPassword("owner");

beforeAll(async () => {
  ensureBinary();
  dir = mkdtempSync(join(tmpdir(), "suite-web-"));
  smtp = await startSmtp();
  suite = await startSuite(dir, { SUITE_SMTP_URL: smtp.url });
  browser = await launch();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await suite?.stop();
  await smtp?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("a new organization", () => {
  test("signs up on the base domain and lands signed in on its own host; the session survives a reload and two tabs; sign out", async () => {
    const context = await browser.newContext();
    const { page, watch } = await watchedPage(context, suite.port);
    const found: string[] = [];

    await page.goto(suite.origin());
    await page.getByRole("heading", { name: "Create a workspace" }).waitFor();
    found.push(...(await look(page, "public-home")));

    // A 422 shows beside its field.
    await page.getByLabel("Organization name").fill("Acme Inc");
    await page.getByLabel("Workspace address").fill("acme");
    await page.getByLabel("Work email").fill("owner@acme.test");
    await page.getByLabel("Password").fill("short");
    await page.getByRole("button", { name: "Create workspace" }).click();
    await page.getByText("Some fields above need a change: each one says what.").waitFor();
    expect(await page.getByLabel("Password").getAttribute("aria-invalid")).toBe("true");
    found.push(...(await look(page, "signup-errors")));

    await page.getByLabel("Your name").fill("Olive Owner");
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Create workspace" }).click();
    await page.waitForURL(`${suite.origin("acme")}/deals`);
    await page.getByRole("navigation", { name: "Main" }).waitFor();
    expect(await page.getByText("owner@acme.test").isVisible()).toBe(true);
    // The handoff left no token in the address bar.
    expect(page.url()).not.toContain("#");
    found.push(...(await look(page, "deals-after-signup")));

    await page.reload();
    await page.getByRole("navigation", { name: "Main" }).waitFor();
    expect(new URL(page.url()).pathname).toBe("/deals");

    // A second tab shares the session; both refresh at once (the server's grace window).
    const second = await watchedPage(context, suite.port);
    await second.page.goto(`${suite.origin("acme")}/settings`);
    await second.page.getByRole("heading", { name: "My account" }).waitFor();
    const refreshes = await Promise.all(
      [page, second.page].map((p) => p.evaluate(() => fetch("/api/v1/auth/refresh", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }).then((r) => r.status))),
    );
    expect(refreshes).toEqual([200, 200]);
    await second.page.reload();
    await second.page.getByRole("heading", { name: "My account" }).waitFor();
    await page.getByRole("link", { name: "Team" }).click();
    await page.getByRole("heading", { name: "Team" }).waitFor();

    await page.getByRole("button", { name: "Sign out" }).first().click();
    await page.waitForURL(/\/sign-in/);
    await page.goto(`${suite.origin("acme")}/deals`);
    await page.waitForURL(`${suite.origin("acme")}/sign-in?next=%2Fdeals`);

    expect(found).toEqual([]);
    expect(watch.problems).toEqual([]);
    expect(second.watch.problems).toEqual([]);
    await context.close();
  }, 180_000);
});

describe("sign-in", () => {
  test("a wrong password is said plainly; the right one opens the page asked for", async () => {
    const context = await browser.newContext();
    const { page, watch } = await watchedPage(context, suite.port);
    await page.goto(`${suite.origin("acme")}/team`);
    await page.waitForURL(/\/sign-in\?next=%2Fteam/);
    const found = await look(page, "sign-in");

    await page.getByLabel("Email").fill("owner@acme.test");
    await page.getByLabel("Password").fill("not the password");
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.getByRole("alert").filter({ hasText: "Wrong email or password." }).waitFor();
    found.push(...(await look(page, "sign-in-wrong-password")));

    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.waitForURL(`${suite.origin("acme")}/team`);
    await page.getByRole("heading", { name: "Team" }).waitFor();
    expect(found).toEqual([]);
    expect(watch.problems).toEqual([]);
    await context.close();
  }, 180_000);

  test("on the base domain, the workspace is found from the email and the visitor lands on it", async () => {
    const context = await browser.newContext();
    const { page, watch } = await watchedPage(context, suite.port);
    await page.goto(`${suite.origin()}/sign-in`);
    await page.getByLabel("Email").fill("owner@acme.test");
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.waitForURL(`${suite.origin("acme")}/deals`);
    await page.getByRole("navigation", { name: "Main" }).waitFor();
    // No session cookie was left on the base domain's host.
    expect((await context.cookies(suite.origin())).filter((c) => c.domain === "localhost")).toEqual([]);
    expect(watch.problems).toEqual([]);
    await context.close();
  }, 180_000);

  test("on the base domain, an email of several workspaces is asked which one, then signs in there", async () => {
    const body = { email: "owner@acme.test", password: PASSWORD, tenant_name: "Beta", subdomain: "beta" };
    const r = await fetch(`http://127.0.0.1:${suite.port}/api/v1/auth/signup`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    expect(r.status).toBe(201);
    const context = await browser.newContext();
    const { page, watch } = await watchedPage(context, suite.port);
    await page.goto(`${suite.origin()}/sign-in`);
    await page.getByLabel("Email").fill("owner@acme.test");
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.getByRole("status").filter({ hasText: "several workspaces" }).waitFor();
    const found = await look(page, "sign-in-which-workspace");
    await page.getByLabel("Workspace (the name before the domain)").fill("beta");
    await page.getByRole("button", { name: "Go to this workspace" }).click();
    await page.waitForURL(`${suite.origin("beta")}/sign-in?email=owner%40acme.test`);
    expect(await page.getByLabel("Email").inputValue()).toBe("owner@acme.test");
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.waitForURL(`${suite.origin("beta")}/deals`);
    expect(await page.locator(".brand").textContent()).toBe("Beta");
    expect(found).toEqual([]);
    expect(watch.problems).toEqual([]);
    await context.close();
  }, 180_000);

  test("a magic link from the mail signs in; the token leaves the address bar", async () => {
    const context = await browser.newContext();
    const { page, watch } = await watchedPage(context, suite.port);
    await page.goto(`${suite.origin("acme")}/sign-in`);
    await page.getByLabel("Email").fill("owner@acme.test");
    const before = smtp.received.length;
    await page.getByRole("button", { name: "Email me a sign-in link" }).click();
    await page.getByRole("status").filter({ hasText: "sign-in link is on its way" }).waitFor();
    const [mail] = (await smtp.waitFor(before + 1, 30_000)).slice(before);
    const link = /https?:\/\/\S+magic-link#token=[^\s"<]+/.exec(mail!.text)![0];
    noteSecret("mailed link", link);
    expect(link.startsWith(`${suite.origin("acme")}/magic-link#token=`)).toBe(true);

    await page.goto(link);
    await page.waitForURL(`${suite.origin("acme")}/deals`);
    await page.getByRole("navigation", { name: "Main" }).waitFor();

    // Used once: the same link again explains itself.
    const other = await watchedPage(await browser.newContext(), suite.port);
    await other.page.goto(link);
    await other.page.getByRole("alert").filter({ hasText: "expired or was already used" }).waitFor();
    expect(other.page.url()).not.toContain("token=");
    const found = await look(other.page, "magic-link-used");
    expect(found).toEqual([]);
    expect(watch.problems).toEqual([]);
    expect(other.watch.problems).toEqual([]);
    await context.close();
  }, 180_000);

  test("too many wrong passwords: the wait is shown", async () => {
    const context = await browser.newContext();
    const { page, watch } = await watchedPage(context, suite.port);
    await page.goto(`${suite.origin("acme")}/sign-in`);
    await page.getByLabel("Email").fill("nobody-home@acme.test");
    for (let i = 0; i < 11; i++) {
      await page.getByLabel("Password").fill(`wrong-${i}`);
      await page.getByRole("button", { name: "Sign in", exact: true }).click();
      await page.getByRole("button", { name: "Sign in", exact: true }).and(page.locator(":enabled")).waitFor();
    }
    await page.getByRole("alert").filter({ hasText: /Too many attempts\. Try again in \d+ (minutes?|seconds?)\./ }).waitFor();
    expect(watch.problems).toEqual([]);
    await context.close();
  }, 180_000);
});

describe("the binary serves its embedded app", () => {
  test("the page with its CSP, and the hashed assets precompressed and immutable", async () => {
    const page = await fetch(`http://127.0.0.1:${suite.port}/deals`, { headers: { host: "acme.localhost", accept: "text/html" } });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(page.headers.get("cache-control")).toBe("no-cache");
    const html = await page.text();
    const assets = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    expect(assets.length).toBe(2);
    for (const path of assets) {
      for (const [accept, encoding] of [["br, gzip", "br"], ["gzip", "gzip"], ["identity", null]] as const) {
        const r = await fetch(`http://127.0.0.1:${suite.port}${path}`, { headers: { "accept-encoding": accept }, decompress: false } as RequestInit);
        expect(r.status).toBe(200);
        expect(r.headers.get("content-encoding")).toBe(encoding);
        expect(r.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
        await r.arrayBuffer();
      }
    }
    const api = await fetch(`http://127.0.0.1:${suite.port}/api/v1/nope`, { headers: { accept: "text/html" } });
    expect(api.status).toBe(404);
    expect(await api.json()).toEqual({ detail: "Not found.", code: "not_found" });
  });
});

describe("the checks themselves", () => {
  test("keyboard alone: Tab to each field, type, Enter signs in", async () => {
    const context = await browser.newContext();
    const { page, watch } = await watchedPage(context, suite.port);
    await page.goto(`${suite.origin("acme")}/sign-in`);
    await page.getByLabel("Email").waitFor();
    await page.keyboard.press("Tab");
    await page.keyboard.type("owner@acme.test");
    await page.keyboard.press("Tab");
    await page.keyboard.type(PASSWORD);
    await page.keyboard.press("Enter");
    await page.getByRole("navigation", { name: "Main" }).waitFor();
    // The skip link is the first stop, then the navigation, reachable and announced as current.
    await page.keyboard.press("Tab");
    expect(await page.evaluate("document.activeElement.textContent")).toBe("Skip to content");
    await page.keyboard.press("Tab");
    await page.keyboard.press("Tab");
    expect(await page.evaluate("document.activeElement.textContent")).toBe("Accounts");
    await page.keyboard.press("Enter");
    await page.waitForURL(`${suite.origin("acme")}/accounts`);
    expect(watch.problems).toEqual([]);
    await context.close();
  }, 180_000);

  test("the keyboard check reaches every control and would report one without a focus ring", async () => {
    const context = await browser.newContext();
    const { page } = await watchedPage(context, suite.port);
    await page.goto(`${suite.origin("acme")}/sign-in`);
    await page.getByLabel("Email").waitFor();
    expect(await keyboardReach(page, "sign-in")).toEqual([]);
    await page.evaluate("(() => { const b = document.createElement('button'); b.type = 'button'; b.textContent = 'No ring'; b.style.outline = 'none'; document.querySelector('form').append(b); })()");
    expect(await keyboardReach(page, "sign-in")).toEqual(["sign-in: button No ring has the focus without a visible ring"]);
    await context.close();
  }, 180_000);

  test("axe runs in the page and would report a violation (an unlabelled input)", async () => {
    const context = await browser.newContext();
    const { page } = await watchedPage(context, suite.port);
    await page.goto(`${suite.origin("acme")}/sign-in`);
    await page.getByLabel("Email").waitFor();
    expect(await axe(page)).toEqual([]);
    await page.evaluate("document.querySelector('form').append(document.createElement('input'))");
    expect((await axe(page)).some((v) => v.includes("label"))).toBe(true);
    await context.close();
  }, 180_000);
});
