/** The passkeys store: the same contract on every backend, races included. */
import { describe, expect, test } from "bun:test";
import type { PasskeyRow } from "../../src/auth/passkeys/repo";
import { BACKENDS } from "./backends";
import { type AuthHarness, auditOf, useAuthHarness } from "./auth-harness";

const row = (over: Partial<PasskeyRow> = {}): PasskeyRow => ({
  tenant_id: "t1", id: "k1", user_id: "u1", credential_id: "cred-1", public_key: "pk", counter: 0, transports: '["internal"]',
  backed_up: false, rp_id: "t1.localhost", name: "Laptop", created_at: 1000, last_used_at: null, ...over,
});

for (const backend of BACKENDS) {
  describe(`passkeys store (${backend.name})`, () => {
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
    const a = () => h.a.passkeys;

    test("insert, list, read by credential within the organization only; one credential once per organization", async () => {
      expect(await a().insert(row(), auditOf("t1", "u1", "passkey.registered"), 1000)).toBe(true);
      expect(await a().insert(row({ id: "k2" }), auditOf("t1", "u1", "passkey.registered"), 1000)).toBe(false);
      expect(await a().insert(row({ id: "k3", credential_id: "cred-3", created_at: 1500 }), auditOf("t1", "u1", "passkey.registered"), 1500)).toBe(true);
      // The same credential id in another organization is another passkey.
      expect(await a().insert(row({ tenant_id: "t2", user_id: "u3" }), auditOf("t2", "u3", "passkey.registered"), 1000)).toBe(true);
      expect((await a().list("t1", "u1")).map((r) => r.id)).toEqual(["k1", "k3"]);
      expect(await a().list("t1", "u2")).toEqual([]);
      expect(await a().byCredential("t1", "cred-1")).toEqual(row());
      expect((await a().byCredential("t2", "cred-1"))?.user_id).toBe("u3");
      expect(await a().byCredential("t2", "cred-3")).toBeNull();
      expect(await audits("passkey.registered")).toBe(3);
    });

    test("rename and remove name the user; the last is kept when asked", async () => {
      await a().insert(row(), auditOf("t1", "u1", "x"), 1000);
      await a().insert(row({ id: "k2", credential_id: "cred-2" }), auditOf("t1", "u1", "x"), 1000);
      expect(await a().rename("t1", "u2", "k1", "Not mine", auditOf("t1", "u2", "passkey.renamed"), 2000)).toBeNull();
      expect((await a().rename("t1", "u1", "k1", "Phone", auditOf("t1", "u1", "passkey.renamed"), 2000))?.name).toBe("Phone");
      expect(await audits("passkey.renamed")).toBe(1);
      expect(await a().remove("t1", "u2", "k1", false, auditOf("t1", "u2", "passkey.removed"), 2000)).toBe("not_found");
      expect(await a().remove("t1", "u1", "k1", true, auditOf("t1", "u1", "passkey.removed"), 2000)).toBe("removed");
      expect(await a().remove("t1", "u1", "k2", true, auditOf("t1", "u1", "passkey.removed"), 2000)).toBe("last");
      expect(await a().remove("t1", "u1", "k2", false, auditOf("t1", "u1", "passkey.removed"), 2000)).toBe("removed");
      expect(await audits("passkey.removed")).toBe(2);
    });

    test("race: two removals that must keep one: one removed, one refused", async () => {
      await a().insert(row(), auditOf("t1", "u1", "x"), 1000);
      await a().insert(row({ id: "k2", credential_id: "cred-2" }), auditOf("t1", "u1", "x"), 1000);
      const done = await Promise.all([
        h.a.passkeys.remove("t1", "u1", "k1", true, auditOf("t1", "u1", "passkey.removed"), 2000),
        h.b.passkeys.remove("t1", "u1", "k2", true, auditOf("t1", "u1", "passkey.removed"), 2000),
      ]);
      expect(done.sort()).toEqual(["last", "removed"]);
      expect((await a().list("t1", "u1")).length).toBe(1);
    });

    test("recordUse: the counter only moves forward; 0 stays usable for authenticators without one", async () => {
      await a().insert(row(), auditOf("t1", "u1", "x"), 1000);
      expect(await a().recordUse("t1", "k1", 0, false, 2000)).toBe(true);
      expect(await a().recordUse("t1", "k1", 0, true, 2100)).toBe(true);
      expect(await a().byCredential("t1", "cred-1")).toMatchObject({ counter: 0, backed_up: true, last_used_at: 2100 });
      expect(await a().recordUse("t1", "k1", 5, true, 2200)).toBe(true);
      expect(await a().recordUse("t1", "k1", 5, true, 2300)).toBe(false);
      expect(await a().recordUse("t1", "k1", 4, true, 2300)).toBe(false);
      expect(await a().recordUse("t1", "k1", 0, true, 2300)).toBe(false);
      expect(await a().recordUse("t2", "k1", 9, true, 2300)).toBe(false);
      expect((await a().byCredential("t1", "cred-1"))?.counter).toBe(5);
    });

    test("race: one counter value presented twice at once: one use", async () => {
      await a().insert(row(), auditOf("t1", "u1", "x"), 1000);
      await a().recordUse("t1", "k1", 1, false, 2000);
      const won = await Promise.all([h.a.passkeys.recordUse("t1", "k1", 2, false, 3000), h.b.passkeys.recordUse("t1", "k1", 2, false, 3000), h.c.passkeys.recordUse("t1", "k1", 2, false, 3000)]);
      expect(won.filter(Boolean).length).toBe(1);
    });

    test("challenges: spent once, not after they expire; purged", async () => {
      const c = { challenge_hash: "h1", purpose: "login" as const, tenant_id: null, user_id: null, rp_id: "suite.test", created_at: 1000, expires_at: 2000 };
      await a().openChallenge(c);
      await a().openChallenge({ ...c, challenge_hash: "h2", purpose: "register", tenant_id: "t1", user_id: "u1" });
      const spent = await Promise.all([h.a.passkeys.spendChallenge("h1", null, 1500), h.b.passkeys.spendChallenge("h1", null, 1500)]);
      expect(spent.filter((x) => x !== null)).toEqual([c]);
      // Only where it was asked: another organization, or the base domain, neither gets nor spends it.
      expect(await a().spendChallenge("h2", "t2", 1500)).toBeNull();
      expect(await a().spendChallenge("h2", null, 1500)).toBeNull();
      expect(await a().spendChallenge("h2", "t1", 2000)).toBeNull();
      expect(await a().purgeExpired(2000)).toBe(1);
      expect(await a().purgeExpired(2000)).toBe(0);
    });
  });
}
