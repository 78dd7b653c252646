import { t } from "elysia";
import { Email } from "../../users/model";

export const MagicLinkBody = t.Object({ email: Email });

/** newSecretToken() makes 43 characters; the bound only keeps junk short. */
export const MagicVerifyBody = t.Object({ token: t.String({ minLength: 1, maxLength: 256 }) });

export const MagicLinkAccepted = t.Object({ detail: t.String() });
