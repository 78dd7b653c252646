/**
 * Step-up on the Team and Organization screens (issue 29.3), in Chromium against the built
 * binary: past SUITE_REAUTH_WINDOW (3 s here) a role change and a rename of the organization ask
 * for the password in the step-up dialog, then go through.
 */
import { openMailOfFile } from "../../support/outbox";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { noteSecret } from "../../security/ledger";
import { type Suite, ensureBinary, launch, look, secretPassword, startSuite, watchedPage } from "./support";

let dir: string;
let suite: Suite;
let browser: Browser;
const ADMIN_PW = secretPassword("step-up-admin");
const MEMBER_PW = secretPassword("step-up-member");
const SUB = "stepup";
let memberId = "";

beforeAll(async () => {
  ensureBinary();
  dir = mkdtempSync(join(tmpdir(), "suite-web-step-up-"));
  suite = await startSuite(dir, { SUITE_REAUTH_WINDOW: "3" });
  browser = await launch();
  const admin = await suite.call("POST", "/api/v1/auth/signup", { body: { email: `admin@${SUB}.test`, password: ADMIN_PW, tenant_name: "Step Ltd", subdomain: SUB, full_name: "Ada Admin" } });
  expect(admin.status).toBe(201);
  // A member, straight through the invitation (a standard profile needs no step-up).
  expect((await suite.call("POST", "/api/v1/users/invite", { body: { email: `bob@${SUB}.test` }, token: admin.body.access_token, tenant: SUB })).status).toBe(201);
  const { Database } = await import("bun:sqlite");
  const db = new Database(suite.db, { readonly: true });
  // The outbox keeps the link sealed: opened with the key file beside the database, as the sender does.
  const row = db.query("SELECT id, link FROM mail_outbox WHERE recipient = ?1 ORDER BY rowid DESC LIMIT 1").get(`bob@${SUB}.test`) as { id: string; link: string };
  db.close();
  const link = openMailOfFile(suite.db, row).link!;
  noteSecret("mailed link", link);
  const token = decodeURIComponent(/token=([^&]+)/.exec(new URL(link).hash)![1]!);
  const bob = await suite.call("POST", "/api/v1/auth/invitations/accept", { body: { token, password: MEMBER_PW, full_name: "Bob Builder" } });
  expect(bob.status).toBe(201);
  memberId = bob.body.user.id;
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await suite?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test("a stale session asks for the password before a role change and an organization rename, then saves", async () => {
  const context = await browser.newContext();
  const { page, watch } = await watchedPage(context, suite.port);
  await page.goto(`${suite.origin(SUB)}/sign-in?next=%2Fteam`);
  await page.getByLabel("Email").fill(`admin@${SUB}.test`);
  await page.getByLabel("Password").fill(ADMIN_PW);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.waitForURL(`${suite.origin(SUB)}/team`);
  await page.getByRole("cell", { name: "Bob Builder", exact: true }).waitFor();
  await Bun.sleep(3500);

  await page.getByRole("button", { name: "Manage Bob Builder" }).click();
  const manage = page.getByRole("dialog", { name: "Manage Bob Builder" });
  await manage.getByLabel("Role").selectOption("admin");
  await manage.getByRole("button", { name: "Save changes" }).click();
  const confirm = page.getByRole("dialog", { name: "Confirm it's you" });
  await confirm.getByText("enter your password again to change who has access to this workspace").waitFor();
  const found = await look(page, "step-up-team");
  await confirm.getByLabel("Password").fill(ADMIN_PW);
  await confirm.getByRole("button", { name: "Confirm" }).click();
  await page.getByText("Bob Builder updated.").waitFor();
  const members = (await page.evaluate(() => fetch("/api/v1/users").then((r) => r.json()))) as { items: { id: string; role: string }[] };
  expect(members.items.find((u) => u.id === memberId)?.role).toBe("admin");

  await Bun.sleep(3500);
  await page.goto(`${suite.origin(SUB)}/organization`);
  await page.getByLabel("Organization name").fill("Step Limited");
  await page.getByRole("button", { name: "Save settings" }).click();
  const again = page.getByRole("dialog", { name: "Confirm it's you" });
  await again.getByText("enter your password again to change the organization's settings").waitFor();
  found.push(...(await look(page, "step-up-organization")));
  await again.getByLabel("Password").fill(ADMIN_PW);
  await again.getByRole("button", { name: "Confirm" }).click();
  await page.getByText("Organization settings saved.").waitFor();
  expect(await page.evaluate(() => fetch("/api/v1/tenant").then((r) => r.json() as Promise<{ name: string }>).then((t) => t.name))).toBe("Step Limited");

  expect(found).toEqual([]);
  expect(watch.problems).toEqual([]);
  await context.close();
}, 180_000);
