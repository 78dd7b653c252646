import { afterAll, expect, test } from "bun:test";
import { newId } from "../../src/kernel/ids";
import type { TestApp } from "../helpers";
import { askLink, countRows } from "../auth/magic-link/support";
import { clockedApp } from "../auth/support";
import { testSql } from "../support/sql";

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
  await testSql(t.ctx).run("DELETE FROM mail_outbox WHERE kind = 'email_verification'");
  const start = clock.now();
  await askLink(t, org.email, { tenant: "acme" });
  const mailed = (id: string, status: string) => testSql(t.ctx).run("UPDATE mail_outbox SET status = ?1 WHERE id = ?2", status, id);
  // A mail as the outbox's enqueue writes it (straight to the table, on either backend).
  const enqueue = async (kind: string) => {
    const id = newId();
    await testSql(t.ctx).run(
      "INSERT INTO mail_outbox (id, tenant_id, kind, recipient, subject, text_body, html_body, link, status, next_attempt_at, created_at) VALUES (?1, ?2, ?3, ?4, ?5, 't', 'h', NULL, 'pending', ?6, ?6)",
      id, org.tenant.id, kind, org.email, kind, clock.now(),
    );
    return id;
  };
  await mailed(await enqueue("old-sent"), "sent");
  await mailed(await enqueue("old-failed"), "failed");

  clock.advance(DAY); // the link expired 23 h 50 min ago: kept
  await t.ctx.housekeep();
  expect(await countRows(t, "magic_links")).toBe(1);
  clock.advance(10 * 60_000 + 1);
  await t.ctx.housekeep();
  expect(await countRows(t, "magic_links")).toBe(0);

  clock.advance(start + 30 * DAY - clock.now());
  await t.ctx.housekeep();
  expect(await countRows(t, "mail_outbox")).toBe(3);
  clock.advance(1);
  await t.ctx.housekeep();
  // The magic-link mail was never sent (no SMTP): it stays for `suite mail list`.
  expect((await t.ctx.repos.mail.list()).map((r) => [r.kind, r.status])).toEqual([["magic_link", "pending"]]);
});
