import { openMailOfFile } from "../../support/outbox";
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { appCode } from "../../auth/two-factor/rfc6238";
import { noteSecret } from "../../security/ledger";
import { type BrowserOp, ownProblems, signInAtProvider, startBrowserOp } from "./oidc-kit";
import { type Suite, type Watch, ensureBinary, launch, look, secretPassword, startSuite, watchedPage } from "./support";

// Sign-in through an identity provider (issue 17) in Chromium, against dist/suite and a real
// OpenID Provider on loopback (oidc-provider): an admin adds the provider through the screen;
// a new person joins by the allowed domain; an existing member is told to sign in the usual way
// and links the provider from My account; the last way to sign in cannot be unlinked; 2FA after
// the provider.
let dir: string;
let suite: Suite;
let browser: Browser;
let op: BrowserOp;
const SUB = "loopco";
const PW = secretPassword("oidc-e2e");
const ADMIN = "olga@loopco.test";
const CLIENT_SECRET = `loopco-secret-${crypto.randomUUID()}`;
noteSecret("oidc client secret", CLIENT_SECRET);
let adminToken = "";
let providerId = "";
const contexts: BrowserContext[] = [];
const watches: Watch[] = [];

async function api(method: string, path: string, body?: unknown, token?: string) {
  const r = await suite.call(method, `/api/v1${path}`, { body, token, tenant: SUB });
  for (const k of ["access_token", "refresh_token", "temp_token"]) if (r.body?.[k]) noteSecret("token", r.body[k]);
  return r;
}

async function fresh(): Promise<Page> {
  const context = await browser.newContext();
  // The provider's login page imports a web font from Google: not reachable here, and not ours
  // (an empty stylesheet answers, so no failed load is logged).
  await context.route(/fonts\.(googleapis|gstatic)\.com/, (r) => r.fulfill({ status: 200, contentType: "text/css", body: "" }));
  contexts.push(context);
  const { page, watch } = await watchedPage(context, suite.port);
  watches.push(watch);
  return page;
}

async function passwordSignIn(page: Page, next = "/settings") {
  await page.goto(`${suite.origin(SUB)}/sign-in?next=${encodeURIComponent(next)}`);
  await page.getByLabel("Email").fill(ADMIN);
  await page.getByLabel("Password").fill(PW);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.waitForURL((u) => u.pathname === next);
}

async function continueWith(page: Page, account: string) {
  await page.goto(`${suite.origin(SUB)}/sign-in`);
  await page.getByRole("link", { name: "Continue with Loopback ID" }).click();
  await signInAtProvider(page, op, account);
}

beforeAll(async () => {
  ensureBinary();
  dir = mkdtempSync(join(tmpdir(), "suite-web-oidc-"));
  suite = await startSuite(dir, { SUITE_OIDC_TEST_LOOPBACK: "true" });
  op = await startBrowserOp({ client_id: "loopco-app", client_secret: CLIENT_SECRET, subdomain: SUB, origin: suite.origin(SUB) });
  op.accounts.set("newbie", { email: "newbie@loopco.test", email_verified: true });
  op.accounts.set("olga-at-op", { email: ADMIN, email_verified: true });
  op.accounts.set("stranger", { email: "stranger@elsewhere.test", email_verified: true });
  browser = await launch();
  const signup = await api("POST", "/auth/signup", { email: ADMIN, password: PW, tenant_name: "Loop Co", subdomain: SUB, full_name: "Olga" });
  expect(signup.status).toBe(201);
  adminToken = signup.body.access_token;
  // Olga proves her address (the link read from the outbox, as `suite mail list` would): an
  // account whose own address is unverified may not link a provider.
  const db = new Database(suite.db, { readonly: true });
  // Sealed in the file: opened with the key file beside it, as `suite mail list` does.
  const { link } = openMailOfFile(suite.db, db.query("SELECT id, link FROM mail_outbox WHERE kind = 'email_verification' AND recipient = ?1").get(ADMIN) as { id: string; link: string });
  db.close();
  noteSecret("mailed link", link);
  const verified = await api("POST", "/auth/email/verify", { token: decodeURIComponent(/token=([^&]+)/.exec(new URL(link).hash)![1]!) });
  expect(verified.status).toBe(200);
}, 240_000);

afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => {});
  await browser?.close();
  await op?.close();
  await suite?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test("an admin adds an OpenID Connect provider through the screen and gets the redirect URI to register", async () => {
  const page = await fresh();
  await passwordSignIn(page, "/organization");
  await page.getByRole("link", { name: "Sign-in providers" }).click();
  await page.getByText("No sign-in providers yet").waitFor();
  const found = await look(page, "oidc-providers-empty");
  await page.getByRole("button", { name: "Add provider" }).click();
  await page.getByLabel("Provider type").selectOption("oidc");
  await page.getByLabel("Name on the sign-in button").fill("Loopback ID");
  await page.getByLabel("Issuer URL").fill(op.issuer);
  await page.getByLabel("Client ID").fill("loopco-app");
  await page.getByLabel("Client secret").fill(CLIENT_SECRET);
  await page.getByLabel("Allowed email domains").fill("loopco.test");
  await page.getByLabel("Let new people join").check();
  found.push(...(await look(page, "oidc-providers-add")));
  await page.getByRole("dialog").getByRole("button", { name: "Add provider" }).click();
  await page.getByRole("heading", { name: "Added “Loopback ID”" }).waitFor();
  expect(await page.getByLabel("Redirect URI").inputValue()).toBe(`${suite.origin(SUB)}/api/v1/auth/oauth/callback`);
  found.push(...(await look(page, "oidc-providers-added")));
  await page.getByRole("button", { name: "Done" }).click();
  await page.getByRole("cell", { name: "Loopback ID", exact: true }).waitFor();
  expect(await page.locator("tbody tr").first().textContent()).toContain("New people may join");
  found.push(...(await look(page, "oidc-providers-list")));

  // What the screen saved is what the API holds: the secret sealed, never shown back.
  const list = await api("GET", "/auth/providers", undefined, adminToken);
  const saved = (Array.isArray(list.body) ? list.body : list.body.items)[0];
  expect(saved).toMatchObject({ kind: "oidc", name: "Loopback ID", issuer: op.issuer, client_id: "loopco-app", allowed_domains: ["loopco.test"], auto_join: true, enabled: true });
  expect(JSON.stringify(list.body)).not.toContain(CLIENT_SECRET);
  expect(await page.content()).not.toContain(CLIENT_SECRET);
  providerId = saved.id;
  expect(found).toEqual([]);
}, 180_000);

test("a new person with an allowed address joins through the provider; the last way to sign in cannot be unlinked", async () => {
  expect(providerId).not.toBe("");
  const page = await fresh();
  await page.goto(`${suite.origin(SUB)}/sign-in`);
  await page.getByRole("link", { name: "Continue with Loopback ID" }).waitFor();
  const found = await look(page, "oidc-sign-in-providers");
  await page.getByRole("link", { name: "Continue with Loopback ID" }).click();
  await signInAtProvider(page, op, "newbie");
  await page.waitForURL((u) => u.pathname === "/deals");
  await page.getByRole("navigation", { name: "Main" }).waitFor();
  expect(await page.locator(".who .email").textContent()).toBe("newbie@loopco.test");

  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "My account" }).click();
  const linked = page.locator("ul.identities li");
  await linked.first().waitFor();
  expect(await linked.first().textContent()).toContain("Loopback ID · newbie@loopco.test");
  // The session says how it began.
  await page.getByRole("columnheader", { name: "Signed in with" }).waitFor();
  expect(await page.locator("tbody tr", { hasText: "This device" }).textContent()).toContain("Loopback ID");
  found.push(...(await look(page, "oidc-account-joined")));
  // No password yet: "Set a password" (by the reset mail), never a form asking for the current one.
  await page.getByRole("button", { name: "Set a password" }).waitFor();
  expect(await page.getByLabel("Current password").count()).toBe(0);

  // Joined through the provider, no password: unlinking it would lock the person out.
  await page.getByRole("button", { name: "Unlink Loopback ID" }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Unlink" }).click();
  await page.getByText("This is your only way to sign in, so it cannot be unlinked.").waitFor();
  expect(await linked.count()).toBe(1);
  expect(found).toEqual([]);
}, 180_000);

