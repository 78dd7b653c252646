import { expect } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, type BrowserContext, type Page, chromium } from "playwright-core";
import { type Server, startServer } from "../../server";

/**
 * The CRM end-to-end test's world: `suite serve` from source on its own database, an organization
 * signed up through the API, Debian's Chromium signed in with its two cookies, and a page whose
 * console errors, failed requests, 4xx answers and requests to another host are recorded, but
 * for the answers a step expects (`expected`, each status once).
 */

const ROOT = join(import.meta.dir, "..", "..", "..");
const ARTIFACTS = join(ROOT, "test-artifacts", "crm");
const AXE = readFileSync(join(ROOT, "node_modules", "axe-core", "axe.min.js"), "utf8");
export const PASSWORD = "correct horse battery staple";
export const TENANT = "acme";

export interface World {
  dir: string;
  server: Server;
  browser: Browser;
  context: BrowserContext;
  page: Page;
  origin: string;
  /** The admin's access token, for setting up data through the API. */
  token: string;
  problems: string[];
  expected: number[];
  close: () => Promise<void>;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}

export async function crmWorld(): Promise<World> {
  const dir = mkdtempSync(join(tmpdir(), "suite-e2e-crm-"));
  const server = await startServer(join(dir, "suite.db"));
  const origin = `http://${TENANT}.localhost:${new URL(server.url).port}`;
  const r = await server.call("POST", "/api/v1/auth/signup", {
    body: { email: "owner@acme.test", password: PASSWORD, tenant_name: "Acme Inc", subdomain: TENANT, full_name: "Olive Owner" },
  });
  expect(r.status).toBe(201);
  const browser = await launchChromium();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  // Signed in as the sign-in screen would leave us (it has its own test): this host's two HttpOnly cookies.
  await context.addCookies([
    { name: "svc_session", value: r.body.access_token, url: origin, httpOnly: true, sameSite: "Lax" },
    { name: "svc_refresh", value: r.body.refresh_token, domain: `${TENANT}.localhost`, path: "/api/v1/auth", httpOnly: true, sameSite: "Strict" },
  ]);
  const page = await context.newPage();
  const problems: string[] = [];
  const expected: number[] = [];
  page.on("console", (m) => {
    if (m.type() !== "error") return;
    // Chromium logs every 4xx as "Failed to load resource": allowed only for a status a step expects.
    const status = /status of (\d{3})/.exec(m.text());
    const i = status ? expected.indexOf(Number(status[1])) : -1;
    if (i >= 0) expected.splice(i, 1);
    else problems.push(`console: ${m.text()}`);
  });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("requestfailed", (req) => {
    // A read overtaken by the next keystroke is aborted on purpose (the latest answer wins), and a
    // reload or page change aborts what was still loading.
    if (req.failure()?.errorText === "net::ERR_ABORTED" && req.method() === "GET" && req.url().startsWith(`${origin}/api/v1/`)) return;
    problems.push(`failed: ${req.method()} ${req.url()} ${req.failure()?.errorText}`);
  });
  page.on("request", (req) => {
    const u = new URL(req.url());
    if (u.protocol !== "data:" && u.origin !== origin) problems.push(`other host: ${req.url()}`);
  });
  page.on("response", (res) => {
    if (res.status() >= 400 && !expected.includes(res.status())) problems.push(`answer ${res.status()}: ${res.request().method()} ${res.url()}`);
  });
  mkdirSync(ARTIFACTS, { recursive: true });
  return {
    dir,
    server,
    browser,
    context,
    page,
    origin,
    token: r.body.access_token,
    problems,
    expected,
    async close() {
      await browser.close();
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** axe-core in the page (evaluated through the DevTools protocol, so the page's CSP stays on): no serious or critical violation. */
export async function axe(page: Page, name: string): Promise<void> {
  await page.evaluate(AXE);
  // A string, run in the page: this file is type-checked without the DOM's types.
  const found = (await page.evaluate(`axe.run(document, { resultTypes: ["violations"] }).then((r) =>
    r.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n) => n.target.join(" ")) })))`)) as { id: string; impact: string; targets: string[] }[];
  const serious = found.filter((v) => v.impact === "serious" || v.impact === "critical");
  expect({ screen: name, serious }).toEqual({ screen: name, serious: [] });
}

/** Screenshots at 1280 and 390 px (axe checked at both), then back to the desktop width. */
export async function look(page: Page, name: string): Promise<void> {
  await axe(page, `${name} @1280`);
  await page.screenshot({ path: join(ARTIFACTS, `${name}-1280.png`), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await axe(page, `${name} @390`);
  await page.screenshot({ path: join(ARTIFACTS, `${name}-390.png`), fullPage: true });
  await page.setViewportSize({ width: 1280, height: 900 });
}

/** Picks a record in a combobox by typing part of its name and clicking the match. */
export async function pick(page: Page, label: string, text: string, option: string): Promise<void> {
  await page.getByRole("combobox", { name: label }).fill(text);
  await page.getByRole("option", { name: new RegExp(option) }).first().click();
}
