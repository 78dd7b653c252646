/** Magic links and mailed account tokens, and the password writes: the same contract on every backend. */
import { describe, expect, test } from "bun:test";
import type { AccountTokenRow } from "../../src/auth/email/repo";
import type { OutgoingMail } from "../../src/mail/repo";
import { BACKENDS } from "./backends";
import { type AuthHarness, HARNESS_OUTBOX_SEAL, auditOf, useAuthHarness, sessionRow } from "./auth-harness";

const mail = (tenantId: string, kind: string): OutgoingMail => ({
  tenantId, kind, recipient: "ann@example.com", subject: "Sign in", text: "text body", html: "<p>html</p>", link: "https://sub-t1.example.com/x",
});
const link = (hash: string, over: Partial<{ tenant_id: string; user_id: string; expires_at: number; created_at: number }> = {}) => ({
  token_hash: hash, tenant_id: "t1", user_id: "u1", expires_at: 10_000, created_at: 1000, ...over,
});
const token = (hash: string, purpose: AccountTokenRow["purpose"], over: Partial<AccountTokenRow> = {}): Omit<AccountTokenRow, "used_at"> => ({
  token_hash: hash, purpose, tenant_id: "t1", user_id: "u1", email: "ann@example.com", expires_at: 10_000, created_at: 1000, ...over,
});

