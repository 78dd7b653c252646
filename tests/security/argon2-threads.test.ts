import { describe, expect, test } from "bun:test";
import { argon2Threads } from "../../src/security/argon2-threads";
import { ARGON2, threadedPasswordHasher } from "../../src/security/passwords";

const ARGON2_PREFIX = "$argon2id$v=19$m=19456,t=2,";

describe("argon2 on threads of its own (the server's hasher)", () => {
  test("hashes at the server's parameters, verifies right and wrong passwords, and 128 characters in full", async () => {
    const hasher = threadedPasswordHasher(2);
    const long = "p".repeat(127);
    const [h, hl] = await Promise.all([hasher.hash("correct horse battery"), hasher.hash(`${long}a`)]);
    expect(h.startsWith(ARGON2_PREFIX)).toBe(true);
    expect(await Bun.password.verify("correct horse battery", h)).toBe(true);
    expect(await hasher.verify("correct horse battery", h)).toBe(true);
    expect(await hasher.verify("correct horse batterY", h)).toBe(false);
    expect(await hasher.verify(`${long}b`, hl)).toBe(false);
    expect(await hasher.verify(`${long}a`, hl)).toBe(true);
    expect(await hasher.verifyNobody("whatever password")).toBe(false);
  });

  test("a hash made by Bun.password in-process verifies on the threads", async () => {
    const h = await Bun.password.hash("made elsewhere 1", ARGON2);
    expect(await argon2Threads(1, ARGON2).verify("made elsewhere 1", h)).toBe(true);
  });

  test("a malformed stored hash rejects that call only; the thread keeps serving", async () => {
    const argon2 = argon2Threads(1, ARGON2);
    await expect(argon2.verify("some password", "not-a-hash")).rejects.toThrow();
    const h = await argon2.hash("still works 1");
    expect(await argon2.verify("still works 1", h)).toBe(true);
  });

  test("while argon2 runs, crypto.subtle (every JWT check) does not queue behind it", async () => {
    const hasher = threadedPasswordHasher(2);
    const h = await hasher.hash("busy password 1");
    const key = await crypto.subtle.importKey("raw", new Uint8Array(32), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    let hashing = true;
    const busy = Promise.all(
      Array.from({ length: 2 }, async () => {
        while (hashing) await hasher.verify("busy password 1", h);
      }),
    );
    await Bun.sleep(20);
    // On Bun's shared pool a sign waited for a whole argon2 job (tens of ms) most of the time;
    // the median of many signs tells queueing apart from a scheduler's occasional hiccup.
    const times: number[] = [];
    for (let i = 0; i < 40; i++) {
      const started = performance.now();
      await crypto.subtle.sign("HMAC", key, new Uint8Array(8));
      times.push(performance.now() - started);
    }
    hashing = false;
    await busy;
    times.sort((a, b) => a - b);
    expect(times[20]!).toBeLessThan(5);
  });
});

describe("how many hashes run at once", () => {
  test("by default one core fewer than the machine has (at least one): the event loop keeps a core", async () => {
    const { availableParallelism } = await import("node:os");
    const { loadConfig } = await import("../../src/config");
    const cores = availableParallelism();
    expect(loadConfig({}, {}).hashConcurrency).toBe(Math.max(1, cores - 1));
    expect(loadConfig({}, { SUITE_HASH_CONCURRENCY: "3" }).hashConcurrency).toBe(3);
  });
});
