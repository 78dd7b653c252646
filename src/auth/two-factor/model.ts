import { t, type Static } from "elysia";
import { AppError, BEARER } from "../../kernel/errors";
import { PASSWORD_MAX } from "../../security/passwords";

/** A code from the authenticator app. */
const TotpCode = t.String({ pattern: "^[0-9]{6}$" });
/** Where a TOTP code is accepted, so is a backup code (`xxxx-xxxx`, dash optional, any case). */
const TotpOrBackupCode = t.String({ pattern: "^([0-9]{6}|[A-Za-z0-9]{4}-?[A-Za-z0-9]{4})$" });

/** Setup and backup-code regeneration take no body, or this one. */
export const SessionsOption = t.Optional(t.Nullable(t.Object({ revoke_other_sessions: t.Optional(t.Boolean()) })));
export type SessionsOption = Static<typeof SessionsOption>;

export const ConfirmBody = t.Object({ code: TotpCode });
export type ConfirmBody = Static<typeof ConfirmBody>;

export const VerifyBody = t.Object({
  temp_token: t.String({ minLength: 1, maxLength: 4096 }),
  code: TotpOrBackupCode,
});
export type VerifyBody = Static<typeof VerifyBody>;

export const DisableBody = t.Object({
  password: t.String({ minLength: 1, maxLength: PASSWORD_MAX }),
  code: TotpOrBackupCode,
  revoke_other_sessions: t.Optional(t.Boolean()),
});
export type DisableBody = Static<typeof DisableBody>;

export const TwoFactorSetup = t.Object({ secret: t.String(), otpauth_url: t.String(), backup_codes: t.Array(t.String()) });
export type TwoFactorSetup = Static<typeof TwoFactorSetup>;
export const TwoFactorStatus = t.Object({ enabled: t.Boolean(), pending: t.Boolean(), backup_codes_remaining: t.Integer() });
export type TwoFactorStatus = Static<typeof TwoFactorStatus>;
export const BackupCodes = t.Object({ backup_codes: t.Array(t.String()) });
export type BackupCodes = Static<typeof BackupCodes>;
export const TwoFactorEnabled = t.Object({ enabled: t.Boolean() });
export type TwoFactorEnabled = Static<typeof TwoFactorEnabled>;

/**
 * Authenticator apps show "123 456"; people paste it so. Spaces are dropped before the code is
 * validated, as `lowerCaseFields` trims addresses.
 */
export const compactCode = ({ body }: { body: unknown }): void => {
  if (!body || typeof body !== "object") return;
  const b = body as Record<string, unknown>;
  if (typeof b.code === "string") b.code = b.code.replace(/\s+/g, "");
};

export const twoFactorErrors = {
  invalidCode: () => new AppError(401, "invalid_2fa_code", "The code is not valid.", BEARER),
  codeNeeded: () => new AppError(401, "invalid_2fa_code", "Two-factor authentication is on: give a code from the app (or a backup code) too.", BEARER),
  invalidTempToken: () => new AppError(401, "invalid_temp_token", "The sign-in challenge is not valid or has expired. Sign in again.", BEARER),
  alreadyEnabled: () => new AppError(409, "two_factor_already_enabled", "Two-factor authentication is already on."),
  notPending: () => new AppError(409, "two_factor_not_pending", "There is no two-factor setup to confirm: start one first."),
  notEnabled: () => new AppError(409, "two_factor_not_enabled", "Two-factor authentication is not on."),
  locked: (retryAfterSeconds: number) =>
    new AppError(429, "rate_limited", "Too many wrong codes: the second factor is locked for a while. Try again later.", {
      "Retry-After": String(Math.max(1, Math.ceil(retryAfterSeconds))),
    }),
};
