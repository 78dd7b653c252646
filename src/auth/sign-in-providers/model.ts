import { t, type Static } from "elysia";
import { NAME_PATTERN, SINGLE_LINE_PATTERN } from "../../kernel/validation";

export const PROVIDER_KINDS = ["oidc", "google", "microsoft", "github"] as const;
export type ProviderKind = (typeof PROVIDER_KINDS)[number];

/** A domain name (`example.com`), compared in lower case. */
const Domain = t.String({ minLength: 1, maxLength: 253, pattern: "^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$" });
const Name = t.String({ minLength: 1, maxLength: 100, pattern: NAME_PATTERN });
const Issuer = t.String({ minLength: 1, maxLength: 500, pattern: SINGLE_LINE_PATTERN });
const ClientId = t.String({ minLength: 1, maxLength: 500, pattern: SINGLE_LINE_PATTERN });
const ClientSecret = t.String({ minLength: 1, maxLength: 2000, pattern: SINGLE_LINE_PATTERN });
const Domains = t.Array(Domain, { maxItems: 50 });
const ProfileId = t.Nullable(t.String({ minLength: 1, maxLength: 64 }));

export const CreateProviderBody = t.Object({
  kind: t.UnionEnum([...PROVIDER_KINDS]),
  name: Name,
  issuer: t.Optional(t.Nullable(Issuer)),
  client_id: ClientId,
  client_secret: ClientSecret,
  allowed_domains: t.Optional(Domains),
  auto_join: t.Optional(t.Boolean()),
  default_profile_id: t.Optional(ProfileId),
  enabled: t.Optional(t.Boolean()),
});
export type CreateProviderBody = Static<typeof CreateProviderBody>;

/** Every field optional; an absent client_secret keeps the sealed one. The kind never changes. */
export const UpdateProviderBody = t.Object({
  name: t.Optional(Name),
  issuer: t.Optional(t.Nullable(Issuer)),
  client_id: t.Optional(ClientId),
  client_secret: t.Optional(ClientSecret),
  allowed_domains: t.Optional(Domains),
  auto_join: t.Optional(t.Boolean()),
  default_profile_id: t.Optional(ProfileId),
  enabled: t.Optional(t.Boolean()),
});
export type UpdateProviderBody = Static<typeof UpdateProviderBody>;

export const ProviderRead = t.Object(
  {
    id: t.String(),
    kind: t.UnionEnum([...PROVIDER_KINDS]),
    name: t.String(),
    issuer: t.Nullable(t.String()),
    client_id: t.String(),
    allowed_domains: t.Array(t.String()),
    auto_join: t.Boolean(),
    default_profile_id: t.Nullable(t.String()),
    enabled: t.Boolean(),
    /** What to register at the provider as the redirect (callback) URI. */
    redirect_uri: t.String(),
    created_at: t.String({ format: "date-time" }),
  },
  { title: "ProviderRead" },
);
export type ProviderRead = Static<typeof ProviderRead>;

export const PublicProvider = t.Object({ id: t.String(), name: t.String(), kind: t.UnionEnum([...PROVIDER_KINDS]) }, { title: "PublicProvider" });
export type PublicProvider = Static<typeof PublicProvider>;
export const PublicProviderList = t.Array(PublicProvider);
export type PublicProviderList = Static<typeof PublicProviderList>;

export const IdentityRead = t.Object(
  {
    id: t.String(),
    provider_id: t.String(),
    provider_name: t.String(),
    kind: t.UnionEnum([...PROVIDER_KINDS]),
    email: t.Nullable(t.String()),
    created_at: t.String({ format: "date-time" }),
  },
  { title: "IdentityRead" },
);
export type IdentityRead = Static<typeof IdentityRead>;

export const LinkBody = t.Optional(t.Nullable(t.Object({})));
export const LinkStarted = t.Object({ authorization_url: t.String() }, { title: "LinkStarted" });
export type LinkStarted = Static<typeof LinkStarted>;

/**
 * Why a callback failed: the `error` the web app receives in `/sign-in?error=` or
 * `/settings?error=`, to show as a message. Identifiers only: never the provider's own text.
 */
export const OAUTH_ERRORS = {
  oauth_state_invalid: "The sign-in request expired, was already used, or was started in another browser. Start again.",
  oauth_provider_unavailable: "This sign-in option is not available (it was removed or turned off).",
  oauth_provider_error: "The identity provider refused or did not complete the sign-in.",
  oauth_token_invalid: "The identity provider's answer could not be verified.",
  oauth_email_unverified: "The identity provider did not confirm this email address.",
  oauth_domain_not_allowed: "Accounts with this email domain cannot join this organization.",
  oauth_account_exists: "An account with this email already exists: sign in the usual way, then link this identity from your security settings.",
  oauth_identity_other_org: "This identity belongs to an account of another organization.",
  oauth_identity_in_use: "This identity is already linked to another account.",
  oauth_not_registered: "No account is linked to this identity, and joining is not open for it.",
  oauth_account_unavailable: "The account this identity belongs to no longer exists.",
  oauth_account_unverified: "Confirm your own email address before linking an identity to your account.",
  oauth_rate_limited: "Too many sign-in attempts from this address: wait a minute and try again.",
  // The same code as the API's 403 for a disabled organization, so the web app has one message for it.
  tenant_disabled: "This organization is disabled: ask the operator of this server.",
} as const;
export type OAuthErrorCode = keyof typeof OAUTH_ERRORS;
