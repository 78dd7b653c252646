/** Identity providers, linked identities and flows: the same contract on every backend. */
import { describe, expect, test } from "bun:test";
import type { FlowRow, IdentityRow, ProviderRow } from "../../src/auth/sign-in-providers/repo";
import { BACKENDS } from "./backends";
import { type AuthHarness, auditOf, useAuthHarness } from "./auth-harness";

const provider = (id: string, over: Partial<ProviderRow> = {}): ProviderRow => ({
  id, tenant_id: "t1", kind: "oidc", name: `Provider ${id}`, issuer: "https://id.example.com", client_id: "client", client_secret_sealed: "sealed",
  allowed_domains: '["example.com"]', auto_join: 0, default_profile_id: null, enabled: 1, created_at: 1000, updated_at: 1000, ...over,
});
const identity = (id: string, over: Partial<IdentityRow> = {}): IdentityRow => ({
  id, tenant_id: "t1", user_id: "u1", provider_id: "p1", issuer: "https://id.example.com", subject: `sub-${id}`, email: "ann@example.com", created_at: 2000, last_used_at: null, ...over,
});
const flow = (hash: string, over: Partial<FlowRow> = {}): FlowRow => ({
  state_hash: hash, tenant_id: "t1", provider_id: "p1", user_id: null, browser_hash: "bh", verifier_sealed: "vs", nonce: "n", created_at: 1000, expires_at: 5000, ...over,
});
const newUser = (id: string, email: string) => ({
  id, tenant_id: "t1", email, full_name: "New Member", role: "member" as const, profile_id: null, password_hash: "no-password", created_at: 3000, email_verified_at: 3000,
});

