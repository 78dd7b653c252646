import { t, type Static } from "elysia";
import { TenantRead } from "../organization/model";
import { UserRead } from "../team/model";

// Apart from model.ts: tenants/model.ts reads TokenPair from there, and Me reads TenantRead.

/** GET /auth/me: the signed-in user and their organization. */
export const Me = t.Object({
  user: UserRead,
  tenant: TenantRead,
  // False for an account made by joining through an identity provider, until a password is set by a mailed reset link.
  has_password: t.Boolean({ description: "Whether the account has a password of its own (false after joining through an identity provider, until one is set with POST /auth/password/forgot and its link)" }),
  policy_setup: t.Union([t.Literal("passkey"), t.Literal("passkey_or_2fa"), t.Null()], {
    description: "What the organization's sign-in policy still asks of the user before anything else answers (403 policy_setup_required); null when they comply",
  }),
});
export type Me = Static<typeof Me>;
