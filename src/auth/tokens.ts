import { SignJWT, errors as joseErrors, jwtVerify } from "jose";
import { errors } from "../kernel/errors";

export type TokenType = "access" | "refresh" | "2fa";

export interface TokenClaims {
  sub: string;
  tid: string;
  sid: string;
  typ: TokenType;
  jti: string;
  iat: number;
  exp: number;
}

export const ISSUER = "workspace-suite";
export const AUDIENCE = "workspace-suite-api";
const REQUIRED = ["iss", "aud", "sub", "tid", "sid", "typ", "jti", "iat", "exp"];
/** Tokens whose signature and claims were already checked; a browser sends the same one for minutes. */
const VERIFIED_CACHE_SIZE = 10_000;

/**
 * HS256 tokens whose every verify pins the algorithm, issuer, audience, header type and the
 * `typ` claim (RFC 8725), so a token of one kind is never accepted where another is expected.
 */
export function createTokens(secret: string, refreshKey: string, now: () => number) {
  // Imported once: given raw bytes, jose would import the key again for every sign and verify.
  const key = crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
  const hmac = new Bun.CryptoHasher("sha256", refreshKey);
  // A full verify (WebCrypto HMAC through jose) costs about 60 µs, a fifth of a deal-list request.
  // Only a token that passed it is remembered, with its claims; its expiry is checked again on
  // every use, and revocation is the session lookup's job, which runs on every request anyway.
  const verified = new Map<string, TokenClaims>();

  async function verifyFully(token: string, expected: TokenType): Promise<TokenClaims> {
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(token, await key, {
        algorithms: ["HS256"],
        issuer: ISSUER,
        audience: AUDIENCE,
        typ: "JWT",
        requiredClaims: REQUIRED,
        currentDate: new Date(now()),
      }));
    } catch (e) {
      if (e instanceof joseErrors.JWTExpired) throw errors.tokenExpired();
      throw errors.tokenInvalid();
    }
    const { sub, tid, sid, typ, jti, iat, exp } = payload;
    if (typ !== expected) throw errors.tokenInvalid();
    for (const v of [sub, tid, sid, jti]) if (typeof v !== "string" || v === "") throw errors.tokenInvalid();
    return { sub, tid, sid, typ, jti, iat, exp } as TokenClaims;
  }

  /**
   * The claims of a token already verified (its kind and expiry checked again), undefined for one
   * not seen yet: the check behind every request, so it awaits nothing.
   */
  function known(token: string, expected: TokenType): TokenClaims | undefined {
    const claims = verified.get(token);
    if (claims === undefined) return undefined;
    if (claims.typ !== expected) throw errors.tokenInvalid();
    if (claims.exp * 1000 <= now()) throw errors.tokenExpired();
    return claims;
  }

  return {
    known,
    /** The claims' order is fixed, so the same claims always sign to the same token. */
    async sign(c: TokenClaims): Promise<string> {
      return new SignJWT({ tid: c.tid, sid: c.sid, typ: c.typ })
        .setProtectedHeader({ alg: "HS256", typ: "JWT" })
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setSubject(c.sub)
        .setJti(c.jti)
        .setIssuedAt(c.iat)
        .setExpirationTime(c.exp)
        .sign(await key);
    },

    async verify(token: string, expected: TokenType): Promise<TokenClaims> {
      const seen = known(token, expected);
      if (seen !== undefined) return seen;
      const claims = await verifyFully(token, expected);
      if (verified.size >= VERIFIED_CACHE_SIZE) verified.delete(verified.keys().next().value!);
      verified.set(token, claims);
      return claims;
    },

    /**
     * The jti of a session's refresh token of one generation: derivable by the server alone,
     * so no refresh token material needs storing and a two-tab retry gets the very same token.
     */
    refreshJti(sessionId: string, generation: number): string {
      return hmac.copy().update(`${sessionId}:${generation}`).digest("base64url").slice(0, 32);
    },
  };
}

export type Tokens = ReturnType<typeof createTokens>;
