import type { AuditEntry } from "../../security/repo";

export interface TotpRow {
  user_id: string;
  tenant_id: string;
  secret_enc: string;
  enabled_at: number | null;
  last_step: number | null;
  failures: number;
  locked_until: number | null;
  created_at: number;
  updated_at: number;
}

/** Who, in one tenant: every statement below names both. */
export interface Owner {
  tenantId: string;
  userId: string;
}

type Audit = Omit<AuditEntry, "tenantId" | "userId">;

/** The store of the second factor: the TOTP row and the backup codes. */
export interface TwoFactorStore {
  get: (o: Owner) => Promise<TotpRow | null>;
  /** A new pending secret and its backup codes, replacing a pending one. False when 2FA is on. */
  startSetup(o: Owner, secretEnc: string, codeHashes: string[], audit: Audit, now: number): Promise<boolean>;
  /** Turns a pending setup on at the code's step. False when it is no longer pending or the step is used. */
  enable(o: Owner, step: number, audit: Audit, now: number): Promise<boolean>;
  /** Accepts a code's step once: false when that step (or a later one) was already accepted. */
  acceptStep: (o: Owner, step: number, now: number) => Promise<boolean>;
  /** Spends a backup code of an enabled factor, once. */
  useBackupCode(o: Owner, codeHash: string, now: number): Promise<boolean>;
  /** Counts a failed code; answers the lock's end when this failure set it. */
  recordFailure(o: Owner, now: number, maxFailures: number, lockMs: number): Promise<{
    lockedUntil: number | null;
  }>;
  /** Removes an enabled factor and its backup codes. False when it was not enabled. */
  disable(o: Owner, audit: Audit, now: number): Promise<boolean>;
  /** New backup codes for an enabled factor; the old ones are deleted. False when it is not enabled. */
  replaceBackupCodes(o: Owner, codeHashes: string[], audit: Audit, now: number): Promise<boolean>;
  remainingBackupCodes: (o: Owner) => Promise<number>;
}
