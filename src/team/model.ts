import { t, type Static } from "elysia";
import { toIso } from "../kernel/ids";
import { SINGLE_LINE_PATTERN } from "../kernel/validation";
import type { UserRow } from "./repo";

/** Emails are trimmed and lower-cased before they are checked, stored or compared (docs/interface.md#tenancy). */
export const normalizeEmail = (email: string): string => email.trim().toLowerCase();

export const Email = t.String({ format: "email", maxLength: 254 });

export const UserRead = t.Object({
  id: t.String(),
  tenant_id: t.String(),
  email: t.String(),
  full_name: t.Nullable(t.String()),
  role: t.UnionEnum(["admin", "member"]),
  profile_id: t.Nullable(t.String()),
  created_at: t.String({ format: "date-time" }),
  /** Whether the address is verified, when, and by what: `mail` (the suite's own mailed link) or `provider` (the organization's identity provider, at a join). */
  email_verified: t.Boolean(),
  email_verified_at: t.Nullable(t.String({ format: "date-time" })),
  email_verified_by: t.Nullable(t.Union([t.Literal("mail"), t.Literal("provider")])),
}, { title: "UserRead" });
export type UserRead = Static<typeof UserRead>;

/** Never a password hash in any answer (docs/interface.md#users-roles-and-profiles). */
export const toUserRead = (u: UserRow): UserRead => ({
  id: u.id,
  tenant_id: u.tenant_id,
  email: u.email,
  full_name: u.full_name,
  role: u.role,
  profile_id: u.profile_id,
  created_at: toIso(u.created_at),
  email_verified: addressVerified(u),
  email_verified_at: u.email_verified_at != null ? toIso(u.email_verified_at) : u.provider_verified_at != null ? toIso(u.provider_verified_at) : null,
  email_verified_by: u.email_verified_at != null ? "mail" : u.provider_verified_at != null ? "provider" : null,
});

/** Verified inside the user's own organization: by the suite's mail or by the organization's provider. */
export const addressVerified = (u: Pick<UserRow, "email_verified_at" | "provider_verified_at">): boolean =>
  u.email_verified_at != null || u.provider_verified_at != null;

export const ROLES = ["admin", "member"] as const;

/** GET /users/profiles: the organization's permission profiles, for the invite form. */
export const ProfileList = t.Array(t.Object({ id: t.String(), name: t.String(), is_admin: t.Boolean() }));
export type ProfileList = Static<typeof ProfileList>;

/**
 * PATCH /users/{id}: any of a name (null or blank clears it), and, for admins only, the role and
 * the permission profile (null: none). At least one field.
 */
export const UpdateUserBody = t.Object({
  full_name: t.Optional(t.Nullable(t.String({ maxLength: 200, pattern: SINGLE_LINE_PATTERN }))),
  // A union of literals, not UnionEnum: Elysia fills an absent optional UnionEnum with its first value.
  role: t.Optional(t.Union(ROLES.map((r) => t.Literal(r)))),
  profile_id: t.Optional(t.Nullable(t.String({ minLength: 1, maxLength: 64 }))),
});
export type UpdateUserBody = Static<typeof UpdateUserBody>;
