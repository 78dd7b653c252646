import { t, type Static } from "elysia";

/** GET /tls/ask?domain=HOST: the host name the proxy wants a certificate for. */
export const AskQuery = t.Object({ domain: t.String({ minLength: 1, maxLength: 253 }) });
export type AskQuery = Static<typeof AskQuery>;

/** The host name the answer allows, in lower case. */
export const AskAnswer = t.Object({ domain: t.String() }, { title: "TlsAskAnswer" });
export type AskAnswer = Static<typeof AskAnswer>;
