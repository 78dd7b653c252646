import type { SecurityStore } from "./repo";

export interface Limit {
  name: string;
  max: number;
  windowMs: number;
}

/** The rate limits (docs/interface.md#limits); tests may pass others. */
export const LIMITS = {
  // Sign-in failures (issue 29.8): an account's failures from one source lock that source out of
  // it at 10; the account as a whole locks only at 50, so a stranger's guesses from one address
  // do not lock the owner out, and guesses spread over many addresses still meet a lock.
  loginPerSource: { name: "login-source", max: 10, windowMs: 15 * 60_000 },
  loginPerAccount: { name: "login-account", max: 50, windowMs: 15 * 60_000 },
  loginPerIp: { name: "login-ip", max: 60, windowMs: 60_000 },
  signupPerIp: { name: "signup-ip", max: 20, windowMs: 60 * 60_000 },
  // Per address AND source (issue 29.8): a stranger's requests use up their own allowance only.
  magicLinkPerAddress: { name: "magic-link-address", max: 3, windowMs: 15 * 60_000 },
  magicLinkPerIp: { name: "magic-link-ip", max: 30, windowMs: 15 * 60_000 },
  magicVerifyPerIp: { name: "magic-verify-ip", max: 60, windowMs: 60_000 },
  // Each invite sends a mail: an admin's account must not become a mail cannon.
  invitesPerAdmin: { name: "invite-admin", max: 50, windowMs: 60 * 60_000 },
  // Each accept costs a password hash; an office behind one address still fits.
  acceptPerIp: { name: "invite-accept-ip", max: 30, windowMs: 15 * 60_000 },
  /** Sign-in codes checked per user (POST /2fa/verify only): 5 a minute (docs/interface.md#limits). */
  twoFactorVerify: { name: "2fa-user", max: 5, windowMs: 60_000 },
  // Confirm, disable and reauthenticate check codes too, each on a counter of its own, so that
  // none of them spends verify's five (docs/interface.md#limits); the 20-failure lock still counts them all.
  twoFactorConfirm: { name: "2fa-confirm", max: 5, windowMs: 60_000 },
  twoFactorDisable: { name: "2fa-disable", max: 5, windowMs: 60_000 },
  twoFactorReauth: { name: "2fa-reauth", max: 5, windowMs: 60_000 },
  // Forgotten password and address verification (issue 16): mail-sending requests as magic links.
  passwordForgotPerAddress: { name: "password-forgot-address", max: 3, windowMs: 15 * 60_000 },
  passwordForgotPerIp: { name: "password-forgot-ip", max: 30, windowMs: 15 * 60_000 },
  passwordResetPerIp: { name: "password-reset-ip", max: 30, windowMs: 15 * 60_000 },
  // "This wasn't me" links (auth/new-device): a token is 256 random bits; this only keeps junk cheap.
  notMePerIp: { name: "not-me-ip", max: 30, windowMs: 15 * 60_000 },
  emailVerifyPerIp: { name: "email-verify-ip", max: 60, windowMs: 60_000 },
  emailResendPerUser: { name: "email-resend-user", max: 3, windowMs: 15 * 60_000 },
  emailResendPerIp: { name: "email-resend-ip", max: 30, windowMs: 15 * 60_000 },
  // Identity providers (issue 17): each start writes a flow and may ask the provider for its
  // metadata; each callback exchanges a code with it.
  oauthStartPerIp: { name: "oauth-start-ip", max: 30, windowMs: 60_000 },
  oauthCallbackPerIp: { name: "oauth-callback-ip", max: 60, windowMs: 60_000 },
  // CSV imports (issue 27), dry runs included: each reads up to 50 MB and may write 100,000 rows.
  importsPerAdmin: { name: "import-admin", max: 60, windowMs: 60 * 60_000 },
  // Passkeys (issue 33): each options request writes a challenge row; a verify is counted on loginPerIp as a password is.
  passkeyOptionsPerIp: { name: "passkey-options-ip", max: 60, windowMs: 60_000 },
} satisfies Record<string, Limit>;

export type Limits = typeof LIMITS;

export interface LimitState {
  allowed: boolean;
  retryAfterSeconds: number;
}

/** Fixed-window counters in the database: a restart does not reset them. `refused` hears of every "no" (the metrics). */
export function createRateLimiter(repo: SecurityStore, now: () => number, refused: (limit: Limit) => void = () => {}) {
  const keyOf = (limit: Limit, subject: string) => `${limit.name}:${subject}`;
  const state = (limit: Limit, count: number, windowStart: number, t: number): LimitState => {
    const allowed = count <= limit.max;
    if (!allowed) refused(limit);
    return { allowed, retryAfterSeconds: Math.max(1, Math.ceil((windowStart + limit.windowMs - t) / 1000)) };
  };
  return {
    /** Counts one attempt and says whether it is within the limit. */
    async hit(limit: Limit, subject: string): Promise<LimitState> {
      const t = now();
      const row = await repo.hit(keyOf(limit, subject), t, limit.windowMs);
      return state(limit, row.count, row.window_start, t);
    },
    /** Says whether the limit is already used up, without counting. */
    async check(limit: Limit, subject: string): Promise<LimitState> {
      const t = now();
      const row = await repo.peek(keyOf(limit, subject));
      if (!row || row.window_start + row.window_ms <= t) return { allowed: true, retryAfterSeconds: 0 };
      return state(limit, row.count + 1, row.window_start, t);
    },
    async reset(limit: Limit, subject: string): Promise<void> {
      await repo.clear(keyOf(limit, subject));
    },
    /** Whether any counter of this limit whose subject starts with `prefix` is used up. */
    async anyUsedUp(limit: Limit, prefix: string): Promise<boolean> {
      return repo.anyReached(keyOf(limit, prefix), limit.max, now());
    },
    /** Clears every counter of this limit whose subject starts with `prefix` (all sources of an account). */
    async resetAll(limit: Limit, prefix: string): Promise<void> {
      await repo.clearPrefix(keyOf(limit, prefix));
    },
  };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;
