import { afterAll, afterEach, describe, expect, spyOn, test } from "bun:test";
import { createPasswordHasher } from "../../src/security/passwords";
import { testApp } from "../helpers";
import { ANY_TENANT_ACCOUNTS } from "../../src/auth/password-check";

afterEach(() => {
  // Every spy of this file is on Bun.password; put the real functions back.
  for (const f of [Bun.password.hash, Bun.password.verify] as unknown as Array<{ mockRestore?: () => void }>) f.mockRestore?.();
});

const ARGON2_PREFIX = "$argon2id$v=19$m=19456,t=2,";

/** A stand-in for a slow primitive that counts how many calls are in flight, released by hand. */
function gated<T>(result: T) {
  const state = { inFlight: 0, max: 0, calls: 0, started: 0 };
  const gates: Array<() => void> = [];
  const impl = async () => {
    state.calls++;
    state.started++;
    state.inFlight++;
    state.max = Math.max(state.max, state.inFlight);
    await new Promise<void>((resolve) => gates.push(resolve));
    state.inFlight--;
    return result;
  };
  /** Lets queued work reach the primitive: a few turns of the event loop, no timing involved. */
  const settle = async () => {
    for (let i = 0; i < 10; i++) await Bun.sleep(0);
  };
  const releaseOne = async () => {
    gates.shift()!();
    await settle();
  };
  return { state, impl, settle, releaseOne, pending: () => gates.length };
}

describe("hash format", () => {
  const t = testApp({ argon2: "production" });
  afterAll(() => t.close());

  test("hashes are argon2id with m=19456 and t=2", async () => {
    const h = await t.ctx.hasher.hash("correct horse battery");
    expect(h.startsWith(ARGON2_PREFIX)).toBe(true);
    expect(await t.ctx.hasher.verify("correct horse battery", h)).toBe(true);
    expect(await t.ctx.hasher.verify("correct horse batterY", h)).toBe(false);
  });

  test("the stored hash of a signed-up user is argon2id at that cost, salted", async () => {
    const a = await t.signup();
    const b = await t.signup();
    const hashOf = (tenantId: string, id: string) => t.ctx.repos.users.byId(tenantId, id).then((u) => u!.password_hash);
    const [ha, hb] = [await hashOf(a.tenant.id, a.user.id), await hashOf(b.tenant.id, b.user.id)];
    expect(ha.startsWith(ARGON2_PREFIX)).toBe(true);
    // Same password, different salts.
    expect(ha).not.toBe(hb);
  });

  test("a 128-character password is not truncated", async () => {
    const long = "p".repeat(127);
    const h = await t.ctx.hasher.hash(`${long}a`);
    expect(await t.ctx.hasher.verify(`${long}a`, h)).toBe(true);
    expect(await t.ctx.hasher.verify(`${long}b`, h)).toBe(false);
    expect(await t.ctx.hasher.verify(long, h)).toBe(false);
  });
});