for (const backend of BACKENDS) {
  describe(`identity providers store (${backend.name})`, () => {
    let h!: AuthHarness;
    useAuthHarness(backend, async (x) => {
      h = x;
      await x.tenant("t1");
      await x.tenant("t2");
      await x.user("t1", "u1", "ann@example.com");
      await x.user("t1", "u2", "bob@example.com");
      await x.a.oidc.insertProvider(provider("p1"), auditOf("t1", "u1", "identity_provider.created"));
    });

    const audits = (action: string) => h.q<{ n: number }>("SELECT count(*) AS n FROM audit_log WHERE action = $1", [action]).then((r) => Number(r[0]!.n));

    test("providers: insert, read, page, count, enabled list, update, delete; each write audited", async () => {
      await h.a.oidc.insertProvider(provider("p2", { created_at: 1100, enabled: 0, kind: "google", issuer: null }), auditOf("t1", "u1", "identity_provider.created"));
      await h.a.oidc.insertProvider(provider("p3", { tenant_id: "t2" }), auditOf("t2", null, "identity_provider.created"));
      expect(await h.a.oidc.provider("t1", "p1")).toEqual(provider("p1"));
      expect(await h.a.oidc.provider("t2", "p1")).toBeNull();
      expect((await h.a.oidc.providerByName("t1", "Provider p2"))?.id).toBe("p2");
      expect(await h.a.oidc.providerByName("t2", "Provider p2")).toBeNull();
      expect((await h.a.oidc.providerPage("t1", 10, 0)).map((p) => p.id)).toEqual(["p1", "p2"]);
      expect((await h.a.oidc.providerPage("t1", 1, 1)).map((p) => p.id)).toEqual(["p2"]);
      expect(await h.a.oidc.providerCount("t1")).toBe(2);
      expect((await h.a.oidc.enabledProviders("t1")).map((p) => p.id)).toEqual(["p1"]);
      await h.a.oidc.updateProvider({ ...provider("p2"), name: "Renamed", enabled: 1, auto_join: 1, updated_at: 4000 }, auditOf("t1", "u1", "identity_provider.updated"));
      expect(await h.a.oidc.provider("t1", "p2")).toMatchObject({ name: "Renamed", enabled: 1, auto_join: 1, updated_at: 4000, created_at: 1100, kind: "google" }); // kind and creation stay
      expect((await h.a.oidc.enabledProviders("t1")).map((p) => p.id)).toEqual(["p1", "p2"]);
      expect(await h.a.oidc.deleteProvider("t2", "p2", auditOf("t2", null, "identity_provider.deleted"), 5000)).toBe(false);
      expect(await h.a.oidc.deleteProvider("t1", "p2", auditOf("t1", "u1", "identity_provider.deleted"), 5000)).toBe(true);
      expect(await h.a.oidc.provider("t1", "p2")).toBeNull();
      expect([await audits("identity_provider.created"), await audits("identity_provider.updated"), await audits("identity_provider.deleted")]).toEqual([3, 1, 1]);
    });

    test("a provider's name is unique in its organization: the insert throws, nothing is written", async () => {
      await expect(h.a.oidc.insertProvider(provider("px", { name: "Provider p1" }), auditOf("t1", "u1", "identity_provider.created"))).rejects.toThrow();
      expect(await h.a.oidc.providerCount("t1")).toBe(1);
      expect(await audits("identity_provider.created")).toBe(1);
      await h.a.oidc.insertProvider(provider("py", { tenant_id: "t2", name: "Provider p1" }), auditOf("t2", null, "identity_provider.created"));
    });

    test("identities: link, read, list with their provider, count, touch, unlink", async () => {
      expect(await h.a.oidc.linkIdentity(identity("i1"), auditOf("t1", "u1", "identity.linked"))).toBe("linked");
      expect(await h.a.oidc.linkIdentity(identity("i2", { created_at: 2100 }), auditOf("t1", "u1", "identity.linked"))).toBe("linked");
      expect(await h.a.oidc.linkIdentity(identity("i3", { user_id: "u2", subject: "sub-i1" }), auditOf("t1", "u2", "identity.linked"))).toBe("taken");
      expect(await audits("identity.linked")).toBe(2);
      expect(await h.a.oidc.identity("t1", "https://id.example.com", "sub-i1")).toEqual(identity("i1"));
      expect(await h.a.oidc.identity("t2", "https://id.example.com", "sub-i1")).toBeNull();
      expect(await h.a.oidc.identityOfUser("t1", "u1", "i2")).toEqual(identity("i2", { created_at: 2100 }));
      expect(await h.a.oidc.identityOfUser("t1", "u2", "i2")).toBeNull();
      const listed = await h.a.oidc.identitiesOfUser("t1", "u1", 10, 0);
      expect(listed.map((i) => [i.id, i.provider_name, i.kind])).toEqual([["i1", "Provider p1", "oidc"], ["i2", "Provider p1", "oidc"]]);
      expect((await h.a.oidc.identitiesOfUser("t1", "u1", 1, 1)).map((i) => i.id)).toEqual(["i2"]);
      expect(await h.a.oidc.identityCount("t1", "u1")).toBe(2);
      await h.a.oidc.touchIdentity("t1", "i1", 7000);
      expect((await h.a.oidc.identity("t1", "https://id.example.com", "sub-i1"))?.last_used_at).toBe(7000);
      expect(await h.a.oidc.unlinkIdentity("t1", "u2", "i1", auditOf("t1", "u2", "identity.unlinked"), 8000)).toBe(false);
      expect(await h.a.oidc.unlinkIdentity("t1", "u1", "i1", auditOf("t1", "u1", "identity.unlinked"), 8000)).toBe(true);
      expect(await h.a.oidc.identityCount("t1", "u1")).toBe(1);
      expect(await audits("identity.unlinked")).toBe(1);
      // A provider's deletion takes its identities and flows with it.
      await h.a.oidc.openFlow(flow("f1"));
      expect(await h.a.oidc.deleteProvider("t1", "p1", auditOf("t1", "u1", "identity_provider.deleted"), 9000)).toBe(true);
      expect(await h.a.oidc.identityCount("t1", "u1")).toBe(0);
      expect(await h.a.oidc.flow("t1", "f1")).toBeNull();
    });

    test("race: one outside account linked by two members at once: one link", async () => {
      for (let i = 0; i < 5; i++) {
        const got = await Promise.all([
          h.a.oidc.linkIdentity(identity(`a${i}`, { subject: `s${i}` }), auditOf("t1", "u1", "identity.linked")),
          h.b.oidc.linkIdentity(identity(`b${i}`, { user_id: "u2", subject: `s${i}` }), auditOf("t1", "u2", "identity.linked")),
        ]);
        expect(got.sort()).toEqual(["linked", "taken"]);
      }
      expect(await audits("identity.linked")).toBe(5);
    });

    test("join: the member and the identity together; exists when the address or identity is taken", async () => {
      expect(await h.a.oidc.join(newUser("n1", "new@example.com"), identity("i1", { user_id: "n1" }), auditOf("t1", "n1", "user.joined"))).toBe("joined");
      expect(await h.a.oidc.identityCount("t1", "n1")).toBe(1);
      expect(await h.a.oidc.join(newUser("n2", "ann@example.com"), identity("i2", { user_id: "n2" }), auditOf("t1", "n2", "user.joined"))).toBe("exists");
      expect(await h.a.oidc.join(newUser("n3", "other@example.com"), identity("i3", { user_id: "n3", subject: "sub-i1" }), auditOf("t1", "n3", "user.joined"))).toBe("exists");
      const users = await h.q<{ id: string }>("SELECT id FROM users WHERE tenant_id = 't1' ORDER BY id");
      expect(users.map((u) => u.id)).toEqual(["n1", "u1", "u2"]); // nothing half-written
      expect(await audits("user.joined")).toBe(1);
    });

    test("race: two joins of one address on two connections: one member", async () => {
      for (let i = 0; i < 5; i++) {
        const got = await Promise.all([
          h.a.oidc.join(newUser(`x${i}`, `race${i}@example.com`), identity(`ix${i}`, { user_id: `x${i}`, subject: `sx${i}` }), auditOf("t1", null, "user.joined")),
          h.b.oidc.join(newUser(`y${i}`, `race${i}@example.com`), identity(`iy${i}`, { user_id: `y${i}`, subject: `sy${i}` }), auditOf("t1", null, "user.joined")),
        ]);
        expect(got.sort()).toEqual(["exists", "joined"]);
        const n = await h.q<{ n: number }>("SELECT count(*) AS n FROM users WHERE email = $1", [`race${i}@example.com`]);
        expect(Number(n[0]!.n)).toBe(1);
      }
      expect(await audits("user.joined")).toBe(5);
    });

    test("race: two joins of one identity with different addresses: one member, no orphan", async () => {
      const got = await Promise.all([
        h.a.oidc.join(newUser("x1", "one@example.com"), identity("ix", { user_id: "x1", subject: "same" }), auditOf("t1", null, "user.joined")),
        h.b.oidc.join(newUser("y1", "two@example.com"), identity("iy", { user_id: "y1", subject: "same" }), auditOf("t1", null, "user.joined")),
      ]);
      expect(got.sort()).toEqual(["exists", "joined"]);
      const n = await h.q<{ n: number }>("SELECT count(*) AS n FROM users WHERE id IN ('x1', 'y1')");
      expect(Number(n[0]!.n)).toBe(1);
    });

    test("flows: opened, read by state, spent once, purged when expired", async () => {
      await h.a.oidc.openFlow(flow("f1"));
      await h.a.oidc.openFlow(flow("f2", { user_id: "u1", expires_at: 1500 }));
      expect(await h.a.oidc.flow("t1", "f1")).toEqual(flow("f1"));
      expect(await h.a.oidc.flow("t1", "nope")).toBeNull();
      // By the organization the state names: the same hash under another one finds nothing and spends nothing.
      expect(await h.a.oidc.flow("t2", "f1")).toBeNull();
      expect(await h.a.oidc.spendFlow("t2", "f1")).toBeNull();
      expect(await h.a.oidc.spendFlow("t1", "f1")).toEqual(flow("f1"));
      expect(await h.a.oidc.spendFlow("t1", "f1")).toBeNull();
      await h.a.oidc.purgeExpired(1500);
      expect(await h.a.oidc.flow("t1", "f2")).toBeNull();
    });

    test("race: one state's callback twice on two connections: spent once", async () => {
      for (let i = 0; i < 10; i++) {
        await h.a.oidc.openFlow(flow(`r${i}`));
        const got = await Promise.all([h.a.oidc.spendFlow("t1", `r${i}`), h.b.oidc.spendFlow("t1", `r${i}`), h.c.oidc.spendFlow("t1", `r${i}`)]);
        expect(got.filter((g) => g !== null).length).toBe(1);
      }
    });
  });
}