test("an address of another domain may not join; an existing member is told to sign in the usual way, then links from My account", async () => {
  expect(providerId).not.toBe("");
  const page = await fresh();
  await continueWith(page, "stranger");
  await page.waitForURL((u) => u.pathname === "/sign-in");
  await page.getByRole("alert").waitFor();
  expect(await page.getByRole("alert").textContent()).toContain("domain may not join this organization");
  expect(new URL(page.url()).search).toBe("");

  // The provider's address is an existing member's: no sign-in, no link, a way forward instead.
  const page2 = await fresh();
  await continueWith(page2, "olga-at-op");
  await page2.getByRole("alert").waitFor();
  expect(await page2.getByRole("alert").textContent()).toContain("An account with this email address already exists. Sign in the usual way");
  const found = await look(page2, "oidc-sign-in-account-exists");

  await page2.getByLabel("Email").fill(ADMIN);
  await page2.getByLabel("Password").fill(PW);
  await page2.getByRole("button", { name: "Sign in", exact: true }).click();
  await page2.waitForURL((u) => u.pathname === "/deals");
  await page2.goto(`${suite.origin(SUB)}/settings`);
  await page2.getByRole("button", { name: "Link Loopback ID" }).click();
  // Still signed in at the provider from a minute ago: it sends the browser straight back.
  await signInAtProvider(page2, op, "olga-at-op");
  await page2.waitForURL((u) => u.pathname === "/settings");
  await page2.getByText("Your Loopback ID account is linked: you can sign in with it.").waitFor();
  expect(new URL(page2.url()).search).toBe("");
  expect(await page2.locator("ul.identities li").first().textContent()).toContain(`Loopback ID · ${ADMIN}`);
  found.push(...(await look(page2, "oidc-account-linked")));

  // Now the provider signs Olga in.
  const page3 = await fresh();
  await continueWith(page3, "olga-at-op");
  await page3.waitForURL((u) => u.pathname === "/deals");
  expect(await page3.locator(".who .email").textContent()).toBe(ADMIN);
  expect(found).toEqual([]);
}, 180_000);

test("2FA after the provider: the code step follows, and the temp token never stays in the address bar", async () => {
  expect(providerId).not.toBe("");
  const setup = await api("POST", "/auth/2fa/setup", {}, adminToken);
  expect(setup.status).toBe(200);
  noteSecret("totp secret", setup.body.secret);
  for (const c of setup.body.backup_codes as string[]) noteSecret("backup code", c);
  const now = appCode(setup.body.secret, Date.now());
  noteSecret("totp code", now);
  expect((await api("POST", "/auth/2fa/confirm", { code: now }, adminToken)).status).toBe(200);

  const page = await fresh();
  const seen: string[] = [];
  page.on("framenavigated", (f) => f === page.mainFrame() && seen.push(f.url()));
  await continueWith(page, "olga-at-op");
  await page.getByRole("heading", { name: "Two-step verification" }).waitFor();
  expect(page.url()).toBe(`${suite.origin(SUB)}/sign-in`);
  // The callback's 302 carried it in the fragment (never sent to a server); the page wiped it.
  expect(seen.some((u) => u.includes("step=2fa"))).toBe(true);
  const found = await look(page, "oidc-2fa-after-provider");
  const code = appCode(setup.body.secret, Date.now(), 1);
  noteSecret("totp code", code);
  await page.getByLabel("Code").fill(code);
  await page.getByRole("button", { name: "Verify" }).click();
  await page.waitForURL((u) => u.pathname === "/deals");
  expect(await page.locator(".who .email").textContent()).toBe(ADMIN);

  // Olga has a password too: unlinking the provider is allowed.
  await page.goto(`${suite.origin(SUB)}/settings`);
  await page.getByRole("button", { name: "Unlink Loopback ID" }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Unlink" }).click();
  await page.getByText("Unlinked your Loopback ID account.").waitFor();
  await page.getByText("No linked accounts yet.").waitFor();
  expect(found).toEqual([]);
  for (const w of watches) expect(ownProblems(w.problems, op)).toEqual([]);
}, 180_000);
