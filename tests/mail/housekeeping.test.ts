import { sqliteRepos } from "../helpers";
import { afterAll, expect, test } from "bun:test";
import { writeTx } from "../../src/db/database";
import type { TestApp } from "../helpers";
import { askLink, countRows } from "../auth/magic-link/support";
import { clockedApp } from "../auth/support";

const apps: TestApp[] = [];
afterAll(() => {
  for (const a of apps) a.close();
});

const DAY = 86_400_000;

test("housekeeping purges links a day past expiry and finished mail after 30 days, never pending mail", async () => {
  const { t, clock } = clockedApp();
  apps.push(t);
  const org = await t.signup("acme");
  // Signup's verification mail is not what this test follows.
  t.ctx.db.run("DELETE FROM mail_outbox WHERE kind = 'email_verification'");
  const start = clock.now();
  await askLink(t, org.email, { tenant: "acme" });
  const mailed = (id: string, status: string) => t.ctx.db.run("UPDATE mail_outbox SET status = ?1 WHERE id = ?2", [status, id]);
  const enqueue = (kind: string) =>
    writeTx(t.ctx.db, () =>
      sqliteRepos(t.ctx).mail.enqueueInTx({ tenantId: org.tenant.id, kind, recipient: org.email, subject: kind, text: "t", html: "h", link: null }, clock.now()),
    );
  mailed(enqueue("old-sent"), "sent");
  mailed(enqueue("old-failed"), "failed");

  clock.advance(DAY); // the link expired 23 h 50 min ago: kept
  await t.ctx.housekeep();
  expect(countRows(t, "magic_links")).toBe(1);
  clock.advance(10 * 60_000 + 1);
  await t.ctx.housekeep();
  expect(countRows(t, "magic_links")).toBe(0);

  clock.advance(start + 30 * DAY - clock.now());
  await t.ctx.housekeep();
  expect(countRows(t, "mail_outbox")).toBe(3);
  clock.advance(1);
  await t.ctx.housekeep();
  // The magic-link mail was never sent (no SMTP): it stays for `suite mail list`.
  expect((await t.ctx.repos.mail.list()).map((r) => [r.kind, r.status])).toEqual([["magic_link", "pending"]]);
});
