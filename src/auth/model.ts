import { t, type Static } from "elysia";
import { AppError } from "../kernel/errors";
import { PASSWORD_MAX } from "../security/passwords";
import { Email } from "../team/model";
import { AuthenticationResponse } from "./passkeys/model";

export const LoginBody = t.Object({
  email: Email,
  password: t.String({ minLength: 1, maxLength: PASSWORD_MAX }),
});
export type LoginBody = Static<typeof LoginBody>;

// A `title` names a schema in the API description: it becomes a component there, referenced
// wherever it is used (src/http/openapi-document.ts).
export const TokenPair = t.Object(
  {
    access_token: t.String({ description: "A JWT, for `Authorization: Bearer`" }),
    refresh_token: t.String({ description: "A JWT for /auth/refresh; long-lived, keep it secret" }),
    token_type: t.Literal("bearer"),
  },
  { title: "TokenPair" },
);
export type TokenPair = Static<typeof TokenPair>;

/** Login's answer when the second factor is on: no session yet, and no cookie. */
export const TwoFactorChallenge = t.Object(
  { requires_2fa: t.Literal(true), temp_token: t.String({ description: "Single use, short-lived: send it to /auth/2fa/verify with a code" }) },
  { title: "TwoFactorChallenge" },
);
export type TwoFactorChallenge = Static<typeof TwoFactorChallenge>;
export const LoginResponse = t.Union([TokenPair, TwoFactorChallenge]);
export type LoginResponse = Static<typeof LoginResponse>;

/** The body is optional: without one, the svc_refresh cookie is used. */
export const RefreshBody = t.Optional(t.Nullable(t.Object({ refresh_token: t.Optional(t.String({ minLength: 1, maxLength: 4096 })) })));
export type RefreshBody = Static<typeof RefreshBody>;

export const RevokeSessionBody = t.Object({ session_id: t.String({ minLength: 1, maxLength: 128 }) });
export type RevokeSessionBody = Static<typeof RevokeSessionBody>;

export const SessionRead = t.Object({
  id: t.String(),
  created_at: t.String({ format: "date-time" }),
  last_used_at: t.String({ format: "date-time" }),
  expires_at: t.String({ format: "date-time" }),
  ip: t.Nullable(t.String()),
  user_agent: t.Nullable(t.String()),
  current: t.Boolean(),
  /** How the session was opened: `password`, `magic_link`, `2fa` (after a first factor), `oidc:<provider name>`, `invitation`... */
  method: t.String(),
}, { title: "SessionRead" });
export type SessionRead = Static<typeof SessionRead>;

export const SessionList = t.Array(SessionRead);
export type SessionList = Static<typeof SessionList>;

export const Confirmation = t.Object({ detail: t.String(), revoked: t.Integer() });
export type Confirmation = Static<typeof Confirmation>;

/**
 * The current password and, when the user's 2FA is on, a TOTP or backup code; or instead a
 * passkey's answer to /auth/passkeys/login/options (two factors in one). One object rather than
 * a union, so that a body without either is still 422 at `["body", "password"]`.
 */
export const ReauthenticateBody = t.Object({
  password: t.Optional(t.String({ minLength: 1, maxLength: PASSWORD_MAX })),
  code: t.Optional(t.String({ pattern: "^([0-9]{6}|[A-Za-z0-9]{4}-?[A-Za-z0-9]{4})$" })),
  passkey: t.Optional(AuthenticationResponse),
});
export type ReauthenticateBody = Static<typeof ReauthenticateBody>;

export const Reauthenticated = t.Object({ detail: t.String(), reauthenticated_at: t.String({ format: "date-time" }) });
export type Reauthenticated = Static<typeof Reauthenticated>;

export const authErrors = {
  reauthenticationRequired: () =>
    new AppError(403, "reauthentication_required", "Confirm your password first (POST /api/v1/auth/reauthenticate): this change needs a recent sign-in."),
};
