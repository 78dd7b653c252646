import type { AuditEntry } from "../security/repo";

export interface SessionRow {
  /** The public id: listed by GET /auth/sessions, named by revoke and in audit rows. */
  id: string;
  /** SHA-256 of the secret sid carried in the session's tokens. */
  sid_hash: string;
  tenant_id: string;
  user_id: string;
  method: string;
  created_at: number;
  last_used_at: number;
  expires_at: number;
  /** The last proof of the first factor: the sign-in, or a reauthenticate. */
  proven_at: number;
  revoked_at: number | null;
  revoke_reason: string | null;
  ip: string | null;
  user_agent: string | null;
  refresh_gen: number;
  rotated_at: number | null;
}

/** What a new session's row needs; signup and invitation-accept write it inside their own transactions. */
export type NewSessionRow = Pick<SessionRow, "id" | "sid_hash" | "tenant_id" | "user_id" | "method" | "created_at" | "expires_at" | "proven_at" | "ip" | "user_agent">;

/** A session with what every authenticated request needs about its user and tenant. */
export interface SessionPrincipalRow extends SessionRow {
  role: "admin" | "member";
  email: string;
  subdomain: string;
  /** The tenant's disabled_at: a disabled organization's sessions answer 403 tenant_disabled. */
  tenant_disabled_at: number | null;
}

/**
 * What an API request's check needs (authenticate): the session's few live columns, its user's
 * role and email, its tenant's subdomain and disabled mark, and whether the tenant has the module
 * the route needs, all in one read: every protected request starts with it (issue 15).
 */
export type SessionAccessRow = Pick<
  SessionPrincipalRow,
  "id" | "tenant_id" | "user_id" | "last_used_at" | "expires_at" | "proven_at" | "revoked_at" | "role" | "email" | "subdomain" | "tenant_disabled_at"
> & {
  has_module: boolean;
  /** What the organization's sign-in policy still asks of the user; null when they comply (or no policy is on). */
  policy_setup: "passkey" | "passkey_or_2fa" | null;
};

/** An outstanding 2FA challenge (a temp_token), spent by the verify that succeeds. */
export interface ChallengeRow {
  id: string;
  tenant_id: string;
  user_id: string;
  method: string;
  created_at: number;
  expires_at: number;
}

/** The store of sessions and sign-in challenges. */
export interface SessionsStore {
  /** A new session and its audit row in one commit: a sign-in flood then costs half the fsyncs. */
  insertAudited: (s: NewSessionRow, entry: AuditEntry, now: number) => Promise<void>;
  /**
   * The session of organization `tenantId` (the tokens' `tid`) whose secret sid hashes to `sidHash`,
   * with its user's role and email and its tenant's subdomain. Every session lookup names the
   * tenant, so a distributed PostgreSQL (by tenant_id) reads one node.
   */
  principal: (tenantId: string, sidHash: string) => Promise<SessionPrincipalRow | null>;
  /** The same session for an API request's check, with whether its tenant has `module` ("" for none). */
  access: (tenantId: string, sidHash: string, module: string) => Promise<SessionAccessRow | null>;
  touch: (tenantId: string, id: string, now: number) => Promise<void>;
  rotate: (tenantId: string, id: string, fromGen: number, now: number) => Promise<boolean>;
  /** Records a fresh proof of the first factor on a live session, with its audit row. False when the session ended. */
  prove: (tenantId: string, id: string, entry: AuditEntry, now: number) => Promise<boolean>;
  revoke: (tenantId: string, userId: string, id: string, reason: string, now: number) => Promise<number>;
  revokeOthers: (tenantId: string, userId: string, keepId: string, reason: string, now: number) => Promise<number>;
  /** Ends every session and every outstanding 2FA challenge of a user, in one commit. */
  revokeAll: (tenantId: string, userId: string, reason: string, now: number) => Promise<number>;
  live: (tenantId: string, userId: string, now: number) => Promise<SessionRow[]>;
  /** Drops sessions and challenges that ended long enough ago that nobody can present their tokens. */
  purgeExpired: (before: number) => Promise<number>;
  /** A new 2FA challenge and its audit row, in one commit. */
  openChallenge: (c: ChallengeRow, entry: AuditEntry) => Promise<void>;
  /** An outstanding challenge of this user, or undefined when it was spent, ended or expired. */
  challenge: (id: string, tenantId: string, userId: string, now: number) => Promise<ChallengeRow | null>;
  /**
   * Spends a challenge and opens the session it leads to, atomically: false (and no session)
   * when another verify spent it first, or it was ended meanwhile.
   */
  spendChallengeForSession: (c: ChallengeRow, s: NewSessionRow, entry: AuditEntry, now: number) => Promise<boolean>;
  /** Ends a user's outstanding challenges: their temp_tokens stop working (2FA disable, a password change). */
  endChallenges: (tenantId: string, userId: string) => Promise<number>;
}
