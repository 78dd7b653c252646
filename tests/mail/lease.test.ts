import { createOutboxSeal } from "../../src/mail/outbox-seal";
import { generateKeys } from "../../src/security/key-file";
import { afterAll, afterEach, beforeAll, expect, test } from "bun:test";
import { type Db, openDatabase, writeTx } from "../../src/db/database";
import { CURRENT_PLAN, migrate } from "../../src/db/migrate";
import type { MailStore } from "../../src/mail/repo";
import { createSqliteMailStore as createMailRepo } from "../../src/stores/sqlite/mail";
import { DEFAULT_POLICY, type DeliveryPolicy, createMailSender } from "../../src/mail/sender";
import { createSmtpTransport, type MailTransport } from "../../src/mail/smtp";
import { type TestSmtp, startSmtp } from "./smtp-support";

/**
 * The outbox lease on a real clock: short, renewed while its sender lives, so a crashed server's
 * claimed mail goes out seconds after a restart, and a live sender's slow send is never taken.
 */

let smtp: TestSmtp;
beforeAll(async () => {
  smtp = await startSmtp();
});
afterAll(() => smtp.close());

const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
  smtp.received.length = 0;
});

function outbox(): { db: Db; repo: MailStore; enqueue: () => string } {
  const db = openDatabase(":memory:");
  migrate(db, CURRENT_PLAN);
  cleanup.push(() => db.close());
  const repo = createMailRepo(db, createOutboxSeal(generateKeys().encryption_key));
  let n = 0;
  const enqueue = () =>
    writeTx(db, () =>
      repo.enqueueInTx({ tenantId: null, kind: "test", recipient: `r${n++}@test.local`, subject: "Hello", text: "text", html: "<p>html</p>", link: null }, Date.now()),
    );
  return { db, repo, enqueue };
}

function sender(repo: MailStore, policy: Partial<DeliveryPolicy>, transport: MailTransport = createSmtpTransport(smtp.url)) {
  const s = createMailSender({ repo, transport, from: "suite@test.local", now: Date.now, log: () => {}, policy });
  cleanup.push(() => s.stop(50));
  return s;
}

test("the default lease is short and renewed well before it lapses", () => {
  expect(DEFAULT_POLICY.leaseMs).toBeLessThanOrEqual(10_000);
  expect(DEFAULT_POLICY.renewMs * 3).toBeLessThanOrEqual(DEFAULT_POLICY.leaseMs);
});

test("a live sender renews its lease through a send longer than the lease; no other sender takes the row", async () => {
  const o = outbox();
  const id = o.enqueue();
  const policy = { leaseMs: 80, renewMs: 20, pollMs: 60_000 };
  let sends = 0;
  const slow = sender(o.repo, policy, { sendMail: () => Bun.sleep(400).then(() => void sends++) });
  slow.start();
  await Bun.sleep(10);
  const other = sender(o.repo, policy);
  const leases: number[] = [];
  // For five leases' time, another sender on the same outbox finds nothing it may take.
  for (let i = 0; i < 15; i++) {
    expect(await other.drain()).toBe(0);
    const row = (await o.repo.byId(id))!;
    if (row.status === "sending") leases.push(row.locked_until!);
    await Bun.sleep(20);
  }
  await slow.stop(2_000);
  expect(sends).toBe(1);
  expect(smtp.received).toHaveLength(0);
  expect((await o.repo.byId(id))!).toMatchObject({ status: "sent", attempts: 1 });
  expect(new Set(leases).size).toBeGreaterThan(3); // renewed, not one lease held past its end
});

test("rows leased by a sender that died go out by themselves soon after a new sender starts", async () => {
  const o = outbox();
  const ids = [o.enqueue(), o.enqueue()];
  // A sender claims both rows, then the process is killed: no one renews the lease.
  expect(await o.repo.claimDue(Date.now(), Date.now() + 300, 10)).toHaveLength(2);
  const started = Date.now();
  const restarted = sender(o.repo, { leaseMs: 300, renewMs: 100, pollMs: 60_000 });
  restarted.start();
  await smtp.waitFor(2, 5_000);
  const waited = Date.now() - started;
  expect(waited).toBeGreaterThanOrEqual(250); // the dead sender's lease was honoured ...
  expect(waited).toBeLessThan(3_000); // ... and not a poll interval more
  // The sender marks a row sent once the SMTP server has answered: a moment after it has the mail.
  const sentBoth = async () => (await Promise.all(ids.map((id) => o.repo.byId(id)))).every((r) => r?.status === "sent");
  for (let i = 0; i < 100 && !(await sentBoth()); i++) await Bun.sleep(10);
  for (const id of ids) expect((await o.repo.byId(id))!).toMatchObject({ status: "sent", attempts: 2 });
});

test("renewLeases extends only rows still being sent", async () => {
  const o = outbox();
  const [a, b] = [o.enqueue(), o.enqueue()];
  const now = Date.now();
  await o.repo.claimDue(now, now + 100, 1);
  expect(await o.repo.renewLeases([a, b], now + 5_000)).toBe(1);
  expect((await o.repo.byId(a))!.locked_until).toBe(now + 5_000);
  expect((await o.repo.byId(b))!).toMatchObject({ status: "pending", locked_until: null });
  expect(await o.repo.renewLeases([], now)).toBe(0);
});
