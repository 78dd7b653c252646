export interface UserRow {
  id: string;
  tenant_id: string;
  email: string;
  full_name: string | null;
  role: "admin" | "member";
  profile_id: string | null;
  password_hash: string;
  created_at: number;
  updated_at: number;
  /**
   * When the suite's own mail proved the address (verification, magic link, reset or invitation
   * link; auth/email/); null: not yet. The only proof that counts across organizations (sign-in,
   * magic links and resets without a tenant). Always read from the database; optional for rows being built.
   */
  email_verified_at?: number | null;
  /** When the organization's identity provider vouched for the address (the user joined through it); counts inside the organization only. */
  provider_verified_at?: number | null;
}

export interface ProfileRow {
  id: string;
  tenant_id: string;
  name: string;
  is_admin: number;
  created_at: number;
}

/** The store of users and profiles. Every read names the tenant. */
export interface UsersStore {
  byEmail: (tenantId: string, email: string) => Promise<UserRow | null>;
  /** At most two rows: enough to tell "one workspace" from "several". */
  byEmailAnyTenant: (email: string, limit: number) => Promise<UserRow[]>;
  byId: (tenantId: string, id: string) => Promise<UserRow | null>;
  profile: (tenantId: string, id: string) => Promise<ProfileRow | null>;
  profiles: (tenantId: string) => Promise<ProfileRow[]>;
  profileByName: (tenantId: string, name: string) => Promise<ProfileRow | null>;
  /** `pattern` from containsPattern (paging.ts), or null for every member. */
  page: (tenantId: string, pattern: string | null, limit: number, offset: number) => Promise<UserRow[]>;
  count: (tenantId: string, pattern: string | null) => Promise<number>;
}
