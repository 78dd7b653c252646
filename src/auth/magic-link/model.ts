import { t, type Static } from "elysia";
import { Email } from "../../team/model";

export const MagicLinkBody = t.Object({ email: Email });
export type MagicLinkBody = Static<typeof MagicLinkBody>;

/** newTenantToken() makes `<tenant id>.<43 characters>` (65 today); the bound only keeps junk short. */
export const MagicVerifyBody = t.Object({ token: t.String({ minLength: 1, maxLength: 256 }) });
export type MagicVerifyBody = Static<typeof MagicVerifyBody>;

export const MagicLinkAccepted = t.Object({ detail: t.String() });
export type MagicLinkAccepted = Static<typeof MagicLinkAccepted>;
