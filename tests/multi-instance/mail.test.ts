import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { openPostgres } from "../../src/stores/postgres/database";
import { type MailSink, startMailSink } from "./mail-sink";
import { type Group, ON_POSTGRES, type Org, SKIP_NOTE, eventually, signup, threeInstances } from "./support";

/**
 * One outbox in PostgreSQL, three senders: each claims due rows with FOR UPDATE SKIP LOCKED and a
 * 10 s lease it renews while alive. So every mail is sent once, and a sender killed with SIGKILL
 * mid-send loses nothing: its lease lapses and another instance sends what it held.
 *
 * The guarantee is at-least-once, with one bounded exception to exactly-once: a mail whose
 * sender dies after the SMTP server accepted it but before its `sent` mark committed is sent again
 * by another instance. A sender sends one mail at a time, so that is at most ONE duplicate per
 * killed instance (and none when the kill falls anywhere else, as the sink's counts show).
 */
describe.skipIf(!ON_POSTGRES)(`each mail is sent once by three instances sharing one outbox ${SKIP_NOTE}`, () => {
  let g: Group;
  let sink: MailSink;

  beforeAll(async () => {
    sink = await startMailSink();
    g = await threeInstances("mmail", { SUITE_SMTP_URL: sink.url, SUITE_PUBLIC_URL: "http://localhost:8000" });
  }, 120_000);
  afterAll(async () => {
    await g?.close();
    await sink?.close();
  });

  const countOf = (m: Map<string, number>, to: string) => [...m].filter(([k]) => k.startsWith(`${to} `)).reduce((n, [, c]) => n + c, 0);

  /** Spreads `perOrg` invitations from each org over the instances (round-robin), all at once. */
  async function invite(orgs: Org[], perOrg: number, tag: string): Promise<string[]> {
    const emails = orgs.flatMap((o) => Array.from({ length: perOrg }, (_, k) => ({ o, email: `${tag}-${o.subdomain}-${k}@invitee.test` })));
    const answers = await Promise.all(emails.map(({ o, email }) => g.group.next("POST", "/api/v1/users/invite", { token: o.access_token, body: { email } })));
    expect(answers.map((a) => a.status)).toEqual(Array(emails.length).fill(201));
    expect(new Set(answers.map((a) => a.instance)).size).toBe(3);
    return emails.map((e) => e.email);
  }

  async function outbox() {
    const pg = openPostgres(g.db.url, { max: 1 });
    try {
      return await pg.all<{ status: string; attempts: number; n: number }>`
        SELECT status, attempts, count(*)::int AS n FROM mail_outbox
         GROUP BY status, attempts ORDER BY status, attempts`;
    } finally {
      await pg.close();
    }
  }

  test("60 invitations and 3 magic links queued through three instances: the sink receives each exactly once", async () => {
    const orgs = [await signup(g.group, 0, "mail-a"), await signup(g.group, 1, "mail-b"), await signup(g.group, 2, "mail-c")];
    const emails = await invite(orgs, 20, "fast");
    const links = await Promise.all(orgs.map((o, i) => g.group.call(i, "POST", "/api/v1/auth/magic-link", { tenant: o.subdomain, body: { email: o.email } })));
    for (const r of links) expect(r.status).toBeLessThan(300);
    const everyone = [...emails, ...orgs.map((o) => o.email)];
    expect(await eventually(() => everyone.every((e) => countOf(sink.accepted, e) >= 1), 120_000)).toBe(true);
    // Let any late second copy show itself: wait until the outbox has nothing left in hand.
    expect(await eventually(async () => (await outbox()).every((r) => r.status === "sent"), 60_000)).toBe(true);
    // Every message (the invitations, the links, and signup's own mails) came exactly once.
    const twice = [...sink.received].filter(([, n]) => n !== 1);
    expect(twice).toEqual([]);
    for (const e of emails) expect({ e, n: countOf(sink.received, e) }).toEqual({ e, n: 1 });
    const rows = await outbox();
    const total = rows.reduce((n, r) => n + r.n, 0);
    expect(rows).toEqual([{ status: "sent", attempts: 1, n: total }]);
    expect(sink.received.size).toBe(total);
    console.log(`mail: ${total} queued over 3 instances (60 invitations, 3 links, signup's mails), ${sink.received.size} delivered, 0 duplicates, ${sink.connections.size} SMTP connections`);
  }, 240_000);

  test("a slow relay, one instance killed with SIGKILL while all three are mid-send: none lost, at most one sent twice", async () => {
    const orgs = [await signup(g.group, 0, "slow-a"), await signup(g.group, 1, "slow-b"), await signup(g.group, 2, "slow-c")];
    sink.setDelay(400);
    const receivedBefore = new Map(sink.received);
    const emails = await invite(orgs, 15, "slow");
    // All three senders hold a message in the sink at once: each instance is mid-send.
    expect(await eventually(() => sink.inFlight() >= 3, 120_000, 10)).toBe(true);
    const victim = Math.floor(Math.random() * 3);
    await g.group.kill(victim, "SIGKILL");
    // Every mail arrives: the victim's claimed rows once their lease lapses, through the others.
    expect(await eventually(() => emails.every((e) => countOf(sink.accepted, e) >= 1), 180_000)).toBe(true);
    expect(await eventually(async () => (await outbox()).every((r) => r.status === "sent"), 60_000)).toBe(true);
    const accepted = emails.map((e) => countOf(sink.accepted, e));
    const received = emails.map((e) => countOf(sink.received, e) - countOf(receivedBefore, e));
    const acceptedTwice = accepted.filter((n) => n > 1).length;
    const receivedTwice = received.filter((n) => n > 1).length;
    expect(accepted.every((n) => n >= 1)).toBe(true);
    // One mail in flight per sender: at most one came twice, and only the one the victim was sending.
    expect(acceptedTwice).toBeLessThanOrEqual(1);
    expect(receivedTwice).toBeLessThanOrEqual(1);
    expect(Math.max(...received)).toBeLessThanOrEqual(2);
    const rows = await outbox();
    const retried = rows.filter((r) => r.attempts > 1).reduce((n, r) => n + r.n, 0);
    console.log(
      `mail after SIGKILL of instance ${victim}: ${emails.length} queued, ${accepted.filter((n) => n >= 1).length} delivered, ` +
        `${acceptedTwice} accepted twice, ${receivedTwice} received twice (a copy cut off before its answer), ${retried} sent again after the lease lapsed`,
    );
    sink.setDelay(0);
  }, 300_000);
});
