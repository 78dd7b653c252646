/**
 * The operator console (issue 34, item 4) in Chromium against the built binary: an operator made
 * with `suite operator create` signs in at /operator on the base domain with password and TOTP
 * code, reads the overview, finds an organization, disables it through the step-up dialog,
 * deletes another (the subdomain typed again, its export downloaded once), and reads the mail queue, jobs, server and audit screens, makes, downloads, deletes and schedules a backup; each looked at at 1280 and 390 px.
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Secret, TOTP } from "otpauth";
import type { Browser } from "playwright-core";
import { BINARY, type Suite, ensureBinary, launch, look, secretPassword, startSuite, waitUntil, watchedPage } from "./support";

const STEP = 90_000;
let dir: string;
let suite: Suite;
let browser: Browser;
let secret = "";
const OPS_PW = secretPassword("operator");
const ADMIN_PW = secretPassword("admin");

beforeAll(async () => {
  ensureBinary();
  dir = mkdtempSync(join(tmpdir(), "suite-web-operator-"));
  suite = await startSuite(dir);
  browser = await launch();
  const p = Bun.spawn([BINARY, "operator", "create", "--email", "ops@server.test"], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", SUITE_DB: suite.db, SUITE_NEW_PASSWORD: OPS_PW },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  expect({ code, err }).toEqual({ code: 0, err: "" });
  secret = /secret: ([A-Z2-7]+)/.exec(out)![1]!;
  for (const [sub, name] of [["acme", "Acme Rockets"], ["globex", "Globex"]]) {
    const r = await suite.call("POST", "/api/v1/auth/signup", { body: { email: `admin@${sub}.test`, password: ADMIN_PW, tenant_name: name, subdomain: sub } });
    expect(r.status).toBe(201);
  }
}, STEP * 3);
afterAll(async () => {
  await browser?.close();
  await suite?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const code = () => new TOTP({ secret: Secret.fromBase32(secret), algorithm: "SHA1", digits: 6, period: 30 }).generate();

test("sign in with the TOTP step, overview, organizations with step-up, mail, jobs, server, audit", async () => {
  const context = await browser.newContext();
  const { page, watch } = await watchedPage(context, suite.port);
  const found: string[] = [];
  await page.goto(`${suite.origin()}/operator`);
  await page.getByRole("heading", { name: "Operator console" }).waitFor();
  found.push(...(await look(page, "operator-sign-in")));
  await page.getByLabel("Email").fill("ops@server.test");
  await page.getByLabel("Password").fill("a wrong password");
  await page.getByRole("button", { name: "Continue" }).click();
  await page.getByRole("alert").getByText("Incorrect email or password.").waitFor();
  await page.getByLabel("Password").fill(OPS_PW);
  await page.getByRole("button", { name: "Continue" }).click();
  await page.getByLabel("Code from your authenticator app").waitFor();
  found.push(...(await look(page, "operator-code")));
  await page.getByLabel("Code from your authenticator app").fill(code());
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.getByRole("heading", { name: "Overview" }).waitFor();
  expect(await page.locator(".op-stats li").first().textContent()).toBe("2 organizations");
  await page.locator(".op-chart svg").first().waitFor();
  found.push(...(await look(page, "operator-overview")));
  // The cookie is the console's own, host-only, on the console's path.
  const cookies = await context.cookies(suite.origin());
  expect(cookies.map((c) => c.name)).not.toContain("svc_session");
  const op = (await context.cookies(`${suite.origin()}/api/v1/operator/overview`)).find((c) => c.name === "svc_operator")!;
  expect({ httpOnly: op.httpOnly, sameSite: op.sameSite, path: op.path, domain: op.domain }).toEqual({ httpOnly: true, sameSite: "Strict", path: "/api/v1/operator", domain: "localhost" });

  // At 390 px the console's navigation folds behind a Menu button, as the organizations' app does.
  await page.setViewportSize({ width: 390, height: 844 });
  const menu = page.getByRole("button", { name: "Menu" });
  const consoleNav = page.getByRole("navigation", { name: "Console" });
  expect(await consoleNav.getByRole("link", { name: "Organizations" }).isVisible()).toBe(false);
  await menu.click();
  await consoleNav.getByRole("link", { name: "Organizations" }).click();
  await page.getByRole("heading", { name: "Organizations" }).waitFor();
  await page.locator('.menu-button[aria-expanded="false"]').waitFor({ timeout: 2_000 });
  await page.setViewportSize({ width: 1280, height: 800 });
  expect(await menu.isVisible()).toBe(false);
  await page.getByLabel("Search by name or subdomain").fill("rocket");
  await waitUntil(async () => (await page.locator("tbody tr").count()) === 1);
  found.push(...(await look(page, "operator-organizations")));
  // The sign-in's proof is older than 10 minutes: the console asks for the password again.
  const db = new Database(suite.db);
  db.run("UPDATE operator_sessions SET proven_at = proven_at - 11 * 60000");
  db.close();
  await page.getByRole("button", { name: "Disable" }).click();
  await page.getByRole("dialog", { name: "Confirm your password" }).waitFor();
  found.push(...(await look(page, "operator-step-up")));
  await page.getByRole("dialog").getByLabel("Password").fill(OPS_PW);
  await page.getByRole("dialog").getByRole("button", { name: "Confirm" }).click();
  await page.getByText("acme is disabled", { exact: false }).waitFor();
  await page.getByRole("button", { name: "Enable" }).waitFor();
  expect((await suite.call("POST", "/api/v1/auth/login", { body: { email: "admin@acme.test", password: ADMIN_PW }, tenant: "acme" })).status).toBe(403);

  // Deleting globex: its subdomain typed again, then the export's link, once, when the rows are gone.
  await page.getByLabel("Search by name or subdomain").fill("globex");
  await waitUntil(async () => (await page.locator("tbody tr").count()) === 1 && (await page.locator("tbody").textContent())!.includes("Globex"));
  await page.getByRole("button", { name: "Delete", exact: true }).click();
  const dialog = page.getByRole("dialog", { name: "Delete Globex?" });
  await dialog.waitFor();
  expect(await dialog.getByRole("button", { name: "Delete for good" }).isDisabled()).toBe(true);
  await dialog.getByLabel("Type globex to confirm").fill("globex");
  found.push(...(await look(page, "operator-delete")));
  await dialog.getByRole("button", { name: "Delete for good" }).click();
  const link = page.getByRole("link", { name: "Download its final export" });
  await link.waitFor({ timeout: 30_000 });
  found.push(...(await look(page, "operator-deleted")));
  const [download] = await Promise.all([page.waitForEvent("download"), link.click()]);
  expect(download.suggestedFilename()).toBe("globex-export.tar");
  const tar = await Bun.file((await download.path())!).bytes();
  expect(new TextDecoder().decode(tar.subarray(0, 30))).toContain("globex/globex-");
  await page.getByRole("dialog").getByRole("button", { name: "Close" }).click();
  expect((await suite.call("POST", "/api/v1/auth/login", { body: { email: "admin@globex.test", password: ADMIN_PW }, tenant: "globex" })).status).not.toBe(200);

  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Mail queue" }).click();
  await page.getByRole("heading", { name: "Mail queue" }).waitFor();
  await page.locator("tbody tr").first().waitFor();
  expect(await page.locator("tbody").textContent()).toContain("a•••@acme.test");
  expect(await page.locator("tbody").textContent()).not.toContain("admin@acme.test");
  await page.getByLabel("Send a test mail to").fill("not an address");
  await page.getByRole("button", { name: "Send a test mail" }).click();
  await page.getByLabel("Send a test mail to").fill("ops@server.test");
  await page.getByRole("button", { name: "Send a test mail" }).click();
  await page.getByText("A test mail to ops@server.test is in the queue.", { exact: false }).waitFor();
  await waitUntil(async () => (await page.locator("tbody").textContent())!.includes("Test mail from Workspace Suite"));
  found.push(...(await look(page, "operator-mail")));
  await page.getByRole("button", { name: "Send now" }).first().click();
  await page.getByText("The mail will be sent now.").waitFor();

  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Jobs" }).click();
  await page.getByText("No imports or exports yet.").waitFor();
  found.push(...(await look(page, "operator-jobs")));
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Server" }).click();
  await page.getByRole("heading", { name: "Settings in effect" }).waitFor();
  expect(await page.locator("main").textContent()).toContain("SUITE_BASE_DOMAIN");
  found.push(...(await look(page, "operator-server")));
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Audit" }).click();
  await page.getByText("organization.disabled").waitFor();
  await page.getByText("tenant.deleted", { exact: true }).waitFor();
  found.push(...(await look(page, "operator-audit")));

  // Backups: made now in the background, downloaded through the step-up dialog, deleted, scheduled.
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Backups" }).click();
  await page.getByText("No backups in the folder.", { exact: false }).waitFor();
  found.push(...(await look(page, "operator-backups-empty")));
  await page.getByRole("button", { name: "Back up now" }).click();
  await page.getByText("The last backup,", { exact: false }).waitFor({ timeout: 60_000 });
  expect(await page.locator("tbody tr").count()).toBe(1);
  found.push(...(await look(page, "operator-backups")));
  const aged = new Database(suite.db);
  aged.run("UPDATE operator_sessions SET proven_at = proven_at - 11 * 60000");
  aged.close();
  await page.getByRole("button", { name: "Download", exact: true }).click();
  await page.getByRole("dialog", { name: "Confirm your password" }).getByLabel("Password").fill(OPS_PW);
  const [backup] = await Promise.all([page.waitForEvent("download"), page.getByRole("dialog").getByRole("button", { name: "Confirm" }).click()]);
  expect(backup.suggestedFilename()).toMatch(/^suite-\d{4}-\d{2}-\d{2}T[\d-]+\.\d{3}Z\.db$/);
  expect(new TextDecoder().decode((await Bun.file((await backup.path())!).bytes()).subarray(0, 15))).toBe("SQLite format 3");
  await page.getByRole("button", { name: "Delete", exact: true }).click();
  await page.getByRole("dialog", { name: "Delete this backup?" }).getByRole("button", { name: "Delete backup" }).click();
  await page.getByText("The backup was deleted.").waitFor();
  await page.getByText("No backups in the folder.", { exact: false }).waitFor();
  await page.getByLabel("Make a backup every day").check();
  await page.getByLabel("At (UTC)").fill("04:15");
  await page.getByLabel("Backups to keep").fill("3");
  await page.getByRole("button", { name: "Save the schedule" }).click();
  await page.getByText("Backups will be made daily at 04:15 UTC, keeping the newest 3.").waitFor();
  // Saved with no backup since today's 04:15 (or yesterday's): the server makes one now, and the page follows it.
  await waitUntil(async () => (await page.locator("tbody tr").count()) === 1, 60_000);
  await page.getByRole("button", { name: "Back up now" }).waitFor();
  found.push(...(await look(page, "operator-backups-schedule")));
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Audit" }).click();
  await page.getByText("backup.schedule_changed", { exact: true }).waitFor();
  expect(await page.locator("main").textContent()).toContain("backup.downloaded");
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Overview" }).click();
  await page.getByRole("heading", { name: "Sign-ins and failures" }).waitFor();
  expect(await page.locator(".op-hours figcaption").last().textContent()).toMatch(/refused for a wrong password or code/);
  found.push(...(await look(page, "operator-overview-hours")));
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Your account" }).click();
  await page.getByRole("heading", { name: "Where you are signed in" }).waitFor();
  expect(await page.locator("tbody tr").count()).toBe(1);
  expect(await page.getByRole("button", { name: "No other sessions" }).isDisabled()).toBe(true);
  expect(await page.locator(".op-codes").textContent()).toContain("You have 10 left.");
  found.push(...(await look(page, "operator-account")));
  await page.getByRole("button", { name: "Make new backup codes" }).click();
  await page.getByText("Your new backup codes.", { exact: false }).waitFor();
  expect(await page.locator(".op-code-list li").count()).toBe(10);
  found.push(...(await look(page, "operator-account-codes")));
  await page.getByRole("button", { name: "I have saved them" }).click();

  await page.getByRole("button", { name: "Sign out", exact: true }).click();
  await page.getByRole("heading", { name: "Operator console" }).waitFor();
  expect(found).toEqual([]);
  expect(watch.problems).toEqual([]);
  await context.close();
}, STEP * 3);

test("the console is not on an organization's address: its page is the organization's app, its API 404", async () => {
  expect((await suite.call("GET", "/api/v1/operator/overview", { tenant: "globex" })).status).toBe(404);
  const context = await browser.newContext();
  const { page, watch } = await watchedPage(context, suite.port);
  await page.goto(`${suite.origin("globex")}/operator`);
  // An organization's host has no /operator screen: the app sends a visitor to its sign-in.
  await page.waitForURL(/\/sign-in/);
  expect(await page.getByRole("heading", { name: "Operator console" }).count()).toBe(0);
  expect(watch.problems).toEqual([]);
  await context.close();
}, STEP);
