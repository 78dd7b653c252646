import { t } from "elysia";
import { AppError } from "../../kernel/errors";

/** newTenantToken() makes `<tenant id>.<43 characters>`; the bound only keeps junk short. */
export const NotMeBody = t.Object({ token: t.String({ minLength: 1, maxLength: 256 }) });

export const NotMeDone = t.Object(
  {
    detail: t.String(),
    sessions_ended: t.Integer({ description: "How many sessions ended: the new device's and every one started after it" }),
  },
  { title: "NotMeDone" },
);

/** A "this wasn't me" link works once, for 7 days (issue 33.2). */
export const NOTICE_TTL_MS = 7 * 86_400_000;
/** A client that keeps no cookie and is no browser is new again 30 days after its last mail. */
export const SOURCE_KNOWN_MS = 30 * 86_400_000;
/** A device not seen for this long is forgotten (browsers keep the cookie 400 days at most). */
export const DEVICE_FORGOTTEN_MS = 400 * 86_400_000;

export const NOT_ME_DONE =
  "Signed out: that sign-in and every one since have ended. A link to choose a new password is on its way to your mailbox.";

export const newDeviceErrors = {
  noticeInvalid: () => new AppError(400, "not_me_token_invalid", "This link is not valid: it was already used, it expired, or it never existed."),
};
