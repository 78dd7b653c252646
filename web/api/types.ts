/** Shapes of the API's answers and bodies (docs/interface.md#fixed-shapes and the OpenAPI document), as the web app reads them. */

export interface ValidationItem {
  loc: (string | number)[];
  msg: string;
  type: string;
  input?: unknown;
  ctx?: Record<string, unknown>;
}

export interface Page<T> {
  items: T[];
  total: number;
  page: number;
  size: number;
  pages: number;
}

export interface TokenPair {
  access_token: string;
  refresh_token: string;
  token_type: "bearer";
}
export interface TwoFactorChallenge {
  requires_2fa: true;
  temp_token: string;
}
export type LoginAnswer = TokenPair | TwoFactorChallenge;

export interface Tenant {
  id: string;
  name: string;
  subdomain: string;
  modules: string[];
  created_at: string;
}
export interface User {
  id: string;
  tenant_id: string;
  email: string;
  full_name: string | null;
  role: "admin" | "member";
  profile_id: string | null;
  created_at: string;
  /** Whether the address is proven, when, and by what: the suite's own mail, or the organization's identity provider at a join. */
  email_verified?: boolean;
  email_verified_at?: string | null;
  email_verified_by?: "mail" | "provider" | null;
}
export interface Me {
  user: User;
  tenant: Tenant;
  /** False for an account made by joining through an identity provider, until it sets a password (absent: an older server, taken as true). */
  has_password?: boolean;
}
export interface Profile {
  id: string;
  name: string;
  is_admin: boolean;
}

export interface SignupBody {
  email: string;
  password: string;
  tenant_name: string;
  subdomain: string;
  full_name?: string | null;
  initial_modules?: string[];
}
export interface SignupAnswer extends TokenPair {
  tenant: Tenant;
  user: User;
}

export interface Session {
  id: string;
  created_at: string;
  last_used_at: string;
  expires_at: string;
  ip: string | null;
  user_agent: string | null;
  current: boolean;
  /** How the session began: "password", "magic_link", "oidc:<provider name>", "<first factor>+2fa" after a 2FA code ("2fa" from older servers)… (issue 17; absent from older servers). */
  method?: string | null;
}
export interface Confirmation {
  detail: string;
  revoked: number;
}

export interface TwoFactorStatus {
  enabled: boolean;
  pending: boolean;
  backup_codes_remaining: number;
}
export interface TwoFactorSetup {
  secret: string;
  otpauth_url: string;
  backup_codes: string[];
}

export type InvitationStatus = "pending" | "accepted" | "revoked" | "expired";
export interface Invitation {
  id: string;
  email: string;
  invited_by: string | null;
  expires_at: string;
  accepted_at: string | null;
  revoked_at: string | null;
  created_at: string;
  profile_id?: string | null;
  role_id?: string | null;
}

// ---- CRM (docs/interface.md#the-deal-list, #crm-records) ----

export interface Stage {
  id: string;
  tenant_id: string;
  key: string;
  name: string;
  color: string;
  position: number;
  probability: number;
  is_won: boolean;
  is_lost: boolean;
}
export interface StageWrite {
  key: string;
  name: string;
  color?: string;
  position?: number;
  probability?: number;
  is_won?: boolean;
  is_lost?: boolean;
}

/** What an admin may change of a stage; the key stays (deals name their stage by it). */
export type StagePatch = Partial<Pick<Stage, "name" | "color" | "probability" | "is_won" | "is_lost">>;

export interface Account {
  id: string;
  tenant_id: string;
  name: string;
  domain: string | null;
  industry: string | null;
  created_at: string;
  updated_at: string;
}
export interface AccountWrite {
  name: string;
  domain?: string | null;
  industry?: string | null;
}

export interface Contact {
  id: string;
  tenant_id: string;
  first_name: string;
  last_name: string | null;
  name: string;
  email: string | null;
  phone: string | null;
  account_id: string | null;
  created_at: string;
  updated_at: string;
}
export interface ContactWrite {
  first_name: string;
  last_name?: string | null;
  email?: string | null;
  phone?: string | null;
  account_id?: string | null;
}

