import type { Config } from "../config";
import type { PasswordHasher } from "../security/passwords";
import type { Limits, RateLimiter } from "../security/rate-limit";
import type { AuditEntry } from "../security/repo";
import type { UserRow, UsersStore } from "../team/repo";
import type { DeviceCookie, RequestInfo } from "../kernel/principal";
import type { SessionsStore } from "./repo";
import type { Tokens } from "./tokens";

/** What the sign-in service is built on (src/context.ts), shared with its password checks. */
export interface AuthDeps {
  config: Config;
  now: () => number;
  sessions: SessionsStore;
  users: UsersStore;
  tokens: Tokens;
  hasher: PasswordHasher;
  limiter: RateLimiter;
  limits: Limits;
  audit: (e: AuditEntry) => Promise<void>;
  /**
   * Every sign-in that opens a session calls this with its method (auth/new-device): a new device
   * is remembered and its account mailed. Answers the device cookie to set with the tokens.
   */
  afterSignIn?: (user: UserRow, method: string, session: { id: string; created_at: number }, req: RequestInfo) => Promise<DeviceCookie | undefined>;
}
