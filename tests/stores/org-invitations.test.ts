import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { newId } from "../../src/kernel/ids";
import type { InviteWrite } from "../../src/team/invitations-repo";
import { BACKENDS } from "./backends";
import { T0, type Org, type OrgBackend, mailTo, orgBackend, signup } from "./org-fixture";

const DAY = 86_400_000;
const who = { ip: "10.0.0.1", userAgent: "ua" };

for (const backend of BACKENDS) {
  describe(`invitations store (${backend.name})`, () => {
    let b: OrgBackend;
    beforeAll(async () => {
      b = orgBackend(await backend.fresh());
    });
    afterAll(() => b.close());

    const write = (t: { tenantId: string; adminId: string }, email: string, over: Partial<InviteWrite> = {}): InviteWrite => ({
      id: newId(),
      tenantId: t.tenantId,
      email,
      profileId: null,
      profileNamed: false,
      invitedBy: t.adminId,
      tokenHash: newId(),
      expiresAt: T0 + DAY,
      mail: mailTo(t.tenantId, email),
      who,
      ...over,
    });
    const accept = (org: Org, tenantId: string, tokenHash: string, now = T0 + 1000) =>
      org.invitations.accept(
        {
          tenantId,
          tokenHash,
          user: { id: newId(), full_name: "New Person", password_hash: "hash" },
          session: { id: newId(), sid_hash: newId(), method: "invitation", created_at: now, expires_at: now + DAY, proven_at: now, ip: null, user_agent: null },
          who,
        },
        now,
      );
    const outboxFor = async (recipient: string) => (await b.org.mail.list(1000)).filter((m) => m.recipient === recipient);

    test("invite, resend (same id, new token, profile kept unless named), and a member's address", async () => {
      const t = await signup(b.org, "invite");
      const w = write(t, "ivy@x.test", { profileId: t.adminProfileId, profileNamed: true });
      const first = await b.org.invitations.invite(w, T0);
      expect(first).toMatchObject({ kind: "created", row: { id: w.id, email: "ivy@x.test", profile_id: t.adminProfileId, token_hash: w.tokenHash, accepted_at: null } });
      expect(await b.org.invitations.byTokenHash(w.tenantId, w.tokenHash)).toEqual((first as { row: unknown }).row as never);
      const again = write(t, "ivy@x.test", { profileId: null, profileNamed: false, expiresAt: T0 + 2 * DAY });
      const second = await b.org.invitations.invite(again, T0 + 10);
      expect(second).toMatchObject({ kind: "resent", row: { id: w.id, token_hash: again.tokenHash, expires_at: T0 + 2 * DAY, profile_id: t.adminProfileId, updated_at: T0 + 10 } });
      expect(await b.org.invitations.byTokenHash(w.tenantId, w.tokenHash)).toBeNull();
      const named = await b.org.invitations.invite(write(t, "ivy@x.test", { profileId: null, profileNamed: true }), T0 + 20);
      expect(named).toMatchObject({ kind: "resent", row: { id: w.id, profile_id: null } });
      expect(await outboxFor("ivy@x.test")).toHaveLength(3);
      expect((await b.org.security.auditForTenant(t.tenantId, 3)).map((a) => [a.action, a.ip, JSON.parse(a.detail!).invitation_id])).toEqual([
        ["invitation.resent", "10.0.0.1", w.id],
        ["invitation.resent", "10.0.0.1", w.id],
        ["invitation.created", "10.0.0.1", w.id],
      ]);
      expect(await b.org.invitations.invite(write(t, "admin@invite.test"), T0)).toEqual({ kind: "member" });
      expect(await outboxFor("admin@invite.test")).toHaveLength(0);
    });

    test("accept: the member (role from the profile), their session, the spent invitation, once", async () => {
      const t = await signup(b.org, "accept");
      const w = write(t, "ann@x.test", { profileId: t.adminProfileId, profileNamed: true });
      await b.org.invitations.invite(w, T0);
      const r = await accept(b.org, w.tenantId, w.tokenHash, T0 + 500);
      if (r.kind !== "accepted") throw new Error(r.kind);
      expect(r.user).toMatchObject({ tenant_id: t.tenantId, email: "ann@x.test", role: "admin", profile_id: t.adminProfileId, email_verified_at: T0 + 500 });
      expect(r.invitation).toMatchObject({ id: w.id, accepted_at: T0 + 500, accepted_user_id: r.user.id });
      expect(await b.org.users.byId(t.tenantId, r.user.id)).toMatchObject({ email: "ann@x.test", role: "admin", full_name: "New Person" });
      expect(Number(await b.value("SELECT count(*) AS n FROM sessions WHERE tenant_id = $1 AND user_id = $2", t.tenantId, r.user.id))).toBe(1);
      expect((await b.org.security.auditForTenant(t.tenantId, 1))[0]).toMatchObject({ action: "invitation.accepted", user_id: r.user.id });
      expect(await accept(b.org, w.tenantId, w.tokenHash, T0 + 600)).toEqual({ kind: "invalid" });
      expect(await accept(b.org, t.tenantId, "unknown")).toEqual({ kind: "invalid" });
    });

    test("by (tenant, hash): another organization's invitation with the same hash is neither read nor accepted; null looks in every one", async () => {
      const t = await signup(b.org, "keyed");
      const other = await signup(b.org, "keyed-other");
      const w = write(t, "kay@x.test");
      await b.org.invitations.invite(w, T0);
      expect(await b.org.invitations.byTokenHash(other.tenantId, w.tokenHash)).toBeNull();
      expect(await accept(b.org, other.tenantId, w.tokenHash)).toEqual({ kind: "invalid" });
      // PostgreSQL: as a database upgraded while links without their organization were live.
      if (b.kind === "postgres") await b.value("INSERT INTO unnamed_links_until (until) VALUES (8e15) RETURNING until");
      expect(await b.org.invitations.byTokenHash(null, w.tokenHash)).toMatchObject({ id: w.id, tenant_id: t.tenantId }); // a token mailed before tokens named their tenant
      expect(await b.org.invitations.byTokenHash(null, "unknown")).toBeNull();
      expect((await accept(b.org, t.tenantId, w.tokenHash)).kind).toBe("accepted");
    });

    test("accept refuses an expired or revoked invitation, and an address that became a member", async () => {
      const t = await signup(b.org, "refusals");
      const expired = write(t, "late@x.test", { expiresAt: T0 + 100 });
      await b.org.invitations.invite(expired, T0);
      expect(await accept(b.org, expired.tenantId, expired.tokenHash, T0 + 100)).toEqual({ kind: "invalid" });
      const revoked = write(t, "gone@x.test");
      await b.org.invitations.invite(revoked, T0);
      await b.org.invitations.revoke(t.tenantId, revoked.id, t.adminId, who, T0 + 1);
      expect(await accept(b.org, revoked.tenantId, revoked.tokenHash, T0 + 2)).toEqual({ kind: "invalid" });
      const taken = write(t, "twin@x.test");
      await b.org.invitations.invite(taken, T0);
      await b.value(
        "INSERT INTO users (id, tenant_id, email, role, password_hash, created_at, updated_at) VALUES ($1, $2, 'twin@x.test', 'member', 'h', $3, $3)",
        newId(),
        t.tenantId,
        T0,
      );
      expect(await accept(b.org, taken.tenantId, taken.tokenHash, T0 + 3)).toEqual({ kind: "member" });
      expect((await b.org.invitations.byId(t.tenantId, taken.id))!.accepted_at).toBeNull();
    });

    test("an accept failing at its session leaves the invitation pending and no member", async () => {
      const t = await signup(b.org, "half-accept");
      const w = write(t, "half@x.test");
      await b.org.invitations.invite(w, T0);
      const sessionId = await b.value<string>("SELECT id FROM sessions WHERE tenant_id = $1", t.tenantId);
      const e = await b.org.invitations
        .accept(
          {
            tenantId: w.tenantId,
            tokenHash: w.tokenHash,
            user: { id: newId(), full_name: null, password_hash: "h" },
            session: { id: sessionId, sid_hash: newId(), method: "invitation", created_at: T0, expires_at: T0 + DAY, proven_at: T0, ip: null, user_agent: null },
            who,
          },
          T0 + 1,
        )
        .catch((x: unknown) => x);
      expect(e).toBeInstanceOf(Error);
      expect(await b.org.users.byEmail(t.tenantId, "half@x.test")).toBeNull();
      expect((await b.org.invitations.byId(t.tenantId, w.id))!.accepted_at).toBeNull();
      expect((await accept(b.org, w.tenantId, w.tokenHash, T0 + 2)).kind).toBe("accepted");
    });

    test("one invitation accepted twice at once: one member, one session, the other answered invalid", async () => {
      for (let i = 0; i < 5; i++) {
        const t = await signup(b.org, `twice-${i}`);
        const w = write(t, `dup${i}@x.test`);
        await b.org.invitations.invite(w, T0);
        const r = await Promise.all([accept(b.instance(), w.tenantId, w.tokenHash), accept(b.instance(), w.tenantId, w.tokenHash)]);
        expect(r.map((x) => x.kind).sort()).toEqual(["accepted", "invalid"]);
        expect(Number(await b.value("SELECT count(*) AS n FROM users WHERE tenant_id = $1 AND email = $2", t.tenantId, `dup${i}@x.test`))).toBe(1);
        expect(Number(await b.value("SELECT count(*) AS n FROM sessions WHERE tenant_id = $1", t.tenantId))).toBe(2);
      }
    });

    test("two invitations of one address at once: one created, one resent, one pending row", async () => {
      for (let i = 0; i < 5; i++) {
        const t = await signup(b.org, `pair-${i}`);
        const r = await Promise.all([b.instance().invitations.invite(write(t, "pair@x.test"), T0), b.instance().invitations.invite(write(t, "pair@x.test"), T0)]);
        expect(r.map((x) => x.kind).sort()).toEqual(["created", "resent"]);
        expect(await b.org.invitations.count(t.tenantId, "pending", T0)).toBe(1);
      }
    });

    test("revoke: missing, revoked (twice: the same row), accepted", async () => {
      const t = await signup(b.org, "revoke");
      expect(await b.org.invitations.revoke(t.tenantId, "nope", t.adminId, who, T0)).toEqual({ kind: "missing" });
      const w = write(t, "rev@x.test");
      await b.org.invitations.invite(w, T0);
      const once = await b.org.invitations.revoke(t.tenantId, w.id, t.adminId, who, T0 + 5);
      expect(once).toMatchObject({ kind: "revoked", row: { id: w.id, revoked_at: T0 + 5, updated_at: T0 + 5 } });
      expect(await b.org.invitations.revoke(t.tenantId, w.id, t.adminId, who, T0 + 6)).toEqual(once);
      const other = await signup(b.org, "revoke-other");
      expect(await b.org.invitations.revoke(other.tenantId, w.id, other.adminId, who, T0)).toEqual({ kind: "missing" });
      const a = write(t, "acc@x.test");
      await b.org.invitations.invite(a, T0);
      await accept(b.org, a.tenantId, a.tokenHash);
      expect(await b.org.invitations.revoke(t.tenantId, a.id, t.adminId, who, T0 + 7)).toEqual({ kind: "accepted" });
      expect((await b.org.security.auditForTenant(t.tenantId)).filter((x) => x.action === "invitation.revoked")).toHaveLength(1);
    });

    test("pages and counts by status, newest first", async () => {
      const t = await signup(b.org, "pages");
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) {
        const w = write(t, `p${i}@x.test`, { expiresAt: i === 0 ? T0 + 50 : T0 + DAY });
        ids.push(w.id);
        await b.org.invitations.invite(w, T0 + i);
        if (i === 1) await b.org.invitations.revoke(t.tenantId, w.id, t.adminId, who, T0 + 10);
        if (i === 2) await accept(b.org, w.tenantId, w.tokenHash, T0 + 20);
      }
      const now = T0 + 100;
      expect((await b.org.invitations.page(t.tenantId, null, now, 10, 0)).map((r) => r.id)).toEqual([...ids].reverse());
      expect((await b.org.invitations.page(t.tenantId, null, now, 2, 1)).map((r) => r.id)).toEqual([ids[2], ids[1]]);
      expect(await b.org.invitations.count(t.tenantId, null, now)).toBe(4);
      for (const [status, i] of [["expired", 0], ["revoked", 1], ["accepted", 2], ["pending", 3]] as const) {
        expect((await b.org.invitations.page(t.tenantId, status, now, 10, 0)).map((r) => r.id)).toEqual([ids[i]]);
        expect(await b.org.invitations.count(t.tenantId, status, now)).toBe(1);
      }
      expect(await b.org.invitations.count(t.tenantId, "pending", T0)).toBe(2);
    });
  });
}
