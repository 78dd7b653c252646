/** The second factor's store: the same contract on every backend, races included. */
import { describe, expect, test } from "bun:test";
import { BACKENDS } from "./backends";
import { type AuthHarness, useAuthHarness } from "./auth-harness";

const o = { tenantId: "t1", userId: "u1" };
const audit = (action: string) => ({ action, ip: "127.0.0.1", userAgent: "test" });

for (const backend of BACKENDS) {
  describe(`two-factor store (${backend.name})`, () => {
    let h!: AuthHarness;
    useAuthHarness(backend, async (x) => {
      h = x;
      await x.tenant("t1");
      await x.user("t1", "u1", "ann@example.com");
      await x.user("t1", "u2", "bob@example.com");
    });

    const audits = (action: string) =>
      h.q<{ n: number }>("SELECT count(*) AS n FROM audit_log WHERE action = $1 AND tenant_id = 't1' AND user_id = 'u1'", [action]).then((r) => Number(r[0]!.n));
    const codes = (n: number, tag = "c") => Array.from({ length: n }, (_, i) => `${tag}-${i}`);
    async function enabled(step = 100) {
      expect(await h.a.twoFactor.startSetup(o, "sealed-1", codes(10), audit("2fa.setup"), 1000)).toBe(true);
      expect(await h.a.twoFactor.enable(o, step, audit("2fa.enabled"), 2000)).toBe(true);
    }

    test("setup: a pending secret and its codes, replaced while pending, refused once enabled", async () => {
      expect(await h.a.twoFactor.get(o)).toBeNull();
      expect(await h.a.twoFactor.startSetup(o, "sealed-1", codes(10), audit("2fa.setup"), 1000)).toBe(true);
      expect(await h.a.twoFactor.get(o)).toEqual({
        user_id: "u1", tenant_id: "t1", secret_enc: "sealed-1", enabled_at: null, last_step: null, failures: 0, locked_until: null, created_at: 1000, updated_at: 1000,
      });
      expect(await h.a.twoFactor.remainingBackupCodes(o)).toBe(10);
      expect(await h.a.twoFactor.startSetup(o, "sealed-2", codes(3, "d"), audit("2fa.setup"), 1500)).toBe(true);
      expect(await h.a.twoFactor.get(o)).toMatchObject({ secret_enc: "sealed-2", created_at: 1500, enabled_at: null });
      expect(await h.a.twoFactor.remainingBackupCodes(o)).toBe(3);
      expect(await audits("2fa.setup")).toBe(2);
      expect(await h.a.twoFactor.enable(o, 100, audit("2fa.enabled"), 2000)).toBe(true);
      expect(await h.a.twoFactor.startSetup(o, "sealed-3", codes(10), audit("2fa.setup"), 3000)).toBe(false);
      expect(await h.a.twoFactor.get(o)).toMatchObject({ secret_enc: "sealed-2", enabled_at: 2000, last_step: 100 });
      expect(await h.a.twoFactor.remainingBackupCodes(o)).toBe(3);
      expect(await audits("2fa.setup")).toBe(2);
    });

    test("enable: once, at an unused step", async () => {
      expect(await h.a.twoFactor.enable(o, 100, audit("2fa.enabled"), 2000)).toBe(false); // nothing pending
      await enabled(100);
      expect(await h.a.twoFactor.enable(o, 101, audit("2fa.enabled"), 2100)).toBe(false);
      expect(await audits("2fa.enabled")).toBe(1);
    });

    test("race: two enables with the same code: one", async () => {
      expect(await h.a.twoFactor.startSetup(o, "sealed-1", codes(10), audit("2fa.setup"), 1000)).toBe(true);
      const won = await Promise.all([h.a.twoFactor.enable(o, 100, audit("2fa.enabled"), 2000), h.b.twoFactor.enable(o, 100, audit("2fa.enabled"), 2000)]);
      expect(won.filter(Boolean).length).toBe(1);
      expect(await audits("2fa.enabled")).toBe(1);
    });

    test("acceptStep: each step once, never an older one; it clears failures", async () => {
      await enabled(100);
      await h.a.twoFactor.recordFailure(o, 2500, 20, 60_000);
      expect(await h.a.twoFactor.acceptStep(o, 100, 3000)).toBe(false);
      expect(await h.a.twoFactor.acceptStep(o, 99, 3000)).toBe(false);
      expect(await h.a.twoFactor.acceptStep(o, 101, 3000)).toBe(true);
      expect(await h.a.twoFactor.acceptStep(o, 101, 3001)).toBe(false);
      expect(await h.a.twoFactor.get(o)).toMatchObject({ last_step: 101, failures: 0, updated_at: 3000 });
      expect(await h.a.twoFactor.acceptStep({ tenantId: "t1", userId: "u2" }, 500, 3000)).toBe(false); // no factor
    });

    test("race: the same code on three connections is accepted once", async () => {
      await enabled(100);
      for (let step = 101; step < 111; step++) {
        const won = await Promise.all([h.a.twoFactor.acceptStep(o, step, 3000), h.b.twoFactor.acceptStep(o, step, 3000), h.c.twoFactor.acceptStep(o, step, 3000)]);
        expect(won.filter(Boolean).length).toBe(1);
      }
    });

    test("backup codes: spent once, only while enabled, only the owner's; a use clears failures", async () => {
      expect(await h.a.twoFactor.startSetup(o, "sealed-1", codes(10), audit("2fa.setup"), 1000)).toBe(true);
      expect(await h.a.twoFactor.useBackupCode(o, "c-0", 1500)).toBe(false); // pending: not yet
      expect(await h.a.twoFactor.enable(o, 100, audit("2fa.enabled"), 2000)).toBe(true);
      await h.a.twoFactor.recordFailure(o, 2500, 20, 60_000);
      expect(await h.a.twoFactor.useBackupCode({ tenantId: "t1", userId: "u2" }, "c-0", 3000)).toBe(false);
      expect(await h.a.twoFactor.useBackupCode(o, "c-0", 3000)).toBe(true);
      expect(await h.a.twoFactor.useBackupCode(o, "c-0", 3001)).toBe(false);
      expect(await h.a.twoFactor.useBackupCode(o, "nope", 3001)).toBe(false);
      expect(await h.a.twoFactor.remainingBackupCodes(o)).toBe(9);
      expect(await h.a.twoFactor.get(o)).toMatchObject({ failures: 0, updated_at: 3000 });
    });

    test("race: one backup code used on three connections at once: once", async () => {
      await enabled();
      for (let i = 0; i < 10; i++) {
        const won = await Promise.all([h.a.twoFactor.useBackupCode(o, `c-${i}`, 3000), h.b.twoFactor.useBackupCode(o, `c-${i}`, 3000), h.c.twoFactor.useBackupCode(o, `c-${i}`, 3000)]);
        expect(won.filter(Boolean).length).toBe(1);
      }
      expect(await h.a.twoFactor.remainingBackupCodes(o)).toBe(0);
    });

    test("recordFailure counts; the failure that reaches the limit sets the lock and restarts the count", async () => {
      expect(await h.a.twoFactor.recordFailure(o, 1000, 3, 60_000)).toEqual({ lockedUntil: null }); // no factor
      await enabled();
      expect(await h.a.twoFactor.recordFailure(o, 3000, 3, 60_000)).toEqual({ lockedUntil: null });
      expect(await h.a.twoFactor.recordFailure(o, 3001, 3, 60_000)).toEqual({ lockedUntil: null });
      expect(await h.a.twoFactor.get(o)).toMatchObject({ failures: 2, locked_until: null, updated_at: 3001 });
      expect(await h.a.twoFactor.recordFailure(o, 3002, 3, 60_000)).toEqual({ lockedUntil: 63_002 });
      expect(await h.a.twoFactor.get(o)).toMatchObject({ failures: 0, locked_until: 63_002 });
      expect(await h.a.twoFactor.recordFailure(o, 3003, 3, 60_000)).toEqual({ lockedUntil: null });
      expect(await h.a.twoFactor.get(o)).toMatchObject({ failures: 1, locked_until: 63_002 });
    });

    test("race: 50 wrong codes spread over three connections: every one counted, the lock set at exactly the limit", async () => {
      await enabled();
      const sets = [h.a, h.b, h.c];
      // Limit 20 (the service's MAX_FAILURES): the 20th and the 40th failure set the lock, no other.
      const results = await Promise.all(Array.from({ length: 50 }, (_, i) => sets[i % 3]!.twoFactor.recordFailure(o, 3000 + i, 20, 60_000)));
      const locks = results.filter((r) => r.lockedUntil !== null);
      expect(locks.length).toBe(2);
      expect(await h.a.twoFactor.get(o)).toMatchObject({ failures: 10 });
      // Below the limit, concurrent failures never lock.
      await h.a.twoFactor.acceptStep(o, 500, 4000);
      const under = await Promise.all(Array.from({ length: 19 }, (_, i) => sets[i % 3]!.twoFactor.recordFailure(o, 5000, 20, 60_000)));
      expect(under.every((r) => r.lockedUntil === null)).toBe(true);
      expect(await h.a.twoFactor.get(o)).toMatchObject({ failures: 19, locked_until: null });
      expect(await h.b.twoFactor.recordFailure(o, 6000, 20, 60_000)).toEqual({ lockedUntil: 66_000 });
    });

    test("disable removes an enabled factor and its codes, with its audit row", async () => {
      expect(await h.a.twoFactor.disable(o, audit("2fa.disabled"), 1000)).toBe(false);
      expect(await h.a.twoFactor.startSetup(o, "sealed-1", codes(10), audit("2fa.setup"), 1000)).toBe(true);
      expect(await h.a.twoFactor.disable(o, audit("2fa.disabled"), 1500)).toBe(false); // pending only
      expect(await h.a.twoFactor.enable(o, 100, audit("2fa.enabled"), 2000)).toBe(true);
      expect(await h.a.twoFactor.disable(o, audit("2fa.disabled"), 3000)).toBe(true);
      expect(await h.a.twoFactor.get(o)).toBeNull();
      expect(await h.a.twoFactor.remainingBackupCodes(o)).toBe(0);
      expect(await audits("2fa.disabled")).toBe(1);
    });

    test("replaceBackupCodes: new codes for an enabled factor only", async () => {
      expect(await h.a.twoFactor.replaceBackupCodes(o, codes(4, "n"), audit("2fa.backup_codes_regenerated"), 1000)).toBe(false);
      await enabled();
      await h.a.twoFactor.useBackupCode(o, "c-1", 2500);
      expect(await h.a.twoFactor.replaceBackupCodes(o, codes(4, "n"), audit("2fa.backup_codes_regenerated"), 3000)).toBe(true);
      expect(await h.a.twoFactor.remainingBackupCodes(o)).toBe(4);
      expect(await h.a.twoFactor.useBackupCode(o, "c-2", 3100)).toBe(false); // the old ones are gone
      expect(await h.a.twoFactor.useBackupCode(o, "n-2", 3100)).toBe(true);
      expect(await audits("2fa.backup_codes_regenerated")).toBe(1);
    });

    test("race: codes regenerated while one is used, and disable while one is used: no deadlock, a consistent end", async () => {
      await enabled();
      const [used, replaced] = await Promise.all([
        h.a.twoFactor.useBackupCode(o, "c-3", 3000),
        h.b.twoFactor.replaceBackupCodes(o, codes(5, "n"), audit("2fa.backup_codes_regenerated"), 3000),
      ]);
      expect(replaced).toBe(true);
      expect(await h.a.twoFactor.remainingBackupCodes(o)).toBe(5); // the new set, whichever ran first
      expect(typeof used).toBe("boolean");
      const [use2, off] = await Promise.all([h.a.twoFactor.useBackupCode(o, "n-1", 4000), h.b.twoFactor.disable(o, audit("2fa.disabled"), 4000)]);
      expect(off).toBe(true);
      expect(typeof use2).toBe("boolean");
      expect(await h.a.twoFactor.get(o)).toBeNull();
      expect(await h.a.twoFactor.remainingBackupCodes(o)).toBe(0);
    });
  });
}
