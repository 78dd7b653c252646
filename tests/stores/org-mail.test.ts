import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { BACKENDS } from "./backends";
import { T0, type OrgBackend, mailTo, orgBackend, signup } from "./org-fixture";

for (const backend of BACKENDS) {
  describe(`mail outbox store (${backend.name})`, () => {
    let b: OrgBackend;
    beforeEach(async () => {
      b = orgBackend(await backend.fresh());
    });
    afterEach(() => b.close());

    test("enqueue, list, byId; claim leases due rows and counts the attempt", async () => {
      const t = await signup(b.org, "mail");
      const a = await b.org.mail.enqueue(mailTo(t.tenantId, "a@x.test"), T0);
      const c = await b.org.mail.enqueue(mailTo(null, "c@x.test", "operator"), T0 + 100);
      expect((await b.org.mail.list()).map((m) => m.id)).toEqual([c, a]);
      expect(await b.org.mail.list(1)).toHaveLength(1);
      expect(await b.org.mail.byId(a)).toMatchObject({
        tenant_id: t.tenantId,
        kind: "invitation",
        recipient: "a@x.test",
        subject: "Join us",
        text_body: "text body",
        html_body: "<p>html body</p>",
        link: "https://example.test/accept#token",
        status: "pending",
        attempts: 0,
        next_attempt_at: T0,
        locked_until: null,
        created_at: T0,
        sent_at: null,
      });
      expect(await b.org.mail.byId("nope")).toBeNull();
      expect(await b.org.mail.nextDueAt()).toBe(T0);
      const claimed = await b.org.mail.claimDue(T0 + 50, T0 + 30_000, 10);
      expect(claimed.map((m) => [m.id, m.status, m.attempts, m.locked_until])).toEqual([[a, "sending", 1, T0 + 30_000]]);
      expect(await b.org.mail.claimDue(T0 + 50, T0 + 30_000, 10)).toEqual([]);
      expect(await b.org.mail.nextDueAt()).toBe(T0 + 100);
    });

    test("sent, retried, failed: bodies and link leave the database once finished", async () => {
      const ids = [];
      for (let i = 0; i < 3; i++) ids.push(await b.org.mail.enqueue(mailTo(null, `r${i}@x.test`), T0));
      const [sent, retry, failed] = ids as [string, string, string];
      expect(await b.org.mail.markSent(sent, T0)).toBe(false);
      expect(await b.org.mail.claimDue(T0, T0 + 1000, 3)).toHaveLength(3);
      expect(await b.org.mail.markSent(sent, T0 + 5)).toBe(true);
      expect(await b.org.mail.markSent(sent, T0 + 6)).toBe(false);
      expect(await b.org.mail.byId(sent)).toMatchObject({ status: "sent", sent_at: T0 + 5, text_body: null, html_body: null, link: null, locked_until: null });
      expect(await b.org.mail.markRetry(retry, T0 + 60_000, "421 try later")).toBe(true);
      expect(await b.org.mail.byId(retry)).toMatchObject({ status: "pending", next_attempt_at: T0 + 60_000, last_error: "421 try later", locked_until: null, attempts: 1 });
      expect(await b.org.mail.markRetry(retry, T0, "x")).toBe(false);
      expect(await b.org.mail.markFailed(failed, "550 no such user")).toBe(true);
      expect(await b.org.mail.byId(failed)).toMatchObject({ status: "failed", last_error: "550 no such user", link: null, text_body: null });
      expect(await b.org.mail.markFailed(failed, "again")).toBe(false);
      expect(await b.org.mail.nextDueAt()).toBe(T0 + 60_000);
      expect(await b.org.mail.claimDue(T0 + 59_999, T0 + 70_000, 5)).toEqual([]);
      expect((await b.org.mail.claimDue(T0 + 60_000, T0 + 70_000, 5)).map((m) => [m.id, m.attempts])).toEqual([[retry, 2]]);
      // Purge: finished mail created before the cut; a pending or sending one stays.
      expect(await b.org.mail.purgeFinished(T0)).toBe(0);
      expect(await b.org.mail.purgeFinished(T0 + 1)).toBe(2);
      expect((await b.org.mail.list()).map((m) => m.id)).toEqual([retry]);
    });

    test("backlog: pending, sending and failed rows counted, the oldest pending one's creation; sent rows left out", async () => {
      expect(await b.org.mail.backlog()).toEqual({ pending: 0, sending: 0, failed: 0, oldestPendingAt: null });
      const ids = [];
      for (let i = 0; i < 4; i++) ids.push(await b.org.mail.enqueue(mailTo(null, `b${i}@x.test`), T0 + i * 10));
      const [sending, sent, failed] = (await b.org.mail.claimDue(T0 + 20, T0 + 1000, 3)).map((m) => m.id) as [string, string, string];
      await b.org.mail.markSent(sent, T0 + 30);
      await b.org.mail.markFailed(failed, "550");
      expect(sending).toBe(ids[0]!);
      expect(await b.org.mail.backlog()).toEqual({ pending: 1, sending: 1, failed: 1, oldestPendingAt: T0 + 30 });
    });

    test("leases: renewed by a live sender, reclaimed after a dead one's lapses, released unsent", async () => {
      const a = await b.org.mail.enqueue(mailTo(null, "lease@x.test"), T0);
      const c = await b.org.mail.enqueue(mailTo(null, "other@x.test"), T0);
      await b.org.mail.claimDue(T0, T0 + 1000, 2);
      expect(await b.org.mail.renewLeases([a], T0 + 5000)).toBe(1);
      expect(await b.org.mail.renewLeases([], T0 + 5000)).toBe(0);
      expect(await b.org.mail.nextDueAt()).toBe(T0 + 1000);
      // The sender holding `c` died: its lease lapses and another sender takes it, a second attempt.
      const again = await b.org.mail.claimDue(T0 + 1000, T0 + 9000, 5);
      expect(again.map((m) => [m.id, m.attempts])).toEqual([[c, 2]]);
      expect(await b.org.mail.release(a)).toBe(true);
      expect(await b.org.mail.byId(a)).toMatchObject({ status: "pending", attempts: 0, locked_until: null });
      expect(await b.org.mail.release(a)).toBe(false);
    });

    test("two senders claiming at once: every mail claimed, none twice", async () => {
      const n = 120;
      for (let i = 0; i < n; i++) await b.org.mail.enqueue(mailTo(null, `many${i}@x.test`), T0 + i);
      const senders = [b.instance(), b.instance()];
      const taken = await Promise.all(
        senders.map(async (s) => {
          const mine: string[] = [];
          for (;;) {
            const rows = await s.mail.claimDue(T0 + n, T0 + 60_000, 7);
            if (rows.length === 0) return mine;
            mine.push(...rows.map((r) => r.id));
          }
        }),
      );
      const all = taken.flat();
      expect(all).toHaveLength(n);
      expect(new Set(all).size).toBe(n);
      expect(Number(await b.value("SELECT count(*) AS n FROM mail_outbox WHERE status = 'sending' AND attempts = 1"))).toBe(n);
    });
  });
}
