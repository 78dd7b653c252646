import { t, type Static } from "elysia";
import { AppError } from "../../kernel/errors";
import { PASSWORD_MAX, PASSWORD_MIN } from "../../security/passwords";
import { Email } from "../../team/model";

export const ForgotPasswordBody = t.Object({ email: Email });
export type ForgotPasswordBody = Static<typeof ForgotPasswordBody>;
/** newTenantToken() makes `<tenant id>.<43 characters>` (65 today); the bound only keeps junk short. */
export const ResetPasswordBody = t.Object({
  token: t.String({ minLength: 1, maxLength: 256 }),
  password: t.String({ minLength: PASSWORD_MIN, maxLength: PASSWORD_MAX }),
});
export type ResetPasswordBody = Static<typeof ResetPasswordBody>;
export const ChangePasswordBody = t.Object({
  current_password: t.String({ minLength: 1, maxLength: PASSWORD_MAX }),
  new_password: t.String({ minLength: PASSWORD_MIN, maxLength: PASSWORD_MAX }),
});
export type ChangePasswordBody = Static<typeof ChangePasswordBody>;

export const ForgotAccepted = t.Object({ detail: t.String() }, { title: "ForgotAccepted" });
export type ForgotAccepted = Static<typeof ForgotAccepted>;
export const PasswordReset = t.Object({ detail: t.String() }, { title: "PasswordReset" });
export type PasswordReset = Static<typeof PasswordReset>;
export const PasswordChanged = t.Object({ detail: t.String(), revoked: t.Integer() }, { title: "PasswordChanged" });
export type PasswordChanged = Static<typeof PasswordChanged>;

/** A reset link works for 30 minutes (issue 16). */
export const RESET_TTL_MS = 30 * 60_000;

export const FORGOT_ACCEPTED = "If that address has an account, a link to choose a new password is on its way.";

export const passwordErrors = {
  resetTokenInvalid: () =>
    new AppError(400, "reset_token_invalid", "This password-reset link is not valid: it was already used, it expired, or it never existed."),
};
