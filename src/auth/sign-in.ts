import type { Cookie } from "elysia";
import type { Config } from "../config";
import { setSessionCookies } from "../http/cookies";
import type { UserRow } from "../team/repo";
import type { LoginResponse } from "./model";
import type { AuthService, IssuedTokens, RequestInfo } from "./service";

/** What a proven first factor (password, magic link) leads to: a session, or the 2FA challenge. */
export type SignInOutcome = { kind: "session"; tokens: IssuedTokens } | { kind: "challenge"; tempToken: string };

/** Answers a temp_token when the user's second factor is on, null when it is not. */
export type SecondFactorGate = (user: UserRow, method: string, req: RequestInfo) => Promise<string | null>;

/**
 * The one way from a first factor to a session, so that no first factor can skip the second:
 * password login and magic-verify both come through here.
 */
export function createSignIn(auth: AuthService, gate: SecondFactorGate) {
  return async (user: UserRow, method: string, req: RequestInfo): Promise<SignInOutcome> => {
    const tempToken = await gate(user, method, req);
    if (tempToken !== null) return { kind: "challenge", tempToken };
    return { kind: "session", tokens: await auth.startSession(user, method, req) };
  };
}

export type SignIn = ReturnType<typeof createSignIn>;

type Jar = Record<string, Cookie<unknown>>;

/** The HTTP answer to a sign-in: a token pair with cookies, or the challenge with none. */
export function answerSignIn(jar: Jar, config: Config, outcome: SignInOutcome): LoginResponse {
  if (outcome.kind === "challenge") return { requires_2fa: true as const, temp_token: outcome.tempToken };
  setSessionCookies(jar, config, outcome.tokens);
  return { access_token: outcome.tokens.access_token, refresh_token: outcome.tokens.refresh_token, token_type: outcome.tokens.token_type };
}
