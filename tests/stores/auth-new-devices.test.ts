/** Known devices and the new-device mail's "this wasn't me" notices: the same contract on every backend. */
import { describe, expect, test } from "bun:test";
import type { KnownDeviceRow, SignInNoticeRow } from "../../src/auth/new-device/repo";
import type { OutgoingMail } from "../../src/mail/repo";
import { BACKENDS } from "./backends";
import { type AuthHarness, auditOf, sessionRow, useAuthHarness } from "./auth-harness";

const mail: OutgoingMail = { tenantId: "t1", kind: "new_device", recipient: "ann@example.com", subject: "New sign-in", text: "text", html: "<p>html</p>", link: "https://sub-t1.example.com/not-me#token=x" };
const device = (hash: string, over: Partial<KnownDeviceRow> = {}): KnownDeviceRow => ({
  tenant_id: "t1", user_id: "u1", device_hash: hash, kind: "cookie", noticed_at: 1000, last_seen_at: 1000, ...over,
});
const notice = (hash: string, sessionId: string, sessionCreatedAt: number, over: Partial<SignInNoticeRow> = {}): Omit<SignInNoticeRow, "used_at"> => ({
  tenant_id: "t1", token_hash: hash, user_id: "u1", session_id: sessionId, session_created_at: sessionCreatedAt, created_at: 1000, expires_at: 10_000, ...over,
});

