import { openMailOfFile } from "../../support/outbox";
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { appCode } from "../../auth/two-factor/rfc6238";
import { noteSecret } from "../../security/ledger";
import { type Suite, ensureBinary, launch, look, secretPassword, startSuite, waitUntil, watchedPage } from "./support";

// Members and the organization (issue 16): an admin changes a member's role, meets the last-admin
// rule, removes a member (whose open session is thrown back to sign-in) handing their deals to
// another, resets a second factor and lifts a lockout; renames the organization and turns the CRM
// off and on; and a server with closed signup shows no signup form.
let dir: string;
let suite: Suite;
let closed: Suite;
let browser: Browser;
const ADMIN_PW = secretPassword("members-admin");
const MEMBER_PW = secretPassword("members-member");
const SUB = "crew";

async function api(method: string, path: string, body?: unknown, token?: string) {
  const headers: Record<string, string> = { "content-type": "application/json", "x-tenant": SUB };
  if (token) headers.authorization = `Bearer ${token}`;
  const r = await fetch(`http://127.0.0.1:${suite.port}/api/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  const json = text ? JSON.parse(text) : null;
  for (const k of ["access_token", "refresh_token", "temp_token"]) if (json?.[k]) noteSecret("token", json[k]);
  return { status: r.status, body: json };
}

let adminToken: string;
const ids: Record<string, string> = {};

/** A member who joined by invitation (the link read from the outbox, as `suite mail list` would). */
async function join_(email: string, name: string) {
  expect((await api("POST", "/users/invite", { email }, adminToken)).status).toBe(201);
  const db = new Database(join(dir, "main", "suite.db"), { readonly: true });
  // Sealed in the file: opened with the key file beside it, as `suite mail list` does.
  const { link } = openMailOfFile(join(dir, "main", "suite.db"), db.query("SELECT id, link FROM mail_outbox WHERE recipient = ?1 ORDER BY rowid DESC LIMIT 1").get(email) as { id: string; link: string });
  db.close();
  noteSecret("mailed link", link);
  const token = decodeURIComponent(/token=([^&]+)/.exec(new URL(link).hash)![1]!);
  const r = await api("POST", "/auth/invitations/accept", { token, password: MEMBER_PW, full_name: name });
  expect(r.status).toBe(201);
  ids[email] = r.body.user.id;
}

async function signIn(page: Page, email: string, password: string, next = "/team") {
  await page.goto(`${suite.origin(SUB)}/sign-in?next=${encodeURIComponent(next)}`);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.waitForURL(`${suite.origin(SUB)}${next}`);
}

beforeAll(async () => {
  ensureBinary();
  dir = mkdtempSync(join(tmpdir(), "suite-web-members-"));
  suite = await startSuite(join(dir, "main"));
  closed = await startSuite(join(dir, "closed"), { SUITE_SIGNUP: "closed" });
  browser = await launch();
  const r = await api("POST", "/auth/signup", { email: `admin@${SUB}.test`, password: ADMIN_PW, tenant_name: "Crew Ltd", subdomain: SUB, full_name: "Ada Admin" });
  expect(r.status).toBe(201);
  adminToken = r.body.access_token;
  ids.admin = r.body.user.id;
  for (const [email, name] of [["bob@crew.test", "Bob Builder"], ["carol@crew.test", "Carol Closer"], ["dan@crew.test", "Dan Driver"]]) await join_(email!, name!);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await suite?.stop();
  await closed?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test("roles, the last admin, and removing a member: their open session goes back to sign-in, their deals to another member", async () => {
  const account = await api("POST", "/crm/accounts", { name: "Bob's Account" }, adminToken);
  const deal = await api("POST", "/crm/deals", { title: "Bob's big deal", account_id: account.body.id, assigned_to: ids["bob@crew.test"] }, adminToken);
  expect(deal.status).toBe(201);

  // Bob is signed in elsewhere.
  const bobContext = await browser.newContext();
  const bob = await watchedPage(bobContext, suite.port);
  await signIn(bob.page, "bob@crew.test", MEMBER_PW, "/deals");
  await bob.page.getByRole("heading", { name: "Deals", level: 1 }).waitFor();

  const context = await browser.newContext();
  const { page, watch } = await watchedPage(context, suite.port);
  await signIn(page, `admin@${SUB}.test`, ADMIN_PW);
  await page.getByRole("cell", { name: "Bob Builder", exact: true }).waitFor();
  const found = await look(page, "members-team");

  // The only admin cannot step down: the 409 is explained.
  await page.getByRole("button", { name: "Manage Ada Admin" }).click();
  const manage = page.getByRole("dialog", { name: "Manage Ada Admin" });
  await manage.getByLabel("Role").selectOption("member");
  await manage.getByRole("button", { name: "Save changes" }).click();
  await manage.getByRole("alert").filter({ hasText: "only admin" }).waitFor();
  found.push(...(await look(page, "members-last-admin")));
  await manage.getByRole("button", { name: "Close" }).click();

  // Carol becomes an admin, with the Administrator profile.
  await page.getByRole("button", { name: "Manage Carol Closer" }).click();
  const carol = page.getByRole("dialog", { name: "Manage Carol Closer" });
  await carol.getByLabel("Role").selectOption("admin");
  await carol.getByLabel("Profile").selectOption({ label: "Administrator" });
  found.push(...(await look(page, "members-manage")));
  await carol.getByRole("button", { name: "Save changes" }).click();
  await page.getByText("Carol Closer updated.").waitFor();
  await waitUntil(async () => (await page.getByRole("row", { name: /Carol Closer/ }).getByRole("cell", { name: "Admin", exact: true }).count()) === 1);
  const carolNow = await api("GET", "/users?search=carol", undefined, adminToken);
  expect(carolNow.body.items[0]).toMatchObject({ role: "admin" });

  // Bob is removed; his deal goes to Carol.
  await page.getByRole("button", { name: "Remove Bob Builder" }).click();
  const remove = page.getByRole("dialog", { name: "Remove Bob Builder?" });
  await remove.getByLabel("Their deals go to").selectOption({ label: "Carol Closer" });
  found.push(...(await look(page, "members-remove-confirm")));
  await remove.getByRole("button", { name: "Remove member" }).click();
  await page.getByText("Bob Builder was removed from the workspace.").waitFor();
  await waitUntil(async () => (await page.getByRole("cell", { name: "Bob Builder", exact: true }).count()) === 0);
  expect((await api("GET", `/crm/deals/${deal.body.id}`, undefined, adminToken)).body).toMatchObject({ assigned_to: ids["carol@crew.test"] });

  // Bob's next step in his open tab lands on sign-in, and his password no longer works.
  await bob.page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Accounts" }).click();
  await bob.page.waitForURL(/\/sign-in/);
  await bob.page.getByLabel("Email").fill("bob@crew.test");
  await bob.page.getByLabel("Password").fill(MEMBER_PW);
  await bob.page.getByRole("button", { name: "Sign in", exact: true }).click();
  await bob.page.getByRole("alert").waitFor();
  expect(bob.page.url()).toContain("/sign-in");

  expect(found).toEqual([]);
  expect(watch.problems).toEqual([]);
  expect(bob.watch.problems).toEqual([]);
  await context.close();
  await bobContext.close();
}, 120_000);

test("an admin resets a member's second factor and lifts their sign-in lockout", async () => {
  // Dan turns 2FA on.
  const dan = await api("POST", "/auth/login", { email: "dan@crew.test", password: MEMBER_PW });
  const setup = await api("POST", "/auth/2fa/setup", {}, dan.body.access_token);
  noteSecret("secret", setup.body.secret);
  expect((await api("POST", "/auth/2fa/confirm", { code: appCode(setup.body.secret, Date.now()) }, dan.body.access_token)).status).toBe(200);
  expect((await api("POST", "/auth/login", { email: "dan@crew.test", password: MEMBER_PW })).body.requires_2fa).toBe(true);

  const context = await browser.newContext();
  const { page, watch } = await watchedPage(context, suite.port);
  await signIn(page, `admin@${SUB}.test`, ADMIN_PW);
  await page.getByRole("button", { name: "Manage Dan Driver" }).click();
  const manage = page.getByRole("dialog", { name: "Manage Dan Driver" });
  await manage.getByRole("button", { name: "Reset two-factor" }).click();
  const confirm = page.getByRole("dialog", { name: "Reset two-factor sign-in?" });
  const found = await look(page, "members-reset-2fa");
  await confirm.getByRole("button", { name: "Reset two-factor" }).click();
  await page.getByText("Two-factor sign-in is off for Dan Driver.").waitFor();
  const after = await api("POST", "/auth/login", { email: "dan@crew.test", password: MEMBER_PW });
  expect(after.status).toBe(200);
  expect(after.body.requires_2fa).toBeUndefined();
  expect(after.body.access_token).toBeString();

  // Ten wrong passwords lock Dan out; the admin unlocks him.
  for (let i = 0; i < 10; i++) await api("POST", "/auth/login", { email: "dan@crew.test", password: "not dan's password" });
  expect((await api("POST", "/auth/login", { email: "dan@crew.test", password: MEMBER_PW })).status).toBe(429);
  await manage.getByRole("button", { name: "Unlock sign-in" }).click();
  await page.getByText("Dan Driver can sign in again.").waitFor();
  expect((await api("POST", "/auth/login", { email: "dan@crew.test", password: MEMBER_PW })).status).toBe(200);

  expect(found).toEqual([]);
  expect(watch.problems).toEqual([]);
  await context.close();
}, 90_000);

test("organization settings: rename, and the CRM off (its screens say so) and on again (all its data back)", async () => {
  const context = await browser.newContext();
  const { page, watch } = await watchedPage(context, suite.port);
  await signIn(page, `admin@${SUB}.test`, ADMIN_PW, "/deals");
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Organization" }).click();
  await page.getByRole("heading", { name: "Organization", level: 1 }).waitFor();
  const found = await look(page, "organization");

  await page.getByLabel("Organization name").fill("Crew Renamed");
  await page.getByRole("checkbox", { name: "CRM" }).uncheck();
  await page.getByRole("button", { name: "Save settings" }).click();
  await page.getByText("Organization settings saved.").waitFor();
  await page.locator(".brand").filter({ hasText: "Crew Renamed" }).waitFor();
  expect((await api("GET", "/tenant", undefined, adminToken)).body).toMatchObject({ name: "Crew Renamed", modules: ["users"] });

  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Deals" }).click();
  await page.getByRole("heading", { name: "The CRM module is off", level: 1 }).waitFor();
  found.push(...(await look(page, "module-off")));
  expect((await api("GET", "/crm/deals", undefined, adminToken)).body.code).toBe("module_disabled");

  await page.getByRole("link", { name: "Organization settings" }).click();
  await page.getByRole("checkbox", { name: "CRM" }).check();
  await page.getByRole("button", { name: "Save settings" }).click();
  // The first save's toast may still be up on a loaded machine: the newest one is this save's.
  await page.getByText("Organization settings saved.").last().waitFor();
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Deals" }).click();
  await page.getByRole("heading", { name: "Deals", level: 1 }).waitFor();
  await page.getByText("Bob's big deal").first().waitFor();

  expect(found).toEqual([]);
  expect(watch.problems).toEqual([]);
  await context.close();
}, 90_000);

test("closed signup: the public page has no signup form and says how to get a workspace; the API refuses", async () => {
  const context = await browser.newContext();
  const { page, watch } = await watchedPage(context, closed.port);
  await page.goto(closed.origin());
  await page.getByRole("heading", { name: "Getting a workspace" }).waitFor();
  expect(await page.getByRole("button", { name: "Create workspace" }).count()).toBe(0);
  expect(await page.getByText("suite tenant create").count()).toBe(1);
  await page.getByRole("heading", { name: "Go to your workspace" }).waitFor();
  const found = await look(page, "signup-closed");
  const r = await fetch(`http://127.0.0.1:${closed.port}/api/v1/auth/signup`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: "x@closed.test", password: ADMIN_PW, tenant_name: "X", subdomain: "closedco" }),
  });
  expect(r.status).toBe(403);
  expect(((await r.json()) as { code: string }).code).toBe("signup_closed");

  // The open server shows the form.
  const open = await watchedPage(context, suite.port);
  await open.page.goto(suite.origin());
  await open.page.getByRole("button", { name: "Create workspace" }).waitFor();

  expect(found).toEqual([]);
  expect(watch.problems).toEqual([]);
  expect(open.watch.problems).toEqual([]);
  await context.close();
}, 60_000);
