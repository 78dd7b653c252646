import { describe, expect, test } from "bun:test";
import { readFileSync, readdirSync } from "node:fs";
import { SCHED_IDLE, STEADY_NICE, argon2Threads } from "../../src/security/argon2-threads";
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

describe("how many hashes run at once, and at what priority", () => {
  test("by default as many as the machine has cores", async () => {
    const { availableParallelism } = await import("node:os");
    const { loadConfig } = await import("../../src/config");
    expect(loadConfig({}, {}).hashConcurrency).toBe(availableParallelism());
    expect(loadConfig({}, { SUITE_HASH_CONCURRENCY: "3" }).hashConcurrency).toBe(3);
  });

  /** Nice value and scheduling policy of each of this process's threads (Linux: /proc/self/task/N/stat fields 19 and 41). */
  const threads = () =>
    readdirSync("/proc/self/task").map((task) => {
      const stat = readFileSync(`/proc/self/task/${task}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      return { nice: Number(fields[16]), policy: Number(fields[38]) };
    });
  const count = (want: { nice?: number; policy?: number }) =>
    threads().filter((t) => (want.nice === undefined || t.nice === want.nice) && (want.policy === undefined || t.policy === want.policy)).length;

  test.if(process.platform === "linux")("one argon2 thread runs at nice 10, the others under SCHED_IDLE; the event loop keeps its priority", async () => {
    // The earlier tests' hashers may still be starting or ending a thread (one more at nice 10 than
    // counted, once in CI): counted once the figures hold still for 50 ms (a second at most).
    const figures = () => `${count({ nice: STEADY_NICE, policy: 0 })}/${count({ policy: SCHED_IDLE })}`;
    for (let i = 0, last = ""; i < 20; i++) {
      const now = figures();
      if (now === last) break;
      last = now;
      await Bun.sleep(50);
    }
    const steady = count({ nice: STEADY_NICE, policy: 0 });
    const idle = count({ policy: SCHED_IDLE });
    const hasher = threadedPasswordHasher(3);
    await Promise.all([hasher.hash("first password"), hasher.hash("second password"), hasher.hash("third password")]);
    expect(count({ nice: STEADY_NICE, policy: 0 })).toBe(steady + 1);
    expect(count({ policy: SCHED_IDLE })).toBe(idle + 2);
    const { getPriority } = await import("node:os");
    expect(getPriority()).toBe(0);
  });
});
