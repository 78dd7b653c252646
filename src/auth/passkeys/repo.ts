import type { AuditEntry } from "../../security/repo";

/** A registered passkey: the credential's public key and what its authenticator last told us. */
export interface PasskeyRow {
  tenant_id: string;
  /** The public id (GET /auth/passkeys, PATCH and DELETE name it). */
  id: string;
  user_id: string;
  /** The authenticator's credential id, base64url. */
  credential_id: string;
  /** The COSE public key, base64url. */
  public_key: string;
  /** The highest signature counter seen; 0 for authenticators that keep none. */
  counter: number;
  /** JSON array of the transports the browser reported. */
  transports: string;
  backed_up: boolean;
  /** The relying party the credential was made for. */
  rp_id: string;
  name: string;
  created_at: number;
  last_used_at: number | null;
}

/** An outstanding challenge, spent once: by a registration (of user_id) or by a sign-in or step-up. */
export interface PasskeyChallengeRow {
  challenge_hash: string;
  purpose: "register" | "login";
  /** The organization the options were asked on; null on the base domain (the credential names it). */
  tenant_id: string | null;
  user_id: string | null;
  rp_id: string;
  created_at: number;
  expires_at: number;
}

/** What removing a passkey did: removed, nothing of that id, or refused because it was the user's last. */
export type PasskeyRemoval = "removed" | "not_found" | "last";

/** The store of passkeys and their challenges. Every passkey statement names the tenant. */
export interface PasskeysStore {
  /** A new passkey with its audit row, in one commit. False when the organization has that credential already. */
  insert(row: PasskeyRow, audit: AuditEntry, now: number): Promise<boolean>;
  /** A user's passkeys, oldest first. */
  list(tenantId: string, userId: string): Promise<PasskeyRow[]>;
  byCredential(tenantId: string, credentialId: string): Promise<PasskeyRow | null>;
  /** Renames a passkey of this user (audited); null when it has none of that id. */
  rename(tenantId: string, userId: string, id: string, name: string, audit: AuditEntry, now: number): Promise<PasskeyRow | null>;
  /**
   * Removes a passkey of this user (audited). With `keepOne`, the user's last passkey is not
   * removed ("last"): checked and removed in one commit, so two removals at once cannot take both.
   */
  remove(tenantId: string, userId: string, id: string, keepOne: boolean, audit: AuditEntry, now: number): Promise<PasskeyRemoval>;
  /**
   * Records a use: the counter moves to `counter` only forward (or stays 0 for an authenticator
   * that keeps none), in one statement. False when it would not move forward: a cloned
   * authenticator, or the same signature presented twice at once.
   */
  recordUse(tenantId: string, id: string, counter: number, backedUp: boolean, now: number): Promise<boolean>;
  openChallenge(c: PasskeyChallengeRow): Promise<void>;
  /**
   * Spends a challenge of the organization `tenantId` (null: one asked on the base domain):
   * answers it once, while it has not expired; null afterwards, and for another organization's,
   * which stays as it was.
   */
  spendChallenge(challengeHash: string, tenantId: string | null, now: number): Promise<PasskeyChallengeRow | null>;
  /** Drops challenges that expired before `now`. */
  purgeExpired(now: number): Promise<number>;
}
