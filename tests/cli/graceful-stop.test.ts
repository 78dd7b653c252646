import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startSmtp } from "../mail/smtp-support";
import { startServer } from "../server";

/**
 * Issue 6, item 7: SIGTERM while requests are in flight. Every one of them is answered in full,
 * mail already queued is either sent or handed back (never left leased), the database is closed
 * with its WAL checkpointed, and the process exits 0 within 10 seconds.
 */

const dir = mkdtempSync(join(tmpdir(), "suite-stop-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("SIGTERM finishes the requests in flight, flushes, closes the database cleanly and exits 0 within 10 s", async () => {
  const db = join(dir, "suite.db");
  const smtp = await startSmtp();
  const server = await startServer(db, { SUITE_SMTP_URL: smtp.url, SUITE_PUBLIC_URL: "http://localhost:8000" });
  try {
    const password = "graceful password 1";
    const org = await server.call("POST", "/api/v1/auth/signup", { body: { email: "admin@calm.test", password, tenant_name: "Calm", subdomain: "calm" } });
    expect(org.status).toBe(201);
    const as = { token: org.body.access_token as string, tenant: "calm" };
    const account = await server.call("POST", "/api/v1/crm/accounts", { ...as, body: { name: "Calm Co" } });

    // Logins queue for the two argon2 slots, so most of them are still running at the signal
    // (eight: the account's limit counts logins in flight, and stops a burst past ten).
    const logins = Array.from({ length: 8 }, () => server.call("POST", "/api/v1/auth/login", { body: { email: "admin@calm.test", password }, tenant: "calm" }));
    const deals = Array.from({ length: 30 }, (_, i) => server.call("POST", "/api/v1/crm/deals", { ...as, body: { title: `in flight ${i}`, account_id: account.body.id } }));
    const invites = Array.from({ length: 5 }, (_, i) => server.call("POST", "/api/v1/users/invite", { ...as, body: { email: `late${i}@calm.test` } }));
    await Bun.sleep(40);
    const signalled = performance.now();
    const stopped = server.stop();

    const answered = await Promise.all([...logins, ...deals, ...invites]);
    expect(answered.slice(0, 8).map((r) => r.status)).toEqual(Array(8).fill(200));
    expect(answered.slice(8, 38).map((r) => r.status)).toEqual(Array(30).fill(201));
    expect(answered.slice(38).map((r) => r.status)).toEqual(Array(5).fill(201));
    for (const r of answered.slice(0, 8)) expect(typeof r.body.access_token).toBe("string");

    const { code, stdout, stderr } = await stopped;
    expect(code).toBe(0);
    const took = performance.now() - signalled;
    expect(took).toBeLessThan(10_000);
    expect(stderr).toBe("");
    const log = stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
    const stopAt = log.findIndex((l) => l.msg === "stopping");
    expect(stopAt).toBeGreaterThan(0);
    // Some logins were truly in flight: they were answered after the stop began.
    expect(log.slice(stopAt).filter((l) => l.msg === "request" && l.path === "/api/v1/auth/login" && l.status === 200).length).toBeGreaterThan(0);
    expect(log.at(-1)?.msg).toBe("stopped");
    const late = log.slice(stopAt).filter((l) => l.msg === "request").length;
    process.stdout.write(`graceful stop: 43 requests in flight at SIGTERM (${late} answered after it began), all answered; exit 0 in ${Math.round(took)} ms\n`);
  } finally {
    server.kill();
    await smtp.close();
  }

  // Closed cleanly: the WAL was checkpointed into the file, which is whole.
  const wal = `${db}-wal`;
  expect(!existsSync(wal) || statSync(wal).size === 0).toBe(true);
  const d = new Database(db, { readonly: true });
  try {
    expect(d.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
    expect(d.query("SELECT count(*) AS n FROM deals WHERE title LIKE 'in flight %'").get()).toEqual({ n: 30 });
    expect(d.query("SELECT count(*) AS n FROM sessions").get()).toEqual({ n: 9 });
    // Every invitation mail was sent, or is pending with no lease, ready for the next start.
    const mails = d.query("SELECT status, locked_until FROM mail_outbox WHERE recipient LIKE 'late%'").all() as { status: string; locked_until: number | null }[];
    expect(mails).toHaveLength(5);
    for (const m of mails) expect(m.status === "sent" || (m.status === "pending" && m.locked_until === null)).toBe(true);
    const sent = mails.filter((m) => m.status === "sent").length;
    expect(smtp.received.filter((m) => m.to[0]?.startsWith("late")).length).toBe(sent);
  } finally {
    d.close();
  }
}, 30_000);
