import { t, type Static } from "elysia";
import { AppError } from "../../kernel/errors";

/** newTenantToken() makes `<tenant id>.<43 characters>` (65 today); the bound only keeps junk short. */
export const VerifyEmailBody = t.Object({ token: t.String({ minLength: 1, maxLength: 256 }) });
export type VerifyEmailBody = Static<typeof VerifyEmailBody>;

export const EmailVerified = t.Object({ detail: t.String(), email: t.String(), email_verified_at: t.String({ format: "date-time" }) }, { title: "EmailVerified" });
export type EmailVerified = Static<typeof EmailVerified>;
export const VerificationSent = t.Object({ detail: t.String() }, { title: "VerificationSent" });
export type VerificationSent = Static<typeof VerificationSent>;

/** A verification link works for 24 hours (issue 16). */
export const VERIFY_TTL_MS = 24 * 60 * 60_000;

export const emailErrors = {
  verificationTokenInvalid: () =>
    new AppError(400, "verification_token_invalid", "This verification link is not valid: it was already used, it expired, or it never existed."),
  alreadyVerified: () => new AppError(409, "email_already_verified", "Your email address is already verified."),
};
