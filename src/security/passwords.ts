/**
 * argon2id at OWASP's first recommended setting (19 MiB, 2 passes, 1 lane). Hashes run at most
 * `concurrency` at a time, so a login flood queues instead of eating memory.
 */
const ARGON2 = { algorithm: "argon2id", memoryCost: 19456, timeCost: 2 } as const;

export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 128;

/** A counting semaphore: `run` waits for one of `size` slots. */
function semaphore(size: number) {
  let free = size;
  const waiting: Array<() => void> = [];
  return async function run<T>(task: () => Promise<T>): Promise<T> {
    if (free > 0) free--;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await task();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else free++;
    }
  };
}

export function createPasswordHasher(concurrency: number) {
  const run = semaphore(concurrency);
  let dummy: Promise<string> | null = null;
  const dummyHash = () => (dummy ??= run(() => Bun.password.hash(crypto.randomUUID(), ARGON2)));
  return {
    hash: (password: string) => run(() => Bun.password.hash(password, ARGON2)),
    verify: (password: string, hash: string) => run(() => Bun.password.verify(password, hash)),
    /** Spends the same time as a real verify, for an account that does not exist. */
    async verifyNobody(password: string): Promise<false> {
      const h = await dummyHash();
      await run(() => Bun.password.verify(password, h));
      return false;
    },
    /** Computes the stand-in hash ahead of the first unknown-email sign-in. */
    warm: () => void dummyHash(),
  };
}

export type PasswordHasher = ReturnType<typeof createPasswordHasher>;
