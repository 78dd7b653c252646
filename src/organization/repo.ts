import type { NewSessionRow } from "../auth/repo";
import type { AuditEntry } from "../security/repo";
import type { UserRow } from "../team/repo";

export interface TenantRow {
  id: string;
  name: string;
  subdomain: string;
  created_at: number;
  /** When the operator disabled it (`suite tenant disable`); null or absent: in service. */
  disabled_at?: number | null;
  /** The sign-in policy's switches (0/1 in SQLite, booleans in PostgreSQL); absent on a row not read back yet: off. */
  require_passkey_or_2fa?: number | boolean;
  require_passkey_for_admins?: number | boolean;
}

/** The sign-in policy an admin sets (PATCH /tenant): each switch given is written. */
export interface SignInPolicyChange {
  require_passkey_or_2fa?: boolean;
  require_passkey_for_admins?: boolean;
}

/** A row of `suite tenant list`. */
export interface TenantListRow extends TenantRow {
  members: number;
}

export interface NewOrganization {
  tenant: TenantRow;
  modules: string[];
  admin: Omit<UserRow, "tenant_id" | "profile_id" | "role" | "updated_at">;
  session: Omit<NewSessionRow, "tenant_id" | "user_id" | "created_at">;
  audit: Omit<AuditEntry, "tenantId" | "userId">;
}

/** The store of tenants and their modules, and the one transaction that creates an organization. */
export interface TenantsStore {
  bySubdomain: (subdomain: string) => Promise<TenantRow | null>;
  byId: (id: string) => Promise<TenantRow | null>;
  modules: (tenantId: string) => Promise<string[]>;
  hasModule: (tenantId: string, module: string) => Promise<boolean>;
  /** Whether any organization exists yet (`suite serve`'s first-run hint). */
  any: () => Promise<boolean>;
  /** Every organization with its member count, oldest first (the operator's `suite tenant list`). */
  list: () => Promise<TenantListRow[]>;
  /**
   * Disables (`at`: the time) or re-enables (null) an organization with its audit row, in one
   * transaction. Already so: nothing is written. Answers the row as it was before and whether
   * it changed, or undefined when there is none.
   */
  setDisabled(tenantId: string, at: number | null, now: number, audit: (before: TenantRow) => AuditEntry): Promise<{
    before: TenantRow;
    changed: boolean;
  } | undefined>;
  /**
   * Renames the organization and/or sets which modules are on, with the audit rows the caller
   * builds from the before and after, in one transaction. Module data is never touched: a module
   * turned off keeps its rows, and turning it on shows them again.
   */
  update(tenantId: string, change: {
    name?: string;
    modules?: string[];
    policy?: SignInPolicyChange;
  }, now: number, audits: (before: {
    row: TenantRow;
    modules: string[];
  }, after: {
    row: TenantRow;
    modules: string[];
  }) => AuditEntry[]): Promise<{
    row: TenantRow;
    modules: string[];
  } | undefined>;
  /**
   * Tenant, modules, the two default profiles, the default pipeline, the first admin and their
   * session: all or nothing. The password is hashed before this is called.
   */
  createOrganization(o: NewOrganization): Promise<{
    adminProfileId: string;
  }>;
}
