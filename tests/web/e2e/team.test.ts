import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { type TestSmtp, startSmtp } from "../../mail/smtp-support";
import { noteSecret } from "../../security/ledger";
import { type Suite, ensureBinary, waitUntil, launch, look, secretPassword, startSuite, watchedPage } from "./support";

// Team: invite by email with a profile, the invitation taken from a real SMTP server and accepted
// in the browser, invitations resent and revoked, members searched; and, on a server without
// SMTP, the admin told where the mail waits and given a new link by Copy link.
let dir: string;
let suite: Suite;
let bare: Suite;
let smtp: TestSmtp;
let browser: Browser;
const ADMIN_PW = secretPassword("team-admin");
const NEW_PW = secretPassword("team-newcomer");

async function signupApi(s: Suite, sub: string) {
  const body = { email: `admin@${sub}.test`, password: ADMIN_PW, tenant_name: `Team ${sub}`, subdomain: sub, full_name: "Ada Admin" };
  const r = await fetch(`http://127.0.0.1:${s.port}/api/v1/auth/signup`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  expect(r.status).toBe(201);
}

async function signIn(page: Page, s: Suite, sub: string) {
  await page.goto(`${s.origin(sub)}/sign-in?next=%2Fteam`);
  await page.getByLabel("Email").fill(`admin@${sub}.test`);
  await page.getByLabel("Password").fill(ADMIN_PW);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.getByRole("heading", { name: "Team", level: 1 }).waitFor();
}

beforeAll(async () => {
  ensureBinary();
  dir = mkdtempSync(join(tmpdir(), "suite-web-team-"));
  smtp = await startSmtp();
  suite = await startSuite(join(dir, "smtp"), { SUITE_SMTP_URL: smtp.url });
  bare = await startSuite(join(dir, "bare"));
  browser = await launch();
  await signupApi(suite, "teamco");
  await signupApi(bare, "offline");
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await suite?.stop();
  await bare?.stop();
  await smtp?.close();
  rmSync(dir, { recursive: true, force: true });
});

test("an admin invites; the invitee joins from the mail, signed in; resend and revoke; members search", async () => {
  const context = await browser.newContext();
  const { page, watch } = await watchedPage(context, suite.port);
  await signIn(page, suite, "teamco");
  const found = await look(page, "team");

  await page.getByLabel("Email address").fill("newcomer@teamco.test");
  await page.getByLabel("Profile").selectOption({ label: "Standard user" });
  const before = smtp.received.length;
  await page.getByRole("button", { name: "Send invitation" }).click();
  await page.getByText("Invitation sent to newcomer@teamco.test.").waitFor();
  await page.getByRole("cell", { name: "newcomer@teamco.test", exact: true }).waitFor();

  // A second pending invitation, to revoke.
  await page.getByLabel("Email address").fill("changed-mind@teamco.test");
  await page.getByRole("button", { name: "Send invitation" }).click();
  await page.getByRole("cell", { name: "changed-mind@teamco.test", exact: true }).waitFor();
  await page.getByRole("button", { name: "Revoke the invitation to changed-mind@teamco.test" }).click();
  await page.getByRole("dialog", { name: "Revoke this invitation?" }).waitFor();
  found.push(...(await look(page, "team-revoke-confirm")));
  await page.getByRole("dialog").getByRole("button", { name: "Revoke" }).click();
  await page.getByText("Invitation for changed-mind@teamco.test revoked.").waitFor();
  await page.getByLabel("Status").selectOption("revoked");
  await page.getByRole("cell", { name: "changed-mind@teamco.test", exact: true }).waitFor();
  await page.getByLabel("Status").selectOption("accepted");
  await page.getByText("No accepted invitations.").waitFor();
  await page.getByLabel("Status").selectOption("pending");

  // Resend: a new mail, a new link; the first link stops working.
  await page.getByRole("button", { name: "Resend the invitation to newcomer@teamco.test" }).click();
  await page.getByText("Invitation sent again to newcomer@teamco.test.").waitFor();
  const mails = (await smtp.waitFor(before + 3, 30_000)).slice(before).filter((m) => m.to.includes("newcomer@teamco.test"));
  expect(mails.length).toBe(2);
  const links = mails.map((m) => /https?:\/\/\S+accept-invitation#token=[^\s"<]+/.exec(m.text)![0]);
  for (const l of links) noteSecret("mailed link", l);

  const invitee = await browser.newContext();
  const joined = await watchedPage(invitee, suite.port);
  await joined.page.goto(links[0]!);
  await joined.page.getByLabel("Your name").fill("Nina Newcomer");
  await joined.page.getByLabel("Password").fill(NEW_PW);
  await joined.page.getByRole("button", { name: "Join" }).click();
  await joined.page.getByRole("alert").filter({ hasText: "expired, was revoked, or was already used" }).waitFor();

  await joined.page.goto(links[1]!);
  await joined.page.getByLabel("Your name").waitFor();
  expect(joined.page.url()).not.toContain("token=");
  found.push(...(await look(joined.page, "accept-invitation")));
  await joined.page.getByLabel("Your name").fill("Nina Newcomer");
  await joined.page.getByLabel("Password").fill(NEW_PW);
  await joined.page.getByRole("button", { name: "Join" }).click();
  await joined.page.waitForURL(`${suite.origin("teamco")}/deals`);
  await joined.page.getByText("newcomer@teamco.test").waitFor();
  // A member has no Team page.
  expect(await joined.page.getByRole("link", { name: "Team" }).count()).toBe(0);

  await page.reload();
  await page.getByRole("searchbox", { name: "Search members" }).fill("nina");
  await page.getByRole("cell", { name: "Nina Newcomer", exact: true }).waitFor();
  await waitUntil(async () => (await page.getByRole("table").first().locator("tbody tr").count()) === 1);
  await page.getByRole("searchbox", { name: "Search members" }).fill("zzz-nobody");
  await page.getByText("No member matches “zzz-nobody”.").waitFor();
  found.push(...(await look(page, "team-members-empty")));

  expect(found).toEqual([]);
  expect(watch.problems).toEqual([]);
  expect(joined.watch.problems).toEqual([]);
  await context.close();
  await invitee.close();
}, 180_000);

test("without SMTP, the admin is told the invitation waits in the outbox", async () => {
  const context = await browser.newContext();
  const { page, watch } = await watchedPage(context, bare.port);
  await signIn(page, bare, "offline");
  await page.getByLabel("Email address").fill("someone@offline.test");
  await page.getByRole("button", { name: "Send invitation" }).click();
  await page.getByRole("status").filter({ hasText: "waits in the outbox" }).waitFor();
  expect(await page.getByText('"suite mail list"').count()).toBe(1);
  const found = await look(page, "team-outbox-notice");

  // Copy link: the admin takes a new link and passes it on; the outbox's link stops working.
  await page.getByRole("cell", { name: "someone@offline.test", exact: true }).waitFor();
  await page.getByRole("button", { name: "Copy link for someone@offline.test" }).click();
  await page.getByRole("status").filter({ hasText: "The link sent or copied before no longer works." }).waitFor();
  const copied = await page.getByRole("textbox", { name: "Invitation link", exact: true }).inputValue();
  noteSecret("copied link", copied);
  expect(copied).toStartWith(`${bare.origin("offline")}/accept-invitation#token=`);
  found.push(...(await look(page, "team-copied-link")));

  const invitee = await browser.newContext();
  const joined = await watchedPage(invitee, bare.port);
  await joined.page.goto(copied);
  await joined.page.getByLabel("Your name").fill("Sam Someone");
  await joined.page.getByLabel("Password").fill(NEW_PW);
  await joined.page.getByRole("button", { name: "Join" }).click();
  await joined.page.waitForURL(`${bare.origin("offline")}/deals`);
  expect(found).toEqual([]);
  expect(watch.problems).toEqual([]);
  expect(joined.watch.problems).toEqual([]);
  await context.close();
  await invitee.close();
}, 180_000);
