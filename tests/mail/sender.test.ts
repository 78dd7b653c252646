import { createOutboxSeal } from "../../src/mail/outbox-seal";
import { generateKeys } from "../../src/security/key-file";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { type Db, openDatabase, writeTx } from "../../src/db/database";
import { CURRENT_PLAN, migrate } from "../../src/db/migrate";
import type { MailStore } from "../../src/mail/repo";
import { createSqliteMailStore as createMailRepo } from "../../src/stores/sqlite/mail";
import { DEFAULT_POLICY, type DeliveryPolicy, createMailSender } from "../../src/mail/sender";
import { createSmtpTransport, scrubSmtpError, smtpSecrets } from "../../src/mail/smtp";
import { clock } from "../auth/support";
import { type TestSmtp, startSmtp } from "./smtp-support";

let smtp: TestSmtp;
beforeAll(async () => {
  smtp = await startSmtp();
});
afterAll(() => smtp.close());

const open: Array<{ db: Db; stop: () => Promise<void> }> = [];
afterEach(async () => {
  for (const o of open.splice(0)) {
    await o.stop();
    o.db.close();
  }
  smtp.received.length = 0;
  smtp.refuseNext(0);
});

/** An outbox on its own database, and a sender for it on a hand-moved clock. */
function outbox(policy: Partial<DeliveryPolicy> = {}, url = smtp.url, now?: () => number) {
  const db = openDatabase(":memory:");
  migrate(db, CURRENT_PLAN);
  const repo = createMailRepo(db, createOutboxSeal(generateKeys().encryption_key));
  const c = now ? { now, advance: () => {} } : clock();
  const logs: Record<string, unknown>[] = [];
  const newSender = () => {
    const s = createMailSender({ repo, transport: createSmtpTransport(url), from: "suite@test.local", now: c.now, log: (l) => logs.push(l), secrets: smtpSecrets(url), policy });
    open.push({ db, stop: () => s.stop() });
    return s;
  };
  const enqueue = (n: number) =>
    Array.from({ length: n }, (_, i) =>
      writeTx(db, () =>
        repo.enqueueInTx(
          { tenantId: null, kind: "test", recipient: `r${i}@test.local`, subject: `Subject ${i}`, text: `text ${i} https://x.test/#token=SECRET${i}`, html: `<p>html ${i}</p>`, link: `https://x.test/#token=SECRET${i}` },
          c.now(),
        ),
      ),
    );
  return { db, repo, clock: c, logs, newSender, enqueue };
}

const row = (repo: MailStore, id: string) => repo.byId(id).then((r) => r!);

