/** A member as `suite user list` shows them: the account, its second factor and its last sign-in. */
export interface SupportUserRow {
  id: string;
  email: string;
  full_name: string | null;
  role: "admin" | "member";
  created_at: number;
  /** 1 when the second factor is on (confirmed), else 0. */
  two_factor: number;
  /** Until when wrong codes locked the second factor, if they did. */
  totp_locked_until: number | null;
  /** The newest `login.success` in the audit log, if any. */
  last_sign_in: number | null;
}

/** The store of the operator's view of an organization's members (src/cli/users.ts). */
export interface SupportStore {
  list: (tenantId: string) => Promise<SupportUserRow[]>;
}
