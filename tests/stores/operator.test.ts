import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import type { OperatorRow, OperatorStore } from "../../src/operator/repo";
import { createPostgresOperatorStore } from "../../src/stores/postgres/operator";
import { createSqliteOperatorStore } from "../../src/stores/sqlite/operator";
import { BACKENDS } from "./backends";
import { T0, type OrgBackend, mailTo, orgBackend, signup } from "./org-fixture";

/** The operators' store (src/operator/repo.ts) on both backends: accounts, challenges, sessions, audit, and the console's reads. */

const operator = (id: string, email: string): OperatorRow => ({
  id, email, password_hash: "hash", totp_secret: "sealed", totp_last_step: null, created_at: T0, last_sign_in_at: null,
});

for (const backend of BACKENDS) {
  describe(`operator store (${backend.name})`, () => {
    let b: OrgBackend;
    let s: OperatorStore;
    beforeEach(async () => {
      const raw = await backend.fresh();
      b = orgBackend(raw);
      s = raw.kind === "sqlite" ? createSqliteOperatorStore(raw.db) : createPostgresOperatorStore(raw.pg);
    });
    afterEach(() => b.close());

    test("accounts: create once per email, list, accept each TOTP step once, remove with sessions and challenges", async () => {
      expect(await s.create(operator("o1", "a@ops.test"))).toBe(true);
      expect(await s.create(operator("o2", "a@ops.test"))).toBe(false);
      expect(await s.create(operator("o3", "b@ops.test"))).toBe(true);
      expect((await s.list()).map((o) => o.email)).toEqual(["a@ops.test", "b@ops.test"]);
      expect(await s.byEmail("a@ops.test")).toMatchObject({ id: "o1", totp_last_step: null });
      expect(await s.acceptStep("o1", 100, T0 + 5)).toBe(true);
      expect(await s.acceptStep("o1", 100, T0 + 6)).toBe(false);
      expect(await s.acceptStep("o1", 99, T0 + 6)).toBe(false);
      expect(await s.byId("o1")).toMatchObject({ totp_last_step: 100, last_sign_in_at: T0 + 5 });

      await s.addChallenge("ch1", "o1", T0 + 1000);
      expect(await s.peekChallenge("ch1", T0)).toBe("o1");
      expect(await s.peekChallenge("ch1", T0 + 1000)).toBeNull();
      expect(await s.takeChallenge("ch1", T0)).toBe("o1");
      expect(await s.takeChallenge("ch1", T0)).toBeNull();
      await s.addChallenge("ch2", "o1", T0 + 1000);
      expect(await s.takeChallenge("ch2", T0 + 2000)).toBeNull();

      await s.createSession({ id: "s1", tokenHash: "h1", operatorId: "o1", createdAt: T0, expiresAt: T0 + 8 * 3600_000, ip: "1.2.3.4", userAgent: "ua" });
      expect(await s.sessionByHash("h1", T0 + 10, T0 - 1)).toMatchObject({ id: "s1", operator_id: "o1", email: "a@ops.test", proven_at: T0, last_used_at: T0 });
      // Idle: unused since before idleSince.
      expect(await s.sessionByHash("h1", T0 + 10, T0)).toBeNull();
      await s.touchSession("s1", T0 + 100);
      await s.proveSession("s1", T0 + 50);
      expect(await s.sessionByHash("h1", T0 + 200, T0)).toMatchObject({ last_used_at: T0 + 100, proven_at: T0 + 50 });
      // Absolute end.
      expect(await s.sessionByHash("h1", T0 + 8 * 3600_000, T0)).toBeNull();
      await s.endSession("s1", T0 + 300);
      expect(await s.sessionByHash("h1", T0 + 400, T0)).toBeNull();

      await s.createSession({ id: "s2", tokenHash: "h2", operatorId: "o1", createdAt: T0, expiresAt: T0 + 1000, ip: null, userAgent: null });
      await s.addChallenge("ch3", "o1", T0 + 1000);
      expect(await s.remove("a@ops.test")).toBe(true);
      expect(await s.remove("a@ops.test")).toBe(false);
      expect(await s.sessionByHash("h2", T0, T0 - 1)).toBeNull();
      expect(await b.value("SELECT count(*) AS n FROM operator_challenges")).toBe(0);
      expect(Number(await b.value("SELECT count(*) AS n FROM operator_sessions"))).toBe(0);
    });

    test("an operator's sessions: listed live only, latest used first; one ended, the others ended; never another operator's", async () => {
      await s.create(operator("o1", "a@ops.test"));
      await s.create(operator("o2", "b@ops.test"));
      const session = (id: string, operatorId: string, at: number) => ({ id, tokenHash: `h-${id}`, operatorId, createdAt: at, expiresAt: at + 1000, ip: "203.0.113.9", userAgent: "curl/8" });
      await s.createSession(session("s1", "o1", T0));
      await s.createSession(session("s2", "o1", T0 + 10));
      await s.createSession(session("s3", "o1", T0 + 20));
      await s.createSession(session("old", "o1", T0 - 5000));
      await s.createSession(session("theirs", "o2", T0));
      await s.touchSession("s1", T0 + 50);
      const live = await s.sessionsOf("o1", T0 + 100, T0 - 1);
      expect(live.map((r) => r.id)).toEqual(["s1", "s3", "s2"]);
      expect(live[0]).toEqual({ id: "s1", created_at: T0, last_used_at: T0 + 50, expires_at: T0 + 1000, ip: "203.0.113.9", user_agent: "curl/8" });
      // Idle ones are not live.
      expect((await s.sessionsOf("o1", T0 + 100, T0 + 15)).map((r) => r.id)).toEqual(["s1", "s3"]);
      expect(await s.endSessionOf("o1", "theirs", T0 + 100)).toBe(false);
      expect(await s.endSessionOf("o1", "s2", T0 + 100)).toBe(true);
      expect(await s.endSessionOf("o1", "s2", T0 + 100)).toBe(false);
      expect(await s.endOtherSessions("o1", "s1", T0 + 100)).toBe(2);
      expect((await s.sessionsOf("o1", T0 + 100, T0 - 1)).map((r) => r.id)).toEqual(["s1"]);
      expect((await s.sessionsOf("o2", T0 + 100, T0 - 1)).map((r) => r.id)).toEqual(["theirs"]);
    });

    test("backup codes: replaced as a set, each spent once by its own operator, counted", async () => {
      await s.create(operator("o1", "a@ops.test"));
      await s.create(operator("o2", "b@ops.test"));
      await s.replaceBackupCodes("o1", ["h1", "h2", "h3"], T0);
      await s.replaceBackupCodes("o2", ["k1"], T0);
      expect(await s.remainingBackupCodes("o1")).toBe(3);
      expect(await s.useBackupCode("o2", "h1", T0 + 1)).toBe(false);
      expect(await s.useBackupCode("o1", "h1", T0 + 1)).toBe(true);
      expect(await s.useBackupCode("o1", "h1", T0 + 2)).toBe(false);
      expect(await s.remainingBackupCodes("o1")).toBe(2);
      await s.replaceBackupCodes("o1", ["h4"], T0 + 3);
      expect(await s.useBackupCode("o1", "h2", T0 + 4)).toBe(false);
      expect(await s.remainingBackupCodes("o1")).toBe(1);
      expect(await s.remainingBackupCodes("o2")).toBe(1);
      // Removing the operator removes their codes.
      expect(await s.remove("a@ops.test")).toBe(true);
      expect(await s.remainingBackupCodes("o1")).toBe(0);
    });

    test("the backup schedule: none until saved, then the saved JSON, replaced by the next save", async () => {
      expect(await s.backupSchedule()).toBeNull();
      await s.setBackupSchedule('{"enabled":true,"at_utc":"03:30","keep":5}');
      expect(await s.backupSchedule()).toBe('{"enabled":true,"at_utc":"03:30","keep":5}');
      await s.setBackupSchedule('{"enabled":false,"at_utc":"04:00","keep":2}');
      expect(await s.backupSchedule()).toBe('{"enabled":false,"at_utc":"04:00","keep":2}');
    });

    test("the audit log: newest first, paged, kept after the operator goes", async () => {
      for (let i = 0; i < 5; i++) await s.audit({ operatorId: "o1", operatorEmail: "a@ops.test", action: `act.${i}`, target: i % 2 ? `organization:t${i}` : null, ip: null, userAgent: null, detail: { i } }, T0 + i);
      const page = await s.auditPage(2, 1);
      expect(page.total).toBe(5);
      expect(page.rows.map((r) => [r.action, JSON.parse(r.detail).i, r.target])).toEqual([["act.3", 3, "organization:t3"], ["act.2", 2, null]]);
    });

    test("the console's reads: organizations with counts and search, mail waiting and failed, retry and discard, jobs, sizes", async () => {
      const acme = await signup(b.org, "acme", T0);
      await signup(b.org, "globex", T0 + 10);
      const all = await s.organizations("", 10, 0);
      expect(all.total).toBe(2);
      expect(all.rows.map((o) => [o.subdomain, Number(o.members), Number(o.deals)])).toEqual([["globex", 1, 0], ["acme", 1, 0]]);
      expect((await s.organizations("ACM", 10, 0)).rows.map((o) => o.subdomain)).toEqual(["acme"]);
      expect((await s.organizations("Org g", 10, 0)).rows.map((o) => o.subdomain)).toEqual(["globex"]);
      expect((await s.organizations("%", 10, 0)).total).toBe(0);
      expect((await s.organizations("", 1, 1)).rows.map((o) => o.subdomain)).toEqual(["acme"]);
      expect(await s.organizationCounts()).toEqual({ total: 2, disabled: 0 });

      const waiting = await b.org.mail.enqueue(mailTo(acme.tenantId, "x@acme.test"), T0);
      const failing = await b.org.mail.enqueue(mailTo(null, "y@ops.test"), T0 + 1);
      await b.org.mail.claimDue(T0 + 5, T0 + 1000, 1);
      await b.org.mail.markRetry(waiting, T0 + 60_000, "refused");
      await b.org.mail.claimDue(T0 + 5, T0 + 1000, 1);
      await b.org.mail.markFailed(failing, "gave up");
      const queue = await s.mailQueue(null, 10, 0);
      expect(queue.rows.map((m) => [m.id, m.status, m.subdomain])).toEqual([[failing, "failed", null], [waiting, "pending", "acme"]]);
      expect((await s.mailQueue("failed", 10, 0)).total).toBe(1);
      expect(await s.retryMail(failing, T0 + 10)).toBe(false);
      expect(await s.retryMail(waiting, T0 + 10)).toBe(true);
      expect((await b.org.mail.byId(waiting))!.next_attempt_at).toBe(T0 + 10);
      expect(await s.discardMail(failing)).toBe(true);
      expect(await s.discardMail(failing)).toBe(false);
      expect((await s.mailQueue(null, 10, 0)).total).toBe(1);

      expect(await s.jobs(10, 0)).toEqual({ rows: [], total: 0 });
      expect(await s.runningJobs()).toBe(0);
      const sizes = await s.sizes();
      expect(sizes.database_bytes).toBeGreaterThan(0);
      // This process, as the database sees it (PostgreSQL: its pool's connections by their name).
      const seen = await s.instances();
      const mine = seen.filter((i) => i.mine);
      expect(mine.map((i) => i.name)).toEqual([`workspace-suite:${process.pid}`]);
      expect(mine[0]!.connections).toBeGreaterThanOrEqual(1);
      expect(mine[0]!.since).toBeLessThanOrEqual(Date.now());
    });
  });
}
