import { expect } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { type Suite, ensureBinary, launch, look as lookBoth, startSuite } from "./support";

/**
 * The CRM end-to-end test's world, on the shared kit (./support.ts): the built binary on its own
 * database, an organization signed up through the API, Debian's Chromium signed in with its two
 * cookies, and a page whose console errors, failed requests, 4xx answers and requests to another
 * host are recorded, but for the answers a step expects (`expected`, each status once).
 */

export const PASSWORD = "correct horse battery staple";
export const TENANT = "acme";

export interface World {
  dir: string;
  server: Suite;
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

/** `env`: the server's settings besides the defaults (the webhooks test lets it reach a loopback receiver). */
export async function crmWorld(env: Record<string, string> = {}): Promise<World> {
  ensureBinary();
  const dir = mkdtempSync(join(tmpdir(), "suite-e2e-crm-"));
  const server = await startSuite(dir, env);
  const origin = server.origin(TENANT);
  const r = await server.call("POST", "/api/v1/auth/signup", {
    body: { email: "owner@acme.test", password: PASSWORD, tenant_name: "Acme Inc", subdomain: TENANT, full_name: "Olive Owner" },
  });
  expect(r.status).toBe(201);
  // playwright-core under Bun now and then loses a request object on the first load of a page that
  // starts several API calls at once ("Cannot find parent object request@… to create response@…",
  // 2 runs in 7 on a loaded machine, always on this first navigation), and the connection is
  // unusable after it. The world is only handed over once a first load went through; else a new browser.
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  for (let attempt = 1; ; attempt++) {
    browser = await launch();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    // Navigations wait on their load event; a loaded 2-core machine can take seconds for one.
    context.setDefaultNavigationTimeout(45_000);
    context.setDefaultTimeout(30_000);
    // Signed in as the sign-in screen would leave us (it has its own test): this host's two HttpOnly cookies.
    await context.addCookies([
      { name: "svc_session", value: r.body.access_token, url: origin, httpOnly: true, sameSite: "Lax" },
      { name: "svc_refresh", value: r.body.refresh_token, domain: `${TENANT}.localhost`, path: "/api/v1/auth", httpOnly: true, sameSite: "Strict" },
    ]);
    page = await context.newPage();
    try {
      await page.goto(`${origin}/deals`);
      await page.getByText("No deals yet").waitFor();
      break;
    } catch (e) {
      await browser.close().catch(() => {});
      if (attempt >= 3 || !/Cannot find parent object|was not bound in the connection/.test(String(e))) throw e;
      console.warn(`crm-kit: a new browser after playwright lost track of the first load (${String(e).split("\n")[0]})`);
    }
  }
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

/** Screenshots at 1280 and 390 px into test-artifacts/web/crm-*, axe at both: no serious or critical violation. */
export async function look(page: Page, name: string): Promise<void> {
  expect({ screen: name, serious: await lookBoth(page, `crm-${name}`) }).toEqual({ screen: name, serious: [] });
}

/** Picks a record in a combobox by typing part of its name and clicking the match. */
export async function pick(page: Page, label: string, text: string, option: string): Promise<void> {
  await page.getByRole("combobox", { name: label }).fill(text);
  await page.getByRole("option", { name: new RegExp(option) }).first().click();
}
