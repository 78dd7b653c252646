import { t, type Static } from "elysia";
import { NAME_PATTERN, SINGLE_LINE_PATTERN, registerFormat } from "../kernel/validation";
import { toIso } from "../kernel/ids";
import { RESERVED_SUBDOMAINS } from "../http/tenancy";
import { PASSWORD_MAX, PASSWORD_MIN } from "../security/passwords";
import { TokenPair } from "../auth/model";
import { Email, UserRead } from "../team/model";
import type { TenantRow } from "./repo";

export const MODULES = ["crm", "users"] as const;
export type ModuleName = (typeof MODULES)[number];
export const DEFAULT_MODULES: ModuleName[] = ["crm", "users"];

export const SUBDOMAIN_PATTERN = "^[a-z0-9]([a-z0-9-]*[a-z0-9])?$";
registerFormat("subdomain", (v) => !RESERVED_SUBDOMAINS.has(v), "Value error, this subdomain is reserved");

export const SignupBody = t.Object({
  email: Email,
  password: t.String({ minLength: PASSWORD_MIN, maxLength: PASSWORD_MAX }),
  tenant_name: t.String({ minLength: 1, maxLength: 100, pattern: NAME_PATTERN }),
  subdomain: t.String({ minLength: 3, maxLength: 63, pattern: SUBDOMAIN_PATTERN, format: "subdomain" }),
  initial_modules: t.Optional(t.Array(t.UnionEnum([...MODULES]), { maxItems: 16 })),
  full_name: t.Optional(t.Nullable(t.String({ maxLength: 200, pattern: SINGLE_LINE_PATTERN }))),
});
export type SignupBody = Static<typeof SignupBody>;

/** PATCH /tenant (admins): a new name, and/or the full list of modules that are on. At least one field. */
export const UpdateTenantBody = t.Object({
  name: t.Optional(t.String({ minLength: 1, maxLength: 100, pattern: NAME_PATTERN })),
  modules: t.Optional(t.Array(t.UnionEnum([...MODULES]), { maxItems: 16 })),
  require_passkey_or_2fa: t.Optional(t.Boolean({ description: "Every member must sign in with a passkey or 2FA" })),
  require_passkey_for_admins: t.Optional(t.Boolean({ description: "Admins must hold a passkey" })),
});
export type UpdateTenantBody = Static<typeof UpdateTenantBody>;

export const TenantRead = t.Object({
  id: t.String(),
  name: t.String(),
  subdomain: t.String(),
  modules: t.Array(t.String()),
  created_at: t.String({ format: "date-time" }),
  // The sign-in policy: a member who does not comply can only set up a passkey or 2FA until they do.
  require_passkey_or_2fa: t.Boolean({ description: "Every member must sign in with a passkey or 2FA" }),
  require_passkey_for_admins: t.Boolean({ description: "Admins must hold a passkey" }),
}, { title: "TenantRead" });
export type TenantRead = Static<typeof TenantRead>;

/** The new organization, its user and a token pair, side by side (signup, invitation accept). */
export const SignupResponse = t.Intersect([t.Object({ tenant: TenantRead, user: UserRead }), TokenPair]);
export type SignupResponse = Static<typeof SignupResponse>;

export const toTenantRead = (row: TenantRow, modules: string[]): TenantRead => ({
  id: row.id,
  name: row.name,
  subdomain: row.subdomain,
  modules,
  created_at: toIso(row.created_at),
  require_passkey_or_2fa: Boolean(row.require_passkey_or_2fa),
  require_passkey_for_admins: Boolean(row.require_passkey_for_admins),
});