for (const backend of BACKENDS) {
  describe(`magic links, account tokens and passwords (${backend.name})`, () => {
    let h!: AuthHarness;
    useAuthHarness(backend, async (x) => {
      h = x;
      await x.tenant("t1");
      await x.tenant("t2");
      await x.tenant("t3", { disabledAt: 500 });
      await x.user("t1", "u1", "ann@example.com", { createdAt: 1000, verifiedAt: null });
      await x.user("t2", "u2", "ann@example.com", { createdAt: 900, verifiedAt: 950 });
      await x.user("t3", "u3", "ann@example.com", { createdAt: 800, verifiedAt: 850 });
      await x.user("t1", "u4", "bob@example.com", { createdAt: 1000, verifiedAt: null });
    });

    const count = async (sql: string, params: unknown[] = []) => Number((await h.q<{ n: number }>(sql, params))[0]!.n);
    const verifiedAt = async (id: string) => (await h.q<{ v: number | null }>("SELECT email_verified_at AS v FROM users WHERE id = $1", [id]))[0]!.v;

    test("magic link issue: the link, its mail and its audit row naming the mail, together", async () => {
      await h.a.links.issue(link("h1"), mail("t1", "magic_link"), auditOf("t1", "u1", "magic_link.requested"), 1000);
      const out = await h.q<{ id: string; kind: string; status: string; link: string }>("SELECT id, kind, status, link FROM mail_outbox");
      const mailId = out[0]?.id;
      // The link is stored sealed (src/mail/outbox-seal.ts) and opens to the one mailed.
      expect(out).toEqual([{ id: mailId!, kind: "magic_link", status: "pending", link: expect.stringMatching(/^v1\./) }]);
      expect(HARNESS_OUTBOX_SEAL.open({ id: mailId!, text_body: null, html_body: null, link: out[0]!.link }).link).toBe("https://sub-t1.example.com/x");
      const a = await h.q<{ detail: string }>("SELECT detail FROM audit_log WHERE action = 'magic_link.requested'");
      expect(JSON.parse(a[0]!.detail)).toEqual({ mail_id: mailId });
      expect(await h.a.links.live("t1", "h1", 2000)).toEqual({ token_hash: "h1", tenant_id: "t1", user_id: "u1", expires_at: 10_000, used_at: null, created_at: 1000 });
    });

    test("magic link issue is all or nothing: a failing audit leaves no link and no mail", async () => {
      await expect(
        // An audit row the database refuses (no action): the link and the mail go with it.
        h.a.links.issue(link("h1"), mail("t1", "magic_link"), auditOf("t1", "u1", null as unknown as string), 1000),
      ).rejects.toThrow();
      expect(await count("SELECT count(*) AS n FROM magic_links")).toBe(0);
      expect(await count("SELECT count(*) AS n FROM mail_outbox")).toBe(0);
    });

    test("targets: one tenant by address; across tenants proven first, disabled organizations left out", async () => {
      expect(await h.a.links.target("t1", "ann@example.com")).toMatchObject({ id: "u1", tenant_id: "t1", subdomain: "sub-t1", tenant_name: "Org t1", email_verified_at: null });
      expect(await h.a.links.target("t1", "nobody@example.com")).toBeNull();
      // u1 is unproven and u2 proven: only u2; u3's organization is disabled.
      expect((await h.a.links.targetsAnyTenant("ann@example.com")).map((u) => u.id)).toEqual(["u2"]);
      expect((await h.a.links.targetsAnyTenant("bob@example.com")).map((u) => u.id)).toEqual(["u4"]);
      expect(await h.a.links.targetsAnyTenant("nobody@example.com")).toEqual([]);
      for (let i = 0; i < 7; i++) {
        await h.tenant(`m${i}`);
        await h.user(`m${i}`, `mu${i}`, "many@example.com", { createdAt: 2000 - i });
      }
      expect((await h.a.links.targetsAnyTenant("many@example.com")).map((u) => u.id)).toEqual(["mu6", "mu5", "mu4", "mu3", "mu2"]); // oldest 5
      expect((await h.a.tokens.targetsAnyTenant("many@example.com")).map((u) => u.id)).toEqual(["mu6", "mu5", "mu4", "mu3", "mu2"]);
      expect((await h.a.tokens.targetsAnyTenant("ann@example.com")).map((u) => u.id)).toEqual(["u2"]);
      expect(await h.a.tokens.target("t2", "ann@example.com")).toMatchObject({ id: "u2", subdomain: "sub-t2", tenant_name: "Org t2" });
      expect(await h.a.tokens.targetById("t2", "u2")).toMatchObject({ email: "ann@example.com", subdomain: "sub-t2" });
      expect(await h.a.tokens.targetById("t1", "u2")).toBeNull(); // another organization's user
    });

    test("magic link consume: once, in its tenant, live; retires the user's other links and proves the address", async () => {
      for (const hash of ["h1", "h2"]) await h.a.links.issue(link(hash), mail("t1", "magic_link"), auditOf("t1", "u1", "magic_link.requested"), 1000);
      await h.a.links.issue(link("hb", { user_id: "u4" }), mail("t1", "magic_link"), auditOf("t1", "u4", "magic_link.requested"), 1000);
      await h.a.links.issue(link("old", { expires_at: 1500 }), mail("t1", "magic_link"), auditOf("t1", "u1", "magic_link.requested"), 1000);
      expect(await h.a.links.consume("old", "t1", 2000)).toBeNull(); // expired
      expect(await h.a.links.consume("h1", "t2", 2000)).toBeNull(); // another tenant
      expect(await h.a.links.consume("h1", "t1", 2000)).toEqual({ tenant_id: "t1", user_id: "u1" });
      expect(await h.a.links.consume("h1", "t1", 2001)).toBeNull();
      expect(await h.a.links.live("t1", "h2", 2001)).toBeNull(); // retired
      expect(await h.a.links.consume("h2", "t1", 2001)).toBeNull();
      expect(await h.a.links.live("t1", "hb", 2001)).not.toBeNull(); // someone else's stays
      expect(await verifiedAt("u1")).toBe(2000);
      expect(await verifiedAt("u2")).toBe(950); // already proven: left alone
    });

    test("lookups name the tenant: another organization's row with the same hash is never found; null looks in every one", async () => {
      // A token `<t2>.<secret>` hashes to a value no t1 row holds in practice; here t1 holds it anyway.
      await h.a.links.issue(link("same"), mail("t1", "magic_link"), auditOf("t1", "u1", "magic_link.requested"), 1000);
      await h.a.tokens.issue(token("same", "email_verify"), mail("t1", "email_verify"), auditOf("t1", "u1", "sent"), 1000);
      await h.a.tokens.issue(token("samep", "password_reset"), mail("t1", "password_reset"), auditOf("t1", "u1", "sent"), 1000);
      expect(await h.a.links.live("t2", "same", 2000)).toBeNull();
      expect(await h.a.links.live("t1", "same", 2000)).toMatchObject({ tenant_id: "t1", user_id: "u1" });
      // PostgreSQL: as a database upgraded while links without their organization were live.
      if (h.kind === "postgres") await h.q("INSERT INTO unnamed_links_until (until) VALUES (9000)");
      expect(await h.a.links.live(null, "same", 2000)).toMatchObject({ tenant_id: "t1", user_id: "u1" }); // mailed before links named their tenant
      expect(await h.a.links.live(null, "unknown", 2000)).toBeNull();
      expect(await h.a.tokens.live("t2", "same", "email_verify", 2000)).toBeNull();
      expect(await h.a.tokens.live(null, "same", "email_verify", 2000)).toMatchObject({ tenant_id: "t1", user_id: "u1" });
      expect(await h.a.tokens.live(null, "same", "password_reset", 2000)).toBeNull();
      expect(await h.a.tokens.verify("t2", "same", 2000, () => auditOf("t2", null, "email.verified"))).toBeNull();
      expect(await h.a.passwords.reset("t2", "samep", "hash", 2000, () => auditOf("t2", null, "password.reset"))).toBeNull();
      // Nothing was spent by the wrong organization: the right one still can, once.
      expect(await h.a.tokens.live("t1", "same", "email_verify", 2000)).not.toBeNull();
      expect(await h.a.tokens.verify("t1", "same", 2000, () => auditOf("t1", "u1", "email.verified"))).not.toBeNull();
      expect(await h.a.passwords.reset("t1", "samep", "hash", 2000, () => auditOf("t1", "u1", "password.reset"))).not.toBeNull();
      expect(await h.a.passwords.reset("t1", "samep", "hash", 2001, () => auditOf("t1", "u1", "password.reset"))).toBeNull();
    });

    test("race: one magic link used on three connections at once: one sign-in", async () => {
      for (let i = 0; i < 10; i++) {
        await h.a.links.issue(link(`r${i}`), mail("t1", "magic_link"), auditOf("t1", "u1", "magic_link.requested"), 1000);
        const got = await Promise.all([h.a.links.consume(`r${i}`, "t1", 2000), h.b.links.consume(`r${i}`, "t1", 2000), h.c.links.consume(`r${i}`, "t1", 2000)]);
        expect(got.filter((g) => g !== null).length).toBe(1);
      }
    });

    test("race: two of one user's links used at once on two connections: one sign-in, no deadlock", async () => {
      for (let i = 0; i < 8; i++) {
        await h.a.links.issue(link(`x${i}`), mail("t1", "magic_link"), auditOf("t1", "u1", "magic_link.requested"), 1000);
        await h.a.links.issue(link(`y${i}`), mail("t1", "magic_link"), auditOf("t1", "u1", "magic_link.requested"), 1000);
        const got = await Promise.all([h.a.links.consume(`x${i}`, "t1", 2000), h.b.links.consume(`y${i}`, "t1", 2000)]);
        expect(got.filter((g) => g !== null).length).toBe(1);
      }
    });

    test("race: two of one user's verification links redeemed at once: one, no deadlock", async () => {
      for (let i = 0; i < 8; i++) {
        await h.a.tokens.issue(token(`vx${i}`, "email_verify"), mail("t1", "email_verify"), auditOf("t1", "u1", "sent"), 1000);
        await h.a.tokens.issue(token(`vy${i}`, "email_verify"), mail("t1", "email_verify"), auditOf("t1", "u1", "sent"), 1000);
        const got = await Promise.all([
          h.a.tokens.verify("t1", `vx${i}`, 2000, () => auditOf("t1", "u1", "email.verified")),
          h.b.tokens.verify("t1", `vy${i}`, 2000, () => auditOf("t1", "u1", "email.verified")),
        ]);
        expect(got.filter((g) => g !== null).length).toBe(1);
      }
      expect(await count("SELECT count(*) AS n FROM audit_log WHERE action = 'email.verified'")).toBe(8);
    });

    test("purgeExpired drops expired links and tokens only", async () => {
      await h.a.links.issue(link("gone", { expires_at: 1500 }), mail("t1", "magic_link"), auditOf("t1", "u1", "x"), 1000);
      await h.a.links.issue(link("kept"), mail("t1", "magic_link"), auditOf("t1", "u1", "x"), 1000);
      expect(await h.a.links.purgeExpired(2000)).toBe(1);
      expect(await count("SELECT count(*) AS n FROM magic_links")).toBe(1);
      await h.a.tokens.issue(token("tg", "email_verify", { expires_at: 1500 }), mail("t1", "email_verify"), auditOf("t1", "u1", "x"), 1000);
      await h.a.tokens.issue(token("tk", "email_verify"), mail("t1", "email_verify"), auditOf("t1", "u1", "x"), 1000);
      expect(await h.a.tokens.purgeExpired(2000)).toBe(1);
      expect(await count("SELECT count(*) AS n FROM account_tokens")).toBe(1);
    });

    test("account token issue and live: by hash and purpose, live only", async () => {
      await h.a.tokens.issue(token("v1", "email_verify"), mail("t1", "email_verify"), auditOf("t1", "u1", "email.verification_sent"), 1000);
      const mailId = (await h.q<{ id: string }>("SELECT id FROM mail_outbox"))[0]!.id;
      const detail = (await h.q<{ detail: string }>("SELECT detail FROM audit_log WHERE action = 'email.verification_sent'"))[0]!.detail;
      expect(JSON.parse(detail)).toEqual({ mail_id: mailId });
      expect(await count("SELECT count(*) AS n FROM audit_log WHERE action = 'email.verification_sent'")).toBe(1);
      expect(await h.a.tokens.live("t1", "v1", "email_verify", 2000)).toEqual({ ...token("v1", "email_verify"), used_at: null });
      expect(await h.a.tokens.live("t1", "v1", "password_reset", 2000)).toBeNull();
      expect(await h.a.tokens.live("t1", "v1", "email_verify", 10_000)).toBeNull();
    });

    test("verify: spends the token, retires the others, proves the address it was mailed to, audits", async () => {
      await h.a.tokens.issue(token("v1", "email_verify"), mail("t1", "email_verify"), auditOf("t1", "u1", "sent"), 1000);
      await h.a.tokens.issue(token("v2", "email_verify"), mail("t1", "email_verify"), auditOf("t1", "u1", "sent"), 1000);
      await h.a.tokens.issue(token("p1", "password_reset"), mail("t1", "password_reset"), auditOf("t1", "u1", "sent"), 1000);
      const seen: boolean[] = [];
      const row = await h.a.tokens.verify("t1", "v1", 2000, (r, proven) => {
        seen.push(proven);
        return auditOf(r.tenant_id, r.user_id, "email.verified", { proven });
      });
      expect(row).toEqual({ ...token("v1", "email_verify"), used_at: 2000 });
      expect(seen).toEqual([true]);
      expect(await verifiedAt("u1")).toBe(2000);
      expect(await h.a.tokens.live("t1", "v2", "email_verify", 2000)).toBeNull(); // retired
      expect(await h.a.tokens.live("t1", "p1", "password_reset", 2000)).not.toBeNull(); // another purpose
      expect(await h.a.tokens.verify("t1", "v1", 2001, () => auditOf("t1", "u1", "email.verified"))).toBeNull();
      expect(await count("SELECT count(*) AS n FROM audit_log WHERE action = 'email.verified'")).toBe(1);
      // A token mailed to an address the user no longer has proves nothing.
      await h.a.tokens.issue(token("v3", "email_verify", { user_id: "u4", email: "old@example.com" }), mail("t1", "email_verify"), auditOf("t1", "u4", "sent"), 1000);
      expect(await h.a.tokens.verify("t1", "v3", 3000, (r, proven) => auditOf("t1", "u4", "email.verified", { proven }))).not.toBeNull();
      expect(await verifiedAt("u4")).toBeNull();
    });

    test("password reset: token spent once, hash set, sessions and challenges ended, address proven, audited", async () => {
      const s1 = sessionRow("t1", "u1");
      const s2 = sessionRow("t1", "u1");
      const bob = sessionRow("t1", "u4");
      for (const s of [s1, s2, bob]) await h.a.sessions.insertInTx(s);
      await h.a.sessions.openChallenge({ id: "ch1", tenant_id: "t1", user_id: "u1", method: "password", created_at: 1500, expires_at: 9000 }, auditOf("t1", "u1", "x"));
      await h.a.tokens.issue(token("p1", "password_reset"), mail("t1", "password_reset"), auditOf("t1", "u1", "sent"), 1000);
      await h.a.tokens.issue(token("p2", "password_reset"), mail("t1", "password_reset"), auditOf("t1", "u1", "sent"), 1000);
      const r = await h.a.passwords.reset("t1", "p1", "new-hash", 3000, (row, revoked) => auditOf(row.tenant_id, row.user_id, "password.reset", { revoked }));
      expect(r).toEqual({ row: { ...token("p1", "password_reset"), used_at: 3000 }, revoked: 2 });
      const u = (await h.q<{ password_hash: string; updated_at: number }>("SELECT password_hash, updated_at FROM users WHERE id = 'u1'"))[0]!;
      expect(u).toEqual({ password_hash: "new-hash", updated_at: 3000 });
      expect(await h.a.sessions.live("t1", "u1", 3000)).toEqual([]);
      expect((await h.a.sessions.principal(s1.tenant_id, s1.sid_hash))?.revoke_reason).toBe("password_reset");
      expect((await h.a.sessions.live("t1", "u4", 3000)).length).toBe(1);
      expect(await h.a.sessions.challenge("ch1", "t1", "u1", 3000)).toBeNull();
      expect(await h.a.tokens.live("t1", "p2", "password_reset", 3000)).toBeNull();
      expect(await verifiedAt("u1")).toBe(3000);
      expect(JSON.parse((await h.q<{ detail: string }>("SELECT detail FROM audit_log WHERE action = 'password.reset'"))[0]!.detail)).toEqual({ revoked: 2 });
      expect(await h.a.passwords.reset("t1", "p1", "other", 3001, () => auditOf("t1", "u1", "password.reset"))).toBeNull();
    });

    test("race: two resets with one token on two connections: one sets the password", async () => {
      for (let i = 0; i < 5; i++) {
        await h.a.tokens.issue(token(`p${i}`, "password_reset"), mail("t1", "password_reset"), auditOf("t1", "u1", "sent"), 1000);
        const got = await Promise.all([
          h.a.passwords.reset("t1", `p${i}`, `hash-a${i}`, 3000, () => auditOf("t1", "u1", "password.reset")),
          h.b.passwords.reset("t1", `p${i}`, `hash-b${i}`, 3000, () => auditOf("t1", "u1", "password.reset")),
        ]);
        const winners = got.filter((g) => g !== null);
        expect(winners.length).toBe(1);
        const hash = (await h.q<{ h: string }>("SELECT password_hash AS h FROM users WHERE id = 'u1'"))[0]!.h;
        expect(hash).toBe(got[0] ? `hash-a${i}` : `hash-b${i}`);
      }
    });

    test("race: a reset and a change of one user on two connections: both complete, no deadlock", async () => {
      for (let i = 0; i < 8; i++) {
        const mine = sessionRow("t1", "u1");
        await h.a.sessions.insertInTx(mine);
        await h.a.tokens.issue(token(`pc${i}`, "password_reset"), mail("t1", "password_reset"), auditOf("t1", "u1", "sent"), 1000);
        const [reset, changed] = await Promise.all([
          h.a.passwords.reset("t1", `pc${i}`, `reset-${i}`, 3000, () => auditOf("t1", "u1", "password.reset")),
          h.b.passwords.change("t1", "u1", mine.id, `change-${i}`, 3000, () => auditOf("t1", "u1", "password.changed")),
        ]);
        expect(typeof changed).toBe("number");
        // The reset wins unless the change retired its token first.
        const hash = (await h.q<{ h: string }>("SELECT password_hash AS h FROM users WHERE id = 'u1'"))[0]!.h;
        expect([`reset-${i}`, `change-${i}`]).toContain(hash);
        if (reset === null) expect(hash).toBe(`change-${i}`);
      }
    });

    test("password change keeps the caller's session and ends the others", async () => {
      const mine = sessionRow("t1", "u1");
      const other = sessionRow("t1", "u1");
      await h.a.sessions.insertInTx(mine);
      await h.a.sessions.insertInTx(other);
      await h.a.tokens.issue(token("p1", "password_reset"), mail("t1", "password_reset"), auditOf("t1", "u1", "sent"), 1000);
      const n = await h.a.passwords.change("t1", "u1", mine.id, "changed-hash", 4000, (revoked) => auditOf("t1", "u1", "password.changed", { revoked }));
      expect(n).toBe(1);
      expect((await h.a.sessions.live("t1", "u1", 4000)).map((s) => s.id)).toEqual([mine.id]);
      expect((await h.a.sessions.principal(other.tenant_id, other.sid_hash))?.revoke_reason).toBe("password_changed");
      expect(await h.a.tokens.live("t1", "p1", "password_reset", 4000)).toBeNull(); // an outstanding reset is retired
      expect(await verifiedAt("u1")).toBeNull(); // a change proves no address
      expect(await count("SELECT count(*) AS n FROM audit_log WHERE action = 'password.changed'")).toBe(1);
    });
  });
}
