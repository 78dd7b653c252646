import type { LimitState, Limits, RateLimiter } from "../security/rate-limit";

/**
 * The sign-in lock (issue 29.8, 28.4). Only wrong passwords count, on two counters: the account's
 * failures from this source (`<account>|<ip>`, locks that source at 10) and the account's failures
 * from anywhere (`<account>`, locks everyone at 50). A stranger's guesses from one address thus
 * never lock its owner out, and guesses spread over many addresses still meet a lock.
 *
 * An account is `<tenant>:<email>`, or `*:<email>` for sign-ins that name no organization.
 */
export function createLoginLimits(limiter: RateLimiter, limits: Limits) {
  const sourceKey = (account: string, ip: string | null) => `${account}|${ip ?? "unknown"}`;
  const tails = new Map<string, Promise<void>>();

  /**
   * Runs `fn` once every earlier sign-in check of this address in this process has settled. Check,
   * hash and count are one step per address: a burst of wrong passwords cannot all pass a check
   * made before any of them was counted, and a burst of right ones is never counted at all (the
   * lock used to count every attempt before its hash, so 20 right passwords at once locked the
   * account). Each instance runs its own queue: with N instances a burst may try N − 1 more.
   */
  async function oneAtATime<T>(email: string, fn: () => Promise<T>): Promise<T> {
    const before = tails.get(email) ?? Promise.resolve();
    let settle!: () => void;
    const mine = new Promise<void>((resolve) => (settle = resolve));
    const tail = before.then(() => mine);
    tails.set(email, tail);
    await before;
    try {
      return await fn();
    } finally {
      settle();
      if (tails.get(email) === tail) tails.delete(email);
    }
  }

  /** The lock in force on this account for this source (its Retry-After), or null when it may be tried. */
  async function lockOf(account: string, ip: string | null): Promise<LimitState | null> {
    const [source, whole] = await Promise.all([
      limiter.check(limits.loginPerSource, sourceKey(account, ip)),
      limiter.check(limits.loginPerAccount, account),
    ]);
    if (!source.allowed) return source;
    if (!whole.allowed) return whole;
    return null;
  }

  return {
    oneAtATime,
    lockOf,
    /** Counts a wrong password on both counters. */
    async failed(account: string, ip: string | null): Promise<void> {
      await Promise.all([limiter.hit(limits.loginPerSource, sourceKey(account, ip)), limiter.hit(limits.loginPerAccount, account)]);
    },
    /**
     * A right password clears this source's failures only: clearing the account-wide count too
     * would hand a distributed guesser a fresh allowance every time the owner signs in.
     */
    async succeeded(account: string, ip: string | null): Promise<void> {
      await limiter.reset(limits.loginPerSource, sourceKey(account, ip));
    },
    /** Lifts every lock of the account (an admin's unlock, a password reset): all sources and the account-wide count. */
    async lift(account: string): Promise<void> {
      await Promise.all([limiter.resetAll(limits.loginPerSource, `${account}|`), limiter.reset(limits.loginPerAccount, account)]);
    },
    /** Whether the account is locked as a whole or from any source (support's view of a member). */
    async lockedAnywhere(account: string): Promise<boolean> {
      const [whole, someSource] = await Promise.all([limiter.check(limits.loginPerAccount, account), limiter.anyUsedUp(limits.loginPerSource, `${account}|`)]);
      return !whole.allowed || someSource;
    },
  };
}

export type LoginLimits = ReturnType<typeof createLoginLimits>;

/** The mail-sending limits' subject (issue 29.8): an address's allowance is per source. */
export const addressFromSource = (email: string, ip: string | null) => `${email}|${ip ?? "unknown"}`;