for (const backend of BACKENDS) {
  describe(`known devices and sign-in notices (${backend.name})`, () => {
    let h!: AuthHarness;
    useAuthHarness(backend, async (x) => {
      h = x;
      await x.tenant("t1");
      await x.tenant("t2");
      await x.user("t1", "u1", "ann@example.com");
      await x.user("t1", "u2", "bob@example.com");
      await x.user("t2", "u3", "ann@example.com");
    });
    const revoked = async () =>
      (await h.q<{ id: string; revoke_reason: string | null }>("SELECT id, revoke_reason FROM sessions ORDER BY created_at, id")).map((r) => [r.id, r.revoke_reason]);

    test("remember inserts, then moves last_seen_at on and keeps the latest noticed_at; known is per organization and user", async () => {
      await h.a.newDevices.remember(device("d1"));
      await h.a.newDevices.remember(device("d1", { noticed_at: 500, last_seen_at: 3000 }));
      expect(await h.a.newDevices.known("t1", "u1", "d1")).toEqual(device("d1", { noticed_at: 1000, last_seen_at: 3000 }));
      await h.a.newDevices.remember(device("d1", { noticed_at: 4000, last_seen_at: 4000 }));
      expect(await h.a.newDevices.known("t1", "u1", "d1")).toMatchObject({ noticed_at: 4000, last_seen_at: 4000 });
      expect(await h.a.newDevices.known("t1", "u2", "d1")).toBeNull();
      expect(await h.a.newDevices.known("t2", "u1", "d1")).toBeNull();
    });

    test("notice writes the devices, the notice, the mail and the audit row naming the mail, together", async () => {
      await h.a.newDevices.notice([device("c1"), device("s1", { kind: "source" })], notice("n1", "s-1", 2000), mail, auditOf("t1", "u1", "login.new_device"), 1000);
      expect(await h.a.newDevices.known("t1", "u1", "s1")).toMatchObject({ kind: "source" });
      const out = await h.q<{ id: string; kind: string }>("SELECT id, kind FROM mail_outbox");
      expect(out).toEqual([{ id: out[0]!.id, kind: "new_device" }]);
      const a = await h.q<{ detail: string }>("SELECT detail FROM audit_log WHERE action = 'login.new_device'");
      expect(JSON.parse(a[0]!.detail)).toEqual({ mail_id: out[0]!.id });
    });

    test("notice is all or nothing: a failing audit leaves no device, notice or mail", async () => {
      await expect(h.a.newDevices.notice([device("c1")], notice("n1", "s-1", 2000), mail, auditOf("t1", "u1", null as unknown as string), 1000)).rejects.toThrow();
      expect(await h.a.newDevices.known("t1", "u1", "c1")).toBeNull();
      expect(await h.q("SELECT * FROM sign_in_notices")).toEqual([]);
      expect(await h.q("SELECT * FROM mail_outbox")).toEqual([]);
    });

    test("notMe ends the session, every later one of the user and their challenges; not earlier ones, not another user's; once", async () => {
      const early = sessionRow("t1", "u1", { created_at: 1000 });
      const intruder = sessionRow("t1", "u1", { created_at: 2000 });
      const later = sessionRow("t1", "u1", { created_at: 3000 });
      const other = sessionRow("t1", "u2", { created_at: 3000 });
      for (const s of [early, intruder, later, other]) await h.a.sessions.insertInTx(s);
      await h.q("INSERT INTO sign_in_challenges (id, tenant_id, user_id, method, created_at, expires_at) VALUES ('c1', 't1', 'u1', 'password', 2500, 9000), ('c2', 't1', 'u2', 'password', 2500, 9000)");
      await h.a.newDevices.notice([device("c1")], notice("n1", intruder.id, intruder.created_at), mail, auditOf("t1", "u1", "login.new_device"), 2000);
      const done = await h.a.newDevices.notMe("t1", "n1", 4000, (row, ended) => auditOf(row.tenant_id, row.user_id, "login.not_me", { ended }));
      expect(done).toEqual({ row: { ...notice("n1", intruder.id, 2000), used_at: 4000 }, ended: 2 });
      const byId = Object.fromEntries(await revoked());
      expect([byId[early.id], byId[intruder.id], byId[later.id], byId[other.id]]).toEqual([null, "not_me", "not_me", null]);
      expect(await h.q("SELECT id FROM sign_in_challenges")).toEqual([{ id: "c2" }]);
      expect(JSON.parse((await h.q<{ detail: string }>("SELECT detail FROM audit_log WHERE action = 'login.not_me'"))[0]!.detail)).toEqual({ ended: 2 });
      expect(await h.a.newDevices.notMe("t1", "n1", 4001, (row) => auditOf(row.tenant_id, row.user_id, "login.not_me"))).toBeNull();
    });

    test("notMe refuses an expired notice, another organization's hash, and an unknown one; writes nothing", async () => {
      await h.a.newDevices.notice([device("c1")], notice("n1", "s-x", 2000), mail, auditOf("t1", "u1", "login.new_device"), 2000);
      const entry = (row: SignInNoticeRow) => auditOf(row.tenant_id, row.user_id, "login.not_me");
      expect(await h.a.newDevices.notMe("t1", "n1", 10_000, entry)).toBeNull();
      expect(await h.a.newDevices.notMe("t2", "n1", 3000, entry)).toBeNull();
      expect(await h.a.newDevices.notMe("t1", "nope", 3000, entry)).toBeNull();
      expect(await h.q("SELECT * FROM audit_log WHERE action = 'login.not_me'")).toEqual([]);
    });

    test("two redeems at once (two instances on PostgreSQL): exactly one wins", async () => {
      await h.a.newDevices.notice([device("c1")], notice("n1", "s-x", 2000), mail, auditOf("t1", "u1", "login.new_device"), 2000);
      const entry = (row: SignInNoticeRow) => auditOf(row.tenant_id, row.user_id, "login.not_me");
      const rs = await Promise.all([h.b.newDevices.notMe("t1", "n1", 3000, entry), h.c.newDevices.notMe("t1", "n1", 3000, entry)]);
      expect(rs.filter((r) => r !== null)).toHaveLength(1);
    });

    test("purgeExpired deletes expired notices and devices not seen since the bound", async () => {
      await h.a.newDevices.notice([device("old", { last_seen_at: 100 })], notice("n1", "s-x", 2000, { expires_at: 500 }), mail, auditOf("t1", "u1", "login.new_device"), 2000);
      await h.a.newDevices.remember(device("fresh", { last_seen_at: 5000 }));
      expect(await h.a.newDevices.purgeExpired(1000, 1000)).toBe(2);
      expect(await h.a.newDevices.known("t1", "u1", "old")).toBeNull();
      expect(await h.a.newDevices.known("t1", "u1", "fresh")).not.toBeNull();
      expect(await h.q("SELECT * FROM sign_in_notices")).toEqual([]);
    });
  });
}
