import type { AuditEntry } from "../../security/repo";
import type { UserRow } from "../../team/repo";
import type { ProviderKind } from "./model";

export interface ProviderRow {
  id: string;
  tenant_id: string;
  kind: ProviderKind;
  name: string;
  issuer: string | null;
  client_id: string;
  client_secret_sealed: string;
  /** JSON array of lower-case domains. */
  allowed_domains: string;
  auto_join: number;
  default_profile_id: string | null;
  enabled: number;
  created_at: number;
  updated_at: number;
}

export interface IdentityRow {
  id: string;
  tenant_id: string;
  user_id: string;
  provider_id: string;
  issuer: string;
  subject: string;
  email: string | null;
  created_at: number;
  last_used_at: number | null;
}

export interface FlowRow {
  state_hash: string;
  tenant_id: string;
  provider_id: string;
  /** The signed-in user a link flow is for; null for a sign-in. */
  user_id: string | null;
  browser_hash: string;
  verifier_sealed: string;
  nonce: string;
  created_at: number;
  expires_at: number;
}

/** The store of identity providers, linked identities and flows under way. Every read names the tenant. */
export interface OidcStore {
  insertProvider: (p: ProviderRow, audit: AuditEntry) => Promise<void>;
  updateProvider: (p: ProviderRow, audit: AuditEntry) => Promise<void>;
  /** false when there was no such provider. Its identities and flows go with it. */
  deleteProvider: (tenantId: string, id: string, audit: AuditEntry, now: number) => Promise<boolean>;
  provider: (tenantId: string, id: string) => Promise<ProviderRow | null>;
  providerByName: (tenantId: string, name: string) => Promise<ProviderRow | null>;
  providerPage: (tenantId: string, limit: number, offset: number) => Promise<ProviderRow[]>;
  providerCount: (tenantId: string) => Promise<number>;
  enabledProviders: (tenantId: string) => Promise<ProviderRow[]>;
  identity: (tenantId: string, issuer: string, subject: string) => Promise<IdentityRow | null>;
  identityOfUser: (tenantId: string, userId: string, id: string) => Promise<IdentityRow | null>;
  identitiesOfUser: (tenantId: string, userId: string, limit: number, offset: number) => Promise<(IdentityRow & {
    provider_name: string;
    kind: ProviderKind;
  })[]>;
  identityCount: (tenantId: string, userId: string) => Promise<number>;
  touchIdentity: (tenantId: string, id: string, now: number) => Promise<void>;
  /** Links an identity; "taken" when (issuer, subject) is already linked in this organization. */
  linkIdentity: (row: IdentityRow, audit: AuditEntry) => Promise<"linked" | "taken">;
  /**
   * A new member and their identity, all or nothing; "exists" when the address or the identity
   * was taken meanwhile.
   */
  join: (user: Omit<UserRow, "updated_at">, identity: IdentityRow, audit: AuditEntry) => Promise<"joined" | "exists">;
  unlinkIdentity: (tenantId: string, userId: string, id: string, audit: AuditEntry, now: number) => Promise<boolean>;
  openFlow: (f: FlowRow) => Promise<void>;
  /** The flow a state names, by the organization the state names and the state's hash. */
  flow: (tenantId: string, stateHash: string) => Promise<FlowRow | null>;
  spendFlow: (tenantId: string, stateHash: string) => Promise<FlowRow | null>;
  purgeExpired: (before: number) => Promise<void>;
}
