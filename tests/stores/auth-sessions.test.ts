/** Sessions and sign-in challenges: the same contract on every backend, races included. */
import { describe, expect, test } from "bun:test";
import { BACKENDS } from "./backends";
import { type AuthHarness, auditOf, useAuthHarness, sessionRow } from "./auth-harness";

for (const backend of BACKENDS) {
  describe(`sessions store (${backend.name})`, () => {
    let h!: AuthHarness;
    useAuthHarness(backend, async (x) => {
      h = x;
      await x.tenant("t1");
      await x.tenant("t2");
      await x.user("t1", "u1", "ann@example.com");
      await x.user("t1", "u2", "bob@example.com");
      await x.user("t2", "u3", "ann@example.com");
    });

    const audits = (action: string) => h.q<{ n: number }>("SELECT count(*) AS n FROM audit_log WHERE action = $1", [action]).then((r) => Number(r[0]!.n));

    test("insertAudited writes the session and its audit row; principal joins user and tenant", async () => {
      const s = sessionRow("t1", "u1");
      await h.a.sessions.insertAudited(s, auditOf("t1", "u1", "login.success"), 2000);
      expect(await audits("login.success")).toBe(1);
      const p = await h.a.sessions.principal(s.tenant_id, s.sid_hash);
      expect(p).toMatchObject({ id: s.id, tenant_id: "t1", user_id: "u1", method: "password", created_at: 2000, last_used_at: 2000, expires_at: 100_000 });
      expect(p).toMatchObject({ proven_at: 2000, revoked_at: null, revoke_reason: null, refresh_gen: 0, rotated_at: null, ip: "127.0.0.1", user_agent: "test" });
      expect(p).toMatchObject({ role: "member", email: "ann@example.com", subdomain: "sub-t1", tenant_disabled_at: null });
      expect(await h.a.sessions.principal("t1", "sid-unknown")).toBeNull();
    });

    test("a session is found, touched, rotated and proven only under its own organization (the tokens' tid)", async () => {
      const s = sessionRow("t1", "u1");
      await h.a.sessions.insertInTx(s);
      expect(await h.a.sessions.principal("t2", s.sid_hash)).toBeNull();
      expect(await h.a.sessions.access("t2", s.sid_hash, "")).toBeNull();
      expect((await h.a.sessions.access("t1", s.sid_hash, ""))?.id).toBe(s.id);
      await h.a.sessions.touch("t2", s.id, 3000);
      expect(await h.a.sessions.rotate("t2", s.id, 0, 3000)).toBe(false);
      expect(await h.a.sessions.prove("t2", s.id, auditOf("t2", "u1", "reauth.success"), 3000)).toBe(false);
      expect(await h.a.sessions.principal("t1", s.sid_hash)).toMatchObject({ last_used_at: 2000, refresh_gen: 0, rotated_at: null, proven_at: 2000 });
    });

    test("insertInTx writes a session inside a caller's transaction", async () => {
      const s = sessionRow("t2", "u3");
      await h.a.sessions.insertInTx(s);
      expect((await h.a.sessions.principal(s.tenant_id, s.sid_hash))?.user_id).toBe("u3");
    });

    test("principal shows a disabled organization", async () => {
      await h.tenant("t3", { disabledAt: 5000 });
      await h.user("t3", "u9", "x@example.com");
      const s = sessionRow("t3", "u9");
      await h.a.sessions.insertInTx(s);
      expect((await h.a.sessions.principal(s.tenant_id, s.sid_hash))?.tenant_disabled_at).toBe(5000);
    });

    test("touch moves last_used_at", async () => {
      const s = sessionRow("t1", "u1");
      await h.a.sessions.insertInTx(s);
      await h.a.sessions.touch(s.tenant_id, s.id, 3000);
      expect((await h.a.sessions.principal(s.tenant_id, s.sid_hash))?.last_used_at).toBe(3000);
    });

    test("rotate is a compare-and-swap on the generation, refused once revoked", async () => {
      const s = sessionRow("t1", "u1");
      await h.a.sessions.insertInTx(s);
      expect(await h.a.sessions.rotate(s.tenant_id, s.id, 0, 3000)).toBe(true);
      expect(await h.a.sessions.rotate(s.tenant_id, s.id, 0, 3001)).toBe(false);
      expect(await h.a.sessions.principal(s.tenant_id, s.sid_hash)).toMatchObject({ refresh_gen: 1, rotated_at: 3000, last_used_at: 3000 });
      await h.a.sessions.revoke("t1", "u1", s.id, "logout", 3500);
      expect(await h.a.sessions.rotate(s.tenant_id, s.id, 1, 4000)).toBe(false);
    });

    test("race: two rotations of the same generation, on two connections: exactly one wins", async () => {
      for (let round = 0; round < 10; round++) {
        const s = sessionRow("t1", "u1");
        await h.a.sessions.insertInTx(s);
        const won = await Promise.all([h.a.sessions.rotate(s.tenant_id, s.id, 0, 3000), h.b.sessions.rotate(s.tenant_id, s.id, 0, 3001), h.b.sessions.rotate(s.tenant_id, s.id, 0, 3002)]);
        expect(won.filter(Boolean).length).toBe(1);
        expect((await h.a.sessions.principal(s.tenant_id, s.sid_hash))?.refresh_gen).toBe(1);
      }
    });

    test("prove records a fresh proof with its audit row; false on an ended session", async () => {
      const s = sessionRow("t1", "u1");
      await h.a.sessions.insertInTx(s);
      expect(await h.a.sessions.prove(s.tenant_id, s.id, auditOf("t1", "u1", "reauth.success"), 5000)).toBe(true);
      expect(await h.a.sessions.principal(s.tenant_id, s.sid_hash)).toMatchObject({ proven_at: 5000, last_used_at: 5000 });
      expect(await h.a.sessions.prove(s.tenant_id, s.id, auditOf("t1", "u1", "reauth.success"), 200_000)).toBe(false); // expired
      await h.a.sessions.revoke("t1", "u1", s.id, "logout", 6000);
      expect(await h.a.sessions.prove(s.tenant_id, s.id, auditOf("t1", "u1", "reauth.success"), 7000)).toBe(false);
      expect(await audits("reauth.success")).toBe(1);
    });

    test("revoke ends one live session of its owner only", async () => {
      const s = sessionRow("t1", "u1");
      await h.a.sessions.insertInTx(s);
      expect(await h.a.sessions.revoke("t1", "u2", s.id, "x", 3000)).toBe(0); // not the owner
      expect(await h.a.sessions.revoke("t2", "u1", s.id, "x", 3000)).toBe(0); // not the tenant
      expect(await h.a.sessions.revoke("t1", "u1", s.id, "logout", 3000)).toBe(1);
      expect(await h.a.sessions.revoke("t1", "u1", s.id, "logout", 3001)).toBe(0);
      expect(await h.a.sessions.principal(s.tenant_id, s.sid_hash)).toMatchObject({ revoked_at: 3000, revoke_reason: "logout" });
      const old = sessionRow("t1", "u1", { expires_at: 2500 });
      await h.a.sessions.insertInTx(old);
      expect(await h.a.sessions.revoke("t1", "u1", old.id, "logout", 3000)).toBe(0); // past its end
    });

    test("revokeOthers keeps one; live lists newest first; revokeAll ends sessions and challenges", async () => {
      const s1 = sessionRow("t1", "u1", { created_at: 2000 });
      const s2 = sessionRow("t1", "u1", { created_at: 2100 });
      const s3 = sessionRow("t1", "u1", { created_at: 2200 });
      const gone = sessionRow("t1", "u1", { created_at: 2300, expires_at: 2900 });
      const bob = sessionRow("t1", "u2");
      for (const s of [s1, s2, s3, gone, bob]) await h.a.sessions.insertInTx(s);
      expect((await h.a.sessions.live("t1", "u1", 3000)).map((s) => s.id)).toEqual([s3.id, s2.id, s1.id]);
      expect(await h.a.sessions.revokeOthers("t1", "u1", s2.id, "others", 3000)).toBe(3); // s1, s3 and the expired one
      expect((await h.a.sessions.live("t1", "u1", 3000)).map((s) => s.id)).toEqual([s2.id]);
      const c = { id: "ch1", tenant_id: "t1", user_id: "u1", method: "password", created_at: 3000, expires_at: 9000 };
      await h.a.sessions.openChallenge(c, auditOf("t1", "u1", "2fa.challenge"));
      expect(await h.a.sessions.revokeAll("t1", "u1", "logout_all", 4000)).toBe(1);
      expect(await h.a.sessions.live("t1", "u1", 4000)).toEqual([]);
      expect(await h.a.sessions.challenge("ch1", "t1", "u1", 4000)).toBeNull();
      expect((await h.a.sessions.live("t1", "u2", 4000)).length).toBe(1); // someone else's stays
    });

    test("purgeExpired drops ended sessions and challenges", async () => {
      const old = sessionRow("t1", "u1", { expires_at: 1500 });
      const fresh = sessionRow("t1", "u1");
      await h.a.sessions.insertInTx(old);
      await h.a.sessions.insertInTx(fresh);
      await h.a.sessions.openChallenge({ id: "c-old", tenant_id: "t1", user_id: "u1", method: "password", created_at: 1000, expires_at: 1400 }, auditOf("t1", "u1", "2fa.challenge"));
      await h.a.sessions.openChallenge({ id: "c-new", tenant_id: "t1", user_id: "u1", method: "password", created_at: 1000, expires_at: 9000 }, auditOf("t1", "u1", "2fa.challenge"));
      expect(await h.a.sessions.purgeExpired(1500)).toBe(2);
      expect(await h.a.sessions.principal(old.tenant_id, old.sid_hash)).toBeNull();
      expect(await h.a.sessions.principal(fresh.tenant_id, fresh.sid_hash)).not.toBeNull();
      expect(await h.a.sessions.challenge("c-new", "t1", "u1", 2000)).not.toBeNull();
    });

    test("challenges: opened with an audit row, read by their owner while live, ended", async () => {
      const c = { id: "ch1", tenant_id: "t1", user_id: "u1", method: "password", created_at: 3000, expires_at: 9000 };
      await h.a.sessions.openChallenge(c, auditOf("t1", "u1", "2fa.challenge"));
      expect(await audits("2fa.challenge")).toBe(1);
      expect(await h.a.sessions.challenge("ch1", "t1", "u1", 4000)).toEqual(c);
      expect(await h.a.sessions.challenge("ch1", "t1", "u2", 4000)).toBeNull();
      expect(await h.a.sessions.challenge("ch1", "t2", "u1", 4000)).toBeNull();
      expect(await h.a.sessions.challenge("ch1", "t1", "u1", 9000)).toBeNull(); // expired
      expect(await h.a.sessions.endChallenges("t1", "u1")).toBe(1);
      expect(await h.a.sessions.challenge("ch1", "t1", "u1", 4000)).toBeNull();
    });

    test("spendChallengeForSession: the session and the spend together, once", async () => {
      const c = { id: "ch1", tenant_id: "t1", user_id: "u1", method: "password", created_at: 3000, expires_at: 9000 };
      await h.a.sessions.openChallenge(c, auditOf("t1", "u1", "2fa.challenge"));
      const s = sessionRow("t1", "u1", { method: "password+2fa" });
      expect(await h.a.sessions.spendChallengeForSession(c, s, auditOf("t1", "u1", "login.success"), 4000)).toBe(true);
      expect((await h.a.sessions.principal(s.tenant_id, s.sid_hash))?.method).toBe("password+2fa");
      const again = sessionRow("t1", "u1");
      expect(await h.a.sessions.spendChallengeForSession(c, again, auditOf("t1", "u1", "login.success"), 4001)).toBe(false);
      expect(await h.a.sessions.principal(again.tenant_id, again.sid_hash)).toBeNull();
      const late = { ...c, id: "ch2", expires_at: 5000 };
      await h.a.sessions.openChallenge(late, auditOf("t1", "u1", "2fa.challenge"));
      expect(await h.a.sessions.spendChallengeForSession(late, sessionRow("t1", "u1"), auditOf("t1", "u1", "login.success"), 5000)).toBe(false);
      expect(await audits("login.success")).toBe(1);
    });

    test("race: two verifies of one challenge on two connections: exactly one session", async () => {
      for (let round = 0; round < 10; round++) {
        const c = { id: `ch-${round}`, tenant_id: "t1", user_id: "u1", method: "password", created_at: 3000, expires_at: 9000 };
        await h.a.sessions.openChallenge(c, auditOf("t1", "u1", "2fa.challenge"));
        const [s1, s2] = [sessionRow("t1", "u1"), sessionRow("t1", "u1")];
        const won = await Promise.all([
          h.a.sessions.spendChallengeForSession(c, s1, auditOf("t1", "u1", "login.success"), 4000),
          h.b.sessions.spendChallengeForSession(c, s2, auditOf("t1", "u1", "login.success"), 4000),
        ]);
        expect(won.filter(Boolean).length).toBe(1);
        const opened = [await h.a.sessions.principal(s1.tenant_id, s1.sid_hash), await h.a.sessions.principal(s2.tenant_id, s2.sid_hash)].filter((p) => p !== null);
        expect(opened.length).toBe(1);
      }
      expect(await audits("login.success")).toBe(10);
    });

    test("race: logout-all against a verify: no session survives unrevoked", async () => {
      for (let round = 0; round < 10; round++) {
        const c = { id: `ch-${round}`, tenant_id: "t1", user_id: "u1", method: "password", created_at: 3000, expires_at: 9000 };
        await h.a.sessions.openChallenge(c, auditOf("t1", "u1", "2fa.challenge"));
        const s = sessionRow("t1", "u1");
        await Promise.all([
          h.a.sessions.spendChallengeForSession(c, s, auditOf("t1", "u1", "login.success"), 4000),
          h.b.sessions.revokeAll("t1", "u1", "logout_all", 4000),
        ]);
        const p = await h.a.sessions.principal(s.tenant_id, s.sid_hash);
        // Either the verify lost the challenge (no session), or its session was revoked too.
        expect(p === null || p.revoked_at !== null).toBe(true);
      }
    });
  });
}
