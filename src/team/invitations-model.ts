import { t, type Static } from "elysia";
import { toIso, toIsoOrNull } from "../kernel/ids";
import { SINGLE_LINE_PATTERN } from "../kernel/validation";
import { PASSWORD_MAX, PASSWORD_MIN } from "../security/passwords";
import { Email } from "./model";

const ProfileRef = t.Optional(t.Nullable(t.String({ minLength: 1, maxLength: 64 })));

/** The invite request, a fixed shape (docs/interface.md#fixed-shapes); `role_id` is the legacy name of `profile_id`. */
export const InviteUserBody = t.Object({
  email: Email,
  profile_id: ProfileRef,
  role_id: ProfileRef,
});
export type InviteUserBody = Static<typeof InviteUserBody>;

export const AcceptInvitationBody = t.Object({
  token: t.String({ minLength: 1, maxLength: 256 }),
  password: t.String({ minLength: PASSWORD_MIN, maxLength: PASSWORD_MAX }),
  full_name: t.Optional(t.Nullable(t.String({ maxLength: 200, pattern: SINGLE_LINE_PATTERN }))),
});
export type AcceptInvitationBody = Static<typeof AcceptInvitationBody>;

export const INVITATION_STATUSES = ["pending", "accepted", "revoked", "expired"] as const;
export type InvitationStatus = (typeof INVITATION_STATUSES)[number];

export interface InvitationRow {
  id: string;
  tenant_id: string;
  email: string;
  profile_id: string | null;
  invited_by: string | null;
  token_hash: string;
  expires_at: number;
  accepted_at: number | null;
  accepted_user_id: string | null;
  revoked_at: number | null;
  created_at: number;
  updated_at: number;
}

/** Derived, never stored: accepted, then revoked, then expired, else pending. */
export function statusOf(row: InvitationRow, now: number): InvitationStatus {
  if (row.accepted_at !== null) return "accepted";
  if (row.revoked_at !== null) return "revoked";
  if (row.expires_at <= now) return "expired";
  return "pending";
}

/**
 * The Invitation, a fixed shape (docs/interface.md#fixed-shapes), field for field (profile_id and
 * role_id are not required, so optional here, though always sent); `role_id` mirrors `profile_id` for legacy clients.
 */
export const InvitationRead = t.Object({
  id: t.String(),
  email: t.String(),
  invited_by: t.Nullable(t.String()),
  expires_at: t.String({ format: "date-time" }),
  accepted_at: t.Nullable(t.String({ format: "date-time" })),
  revoked_at: t.Nullable(t.String({ format: "date-time" })),
  created_at: t.String({ format: "date-time" }),
  profile_id: t.Optional(t.Nullable(t.String())),
  role_id: t.Optional(t.Nullable(t.String())),
}, { title: "Invitation" });
export type InvitationRead = Static<typeof InvitationRead>;

export const toInvitationRead = (r: InvitationRow): Required<InvitationRead> => ({
  id: r.id,
  email: r.email,
  invited_by: r.invited_by,
  expires_at: toIso(r.expires_at),
  accepted_at: toIsoOrNull(r.accepted_at),
  revoked_at: toIsoOrNull(r.revoked_at),
  created_at: toIso(r.created_at),
  profile_id: r.profile_id,
  role_id: r.profile_id,
});

/** A re-issued invitation link (Copy link), answered once to the admin who asked; the server keeps only its hash. */
export const InvitationLink = t.Object({
  url: t.String({ description: "The link that accepts the invitation; the one mailed or copied before no longer works" }),
  expires_at: t.String({ format: "date-time" }),
}, { title: "InvitationLink" });
export type InvitationLink = Static<typeof InvitationLink>;