describe("the outbox sender", () => {
  test("a refused mail is retried after a backoff, then sent with its bodies and link cleared", async () => {
    const o = outbox();
    const sender = o.newSender();
    const [id] = o.enqueue(1);
    smtp.refuseNext(1);

    expect(await sender.drain()).toBe(1);
    const deferred = await row(o.repo, id!);
    expect(deferred).toMatchObject({ status: "pending", attempts: 1, next_attempt_at: o.clock.now() + 30_000, locked_until: null });
    expect(deferred.last_error).toContain("451");
    expect(deferred.link).not.toBeNull();
    expect(smtp.received).toHaveLength(0);

    o.clock.advance(29_999);
    expect(await sender.drain()).toBe(0);
    o.clock.advance(1);
    expect(await sender.drain()).toBe(1);
    expect(await row(o.repo, id!)).toMatchObject({ status: "sent", attempts: 2, text_body: null, html_body: null, link: null, last_error: null, sent_at: o.clock.now() });
    expect(smtp.received).toHaveLength(1);
    expect(smtp.received[0]).toMatchObject({ to: ["r0@test.local"], from: "suite@test.local", subject: "Subject 0" });
    expect(smtp.received[0]!.text).toContain("text 0");
    expect(smtp.received[0]!.html).toContain("<p>html 0</p>");

    expect(o.logs.map((l) => [l.msg, l.mail_id, l.kind, l.status])).toEqual([
      ["mail deferred", id, "test", "pending"],
      ["mail sent", id, "test", "sent"],
    ]);
    expect(JSON.stringify(o.logs)).not.toContain("SECRET");
  });

  test("after the last attempt the mail is failed and its link erased", async () => {
    const o = outbox({ maxAttempts: 3 });
    const sender = o.newSender();
    const [id] = o.enqueue(1);
    smtp.refuseNext(10);
    for (let i = 0; i < 3; i++) {
      await sender.drain();
      o.clock.advance(60 * 60_000);
    }
    expect(await row(o.repo, id!)).toMatchObject({ status: "failed", attempts: 3, link: null, text_body: null, html_body: null });
    expect(await sender.drain()).toBe(0);
    expect(o.logs.at(-1)).toMatchObject({ msg: "mail failed", level: "error", mail_id: id, status: "failed" });
  });

  test("a running sender wakes by itself when a retry falls due", async () => {
    const o = outbox({ backoffMs: () => 100, pollMs: 60 * 60_000 }, smtp.url, Date.now);
    const sender = o.newSender();
    sender.start();
    smtp.refuseNext(1);
    const [id] = o.enqueue(1);
    sender.kick();
    await smtp.waitFor(1, 3000);
    await sender.stop();
    expect(await row(o.repo, id!)).toMatchObject({ status: "sent", attempts: 2 });
  });

  test("backoff doubles from 30 s and is capped at an hour", () => {
    const waits = Array.from({ length: 10 }, (_, i) => DEFAULT_POLICY.backoffMs(i + 1) / 1000);
    expect(waits).toEqual([30, 60, 120, 240, 480, 960, 1920, 3600, 3600, 3600]);
    expect(DEFAULT_POLICY.maxAttempts).toBe(10);
  });

  test("a row left `sending` by a crashed sender is delivered by a new one once its lease lapses", async () => {
    const o = outbox();
    const [id] = o.enqueue(1);
    // The first sender claims the row, then dies before sending.
    const claimed = await o.repo.claimDue(o.clock.now(), o.clock.now() + DEFAULT_POLICY.leaseMs, 10);
    expect(claimed.map((r) => r.id)).toEqual([id!]);

    const sender = o.newSender();
    expect(await sender.drain()).toBe(0);
    expect((await row(o.repo, id!)).status).toBe("sending");
    o.clock.advance(DEFAULT_POLICY.leaseMs);
    expect(await sender.drain()).toBe(1);
    expect(await row(o.repo, id!)).toMatchObject({ status: "sent", attempts: 2, link: null });
    expect(smtp.received).toHaveLength(1);
  });

  test("mail pending before start goes out at start; a kick sends new mail without waiting for the poll", async () => {
    const o = outbox({ pollMs: 60 * 60_000 });
    o.enqueue(3);
    const sender = o.newSender();
    sender.start();
    await smtp.waitFor(3);
    expect(smtp.received.map((m) => m.to[0]).sort()).toEqual(["r0@test.local", "r1@test.local", "r2@test.local"]);

    const [later] = o.enqueue(1);
    sender.kick();
    await smtp.waitFor(4);
    await sender.stop();
    expect((await row(o.repo, later!)).status).toBe("sent");
  });

  test("two senders on one outbox deliver each mail exactly once", async () => {
    const o = outbox({ batch: 2 });
    o.enqueue(6);
    const [a, b] = [o.newSender(), o.newSender()];
    const [na, nb] = await Promise.all([a.drain(), b.drain()]);
    expect(na + nb).toBe(6);
    expect(smtp.received).toHaveLength(6);
    expect(new Set(smtp.received.map((m) => m.to[0])).size).toBe(6);
  });

  test("stopping: the send under way finishes, the rest of the batch is handed back unsent", async () => {
    const o = outbox();
    const ids = o.enqueue(3);
    let finishFirst!: () => void;
    const sent: string[] = [];
    const sender = createMailSender({
      repo: o.repo,
      from: "suite@test.local",
      now: o.clock.now,
      log: () => {},
      transport: {
        sendMail: async (m) => {
          if (sent.length === 0) await new Promise<void>((r) => (finishFirst = r));
          sent.push(m.to);
        },
      },
    });
    sender.start();
    await Bun.sleep(5);
    const stopped = sender.stop();
    finishFirst();
    await stopped;
    expect(sent).toEqual(["r0@test.local"]);
    expect((await row(o.repo, ids[0]!)).status).toBe("sent");
    for (const id of ids.slice(1)) expect(await row(o.repo, id)).toMatchObject({ status: "pending", attempts: 0, locked_until: null });
  });

  test("stopping does not wait past its grace for a hung server; the row keeps its lease", async () => {
    const o = outbox();
    const [id] = o.enqueue(1);
    const sender = createMailSender({ repo: o.repo, from: "x@test.local", now: o.clock.now, log: () => {}, transport: { sendMail: () => new Promise(() => {}) } });
    sender.start();
    await Bun.sleep(5);
    const t0 = performance.now();
    await sender.stop(50);
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(await row(o.repo, id!)).toMatchObject({ status: "sending", attempts: 1 });
  });

  test("SMTP credentials never reach a log line or last_error", async () => {
    // Nothing listens on port 1: every attempt fails, with the URL's credentials configured.
    const o = outbox({}, "smtp://mailer:hunter2-secret@127.0.0.1:1");
    const sender = o.newSender();
    const [id] = o.enqueue(1);
    await sender.drain();
    const r = await row(o.repo, id!);
    expect(r.status).toBe("pending");
    expect(r.last_error).toContain("ECONNREFUSED");
    expect(`${JSON.stringify(o.logs)} ${r.last_error}`).not.toContain("hunter2");
  });

  test("scrubSmtpError removes URL credentials, configured secrets and AUTH lines", () => {
    const secrets = smtpSecrets("smtps://bob:p%40ss-word@mail.example.com:465");
    const e = Object.assign(new Error("Invalid login for smtps://bob:p%40ss-word@mail.example.com: AUTH PLAIN Ym9iAHBAc3M= rejected; password p@ss-word"), {
      code: "EAUTH",
      responseCode: 535,
    });
    const line = scrubSmtpError(e, secrets);
    expect(line.startsWith("EAUTH 535 ")).toBe(true);
    expect(line).not.toContain("p%40ss-word");
    expect(line).not.toContain("p@ss-word");
    expect(line).not.toContain("Ym9iAHBAc3M=");
    expect(line).toContain("smtps://***@mail.example.com");
  });
});
