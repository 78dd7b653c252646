/**
 * argon2id at OWASP's first recommended setting (19 MiB, 2 passes, 1 lane). Hashes run at most
 * `concurrency` at a time, so a login flood queues instead of eating memory.
 */
import { type Argon2, argon2Threads } from "./argon2-threads";

export const ARGON2 = { algorithm: "argon2id", memoryCost: 19456, timeCost: 2 } as const;

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

/** Bun.password's async calls (on Bun's shared work pool): the CLI's and the tests' primitive. */
export const pooledArgon2: Argon2 = {
  hash: (password) => Bun.password.hash(password, ARGON2),
  verify: (password, hash) => Bun.password.verify(password, hash),
};

export function createPasswordHasher(concurrency: number, argon2: Argon2 = pooledArgon2) {
  const run = semaphore(concurrency);
  let dummy: Promise<string> | null = null;
  const dummyHash = () => (dummy ??= run(() => argon2.hash(crypto.randomUUID())));
  return {
    hash: (password: string) => run(() => argon2.hash(password)),
    verify: (password: string, hash: string) => run(() => argon2.verify(password, hash)),
    /** Spends the same time as a real verify, for an account that does not exist. */
    async verifyNobody(password: string): Promise<false> {
      const h = await dummyHash();
      await run(() => argon2.verify(password, h));
      return false;
    },
    /** Computes the stand-in hash ahead of the first unknown-email sign-in. */
    warm: () => void dummyHash(),
  };
}

export type PasswordHasher = ReturnType<typeof createPasswordHasher>;

/** The server's hasher: argon2 on threads of its own, leaving Bun's work pool to crypto.subtle. */
export const threadedPasswordHasher = (concurrency: number) => createPasswordHasher(concurrency, argon2Threads(concurrency, ARGON2));
