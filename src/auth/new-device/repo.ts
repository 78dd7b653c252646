import type { OutgoingMail } from "../../mail/repo";
import type { AuditEntry } from "../../security/repo";

/** Where a user has signed in from (schema version 19): a device cookie, or a cookieless client's IP and user agent. */
export interface KnownDeviceRow {
  tenant_id: string;
  user_id: string;
  /** SHA-256 of the device cookie's secret ('cookie'), or of the IP address and user agent ('source'). */
  device_hash: string;
  kind: "cookie" | "source";
  /** When the user was last mailed about it (a 'source' is known for 30 days from then). */
  noticed_at: number;
  last_seen_at: number;
}

/** The "this wasn't me" link of a new-device mail. */
export interface SignInNoticeRow {
  tenant_id: string;
  token_hash: string;
  user_id: string;
  /** The session the new device's sign-in opened, and when: it and every later one end. */
  session_id: string;
  session_created_at: number;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

/** The store of known devices and sign-in notices. */
export interface NewDeviceStore {
  /** The user's row for this device, or null. */
  known: (tenantId: string, userId: string, deviceHash: string) => Promise<KnownDeviceRow | null>;
  /** Records the device (inserted, or its last_seen_at and, when given anew, noticed_at moved on). */
  remember: (device: KnownDeviceRow) => Promise<void>;
  /**
   * A new device: its row(s), the notice (token hash), the mail that carries the link and the audit
   * row, in one commit; the audit row's detail gets the mail's id as `mail_id`.
   */
  notice: (devices: KnownDeviceRow[], notice: Omit<SignInNoticeRow, "used_at">, mail: OutgoingMail, audit: AuditEntry, now: number) => Promise<void>;
  /**
   * "This wasn't me": spends a live notice (single use) and ends its session, every session of
   * the user started at or after it, and the user's outstanding 2FA challenges, with the audit row,
   * in one commit. Null when the token is unknown, used or expired.
   */
  notMe: (tenantId: string, tokenHash: string, now: number, entry: (row: SignInNoticeRow, ended: number) => AuditEntry) => Promise<{ row: SignInNoticeRow; ended: number } | null>;
  /** Deletes notices expired before `noticesBefore` and devices not seen since `devicesBefore`. */
  purgeExpired: (noticesBefore: number, devicesBefore: number) => Promise<number>;
}