describe("concurrency bound", () => {
  test("6 hashes with concurrency 2 never have more than 2 in flight", async () => {
    const g = gated("$argon2id$fake");
    spyOn(Bun.password, "hash").mockImplementation(g.impl as never);
    const hasher = createPasswordHasher(2);
    const all = Promise.all(Array.from({ length: 6 }, (_, i) => hasher.hash(`password ${i}`)));
    await g.settle();
    expect(g.state.inFlight).toBe(2);
    expect(g.state.started).toBe(2);
    for (let done = 1; done <= 6; done++) {
      await g.releaseOne();
      expect(g.state.inFlight).toBeLessThanOrEqual(2);
      // As each finishes, the next queued one starts: the slots stay full while work waits.
      expect(g.state.started).toBe(Math.min(6, 2 + done));
    }
    expect(await all).toEqual(Array(6).fill("$argon2id$fake"));
    expect(g.state.max).toBe(2);
    expect(g.state.calls).toBe(6);
  });

  test("hash, verify and verifyNobody share the same slots", async () => {
    const h = gated("$argon2id$fake");
    const v = gated(false);
    spyOn(Bun.password, "hash").mockImplementation(h.impl as never);
    spyOn(Bun.password, "verify").mockImplementation(v.impl as never);
    const hasher = createPasswordHasher(3);
    const work = Promise.all([
      hasher.hash("a"),
      hasher.verify("b", "$argon2id$x"),
      hasher.verify("c", "$argon2id$x"),
      hasher.hash("d"),
      hasher.verify("e", "$argon2id$x"),
    ]);
    await h.settle();
    expect(h.state.inFlight + v.state.inFlight).toBe(3);
    while (h.pending() + v.pending() > 0) {
      if (h.pending() > 0) await h.releaseOne();
      else await v.releaseOne();
      expect(h.state.inFlight + v.state.inFlight).toBeLessThanOrEqual(3);
    }
    await work;
    expect(h.state.calls).toBe(2);
    expect(v.state.calls).toBe(3);
  });

  test("a failing hash frees its slot", async () => {
    let n = 0;
    spyOn(Bun.password, "hash").mockImplementation((async () => {
      if (n++ === 0) throw new Error("boom");
      return "$argon2id$ok";
    }) as never);
    const hasher = createPasswordHasher(1);
    const [first, second] = await Promise.allSettled([hasher.hash("a"), hasher.hash("b")]);
    expect(first.status).toBe("rejected");
    expect(second).toEqual({ status: "fulfilled", value: "$argon2id$ok" });
    expect(await hasher.hash("c")).toBe("$argon2id$ok");
  });

  test("the app's hasher bounds real argon2 work by its configured concurrency", async () => {
    const t = testApp({ argon2: "production" }); // The harness sets SUITE_HASH_CONCURRENCY=2.
    try {
      expect(t.config.hashConcurrency).toBe(2);
      const real = Bun.password.hash;
      let inFlight = 0;
      let max = 0;
      spyOn(Bun.password, "hash").mockImplementation((async (...args: Parameters<typeof real>) => {
        inFlight++;
        max = Math.max(max, inFlight);
        try {
          return await real(...args);
        } finally {
          inFlight--;
        }
      }) as never);
      const hashes = await Promise.all(Array.from({ length: 6 }, (_, i) => t.ctx.hasher.hash(`pw ${i}`)));
      expect(hashes.every((x) => x.startsWith(ARGON2_PREFIX))).toBe(true);
      expect(max).toBe(2);
    } finally {
      t.close();
    }
  });
});

describe("verifyNobody", () => {
  test("returns false and runs a real argon2 verify against an argon2id hash of the same cost", async () => {
    const verify = spyOn(Bun.password, "verify");
    const hasher = createPasswordHasher(2);
    expect(await hasher.verifyNobody("whatever password")).toBe(false);
    expect(verify).toHaveBeenCalledTimes(1);
    const [pw, hash] = verify.mock.calls[0]!;
    expect(pw).toBe("whatever password");
    expect(String(hash).startsWith(ARGON2_PREFIX)).toBe(true);
    // Even the password the stand-in hash was made from would not pass: it is random.
    expect(await hasher.verifyNobody("")).toBe(false);
  });

  test("an unknown email costs the same argon2 verifies as a wrong password", async () => {
    const t = testApp({ argon2: "production" });
    try {
      const org = await t.signup("acme");
      t.ctx.hasher.warm();
      const verify = spyOn(Bun.password, "verify");
      const hash = spyOn(Bun.password, "hash");

      const wrong = await t.json("POST", "/api/v1/auth/login", { body: { email: org.email, password: "wrong password!" } });
      const afterWrong = { verify: verify.mock.calls.length, hash: hash.mock.calls.length };
      const unknown = await t.json("POST", "/api/v1/auth/login", { body: { email: "nobody@acme.test", password: "wrong password!" } });
      const forUnknown = { verify: verify.mock.calls.length - afterWrong.verify, hash: hash.mock.calls.length - afterWrong.hash };

      expect(wrong.status).toBe(401);
      expect(unknown.status).toBe(401);
      // Without a tenant every sign-in runs ANY_TENANT_ACCOUNTS verifies (tests/auth/login-any-tenant.test.ts).
      expect(afterWrong).toEqual({ verify: ANY_TENANT_ACCOUNTS, hash: 0 });
      expect(forUnknown).toEqual({ verify: ANY_TENANT_ACCOUNTS, hash: 0 });
      // Both verified against hashes of the same algorithm and cost.
      const params = (h: unknown) => String(h).split("$").slice(1, 4).join("$");
      expect(params(verify.mock.calls[1]![1])).toBe(params(verify.mock.calls[0]![1]));
    } finally {
      t.close();
    }
  });
});