export interface Deal {
  id: string;
  tenant_id: string;
  title: string;
  account_id: string;
  created_at: string;
  updated_at: string;
  value: string;
  currency: string;
  stage: string;
  close_date: string | null;
  probability: number | null;
  assigned_to: string | null;
  notes: string | null;
  custom_data: Record<string, unknown> | null;
  contact_id: string | null;
  pipeline_stage_id: string | null;
  pipeline_stage_name: string | null;
  pipeline_stage_color: string | null;
  is_won: boolean;
  is_lost: boolean;
  account_name: string | null;
  contact_name: string | null;
  assignee_name: string | null;
  assignee_email: string | null;
}
export interface DealWrite {
  title: string;
  account_id: string;
  value?: string | number;
  currency?: string;
  stage?: string;
  close_date?: string | null;
  probability?: number | null;
  assigned_to?: string | null;
  notes?: string | null;
  custom_data?: Record<string, unknown> | null;
  contact_id?: string | null;
}

export const DEAL_SORTS = [
  "title",
  "value",
  "stage",
  "probability",
  "close_date",
  "created_at",
  "updated_at",
  "account_name",
  "contact_name",
  "assignee_name",
] as const;
export type DealSort = (typeof DEAL_SORTS)[number];

export interface ListQuery {
  page?: number;
  size?: number;
  search?: string;
}
export interface DealQuery extends ListQuery {
  stage?: string[];
  assigned_to?: string;
  unassigned?: boolean;
  mine?: boolean;
  sort_by?: DealSort;
  sort_dir?: "asc" | "desc";
}

// ---- the audit log (GET /api/v1/audit-log, admins) ----

export interface AuditEntry {
  id: number;
  user_id: string | null;
  user_email: string | null;
  user_name: string | null;
  action: string;
  created_at: string;
  ip: string | null;
  user_agent: string | null;
  detail: Record<string, unknown> | null;
}
export interface AuditQuery {
  page?: number;
  size?: number;
  user_id?: string;
  action?: string[];
  /** ISO 8601 date-times. */
  since?: string;
  until?: string;
}

/** CSV export and import (issue 16). */
export type TransferKind = "deals" | "accounts" | "contacts";
export interface ImportRowError {
  line: number;
  column: string | null;
  message: string;
}
export interface ImportReport {
  kind: TransferKind;
  dry_run: boolean;
  rows: number;
  valid_rows: number;
  error_count: number;
  errors: ImportRowError[];
  created: { deals: number; accounts: number; contacts: number };
}
/** An import written in the background (issue 27): its progress, then what its rows did. */
export interface ImportJob {
  id: string;
  kind: TransferKind;
  status: "running" | "succeeded" | "failed";
  total: number;
  done: number;
  added: number;
  updated: number;
  unchanged: number;
  error_count: number;
  errors: ImportRowError[];
  message: string | null;
  created_at: string;
  finished_at: string | null;
}

// ---- sign-in providers (issue 17): Google, Microsoft, GitHub, any OpenID Connect issuer ----

export type ProviderKind = "google" | "microsoft" | "github" | "oidc";
/** A provider as admins read it: never its client secret (sealed on the server). */
export interface AuthProvider {
  id: string;
  kind: ProviderKind;
  name: string;
  issuer: string | null;
  client_id: string;
  allowed_domains: string[];
  auto_join: boolean;
  default_profile_id: string | null;
  enabled: boolean;
  /** What the admin registers at the provider as the redirect (callback) URI. */
  redirect_uri: string;
  created_at: string;
}
export interface ProviderWrite {
  kind: ProviderKind;
  name: string;
  issuer?: string | null;
  client_id: string;
  client_secret: string;
  allowed_domains: string[];
  auto_join: boolean;
  default_profile_id?: string | null;
  enabled: boolean;
}
/** A change: what is left out stays as it is (client_secret too). */
export type ProviderPatch = Partial<Omit<ProviderWrite, "kind">>;
/** What the sign-in page sees of a provider (no auth). */
export interface PublicProvider {
  id: string;
  name: string;
  kind: ProviderKind;
}
/** An outside account linked to mine. */
export interface Identity {
  id: string;
  provider_id: string;
  provider_name: string;
  kind: ProviderKind;
  email: string | null;
  created_at: string;
}
