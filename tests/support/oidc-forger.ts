import { SignJWT, exportJWK, generateKeyPair } from "jose";
import { noteSecret } from "../security/ledger";

/**
 * A FORGING PROVIDER STAND-IN, not a real identity provider: an OpenID Provider that answers
 * whatever ID token a test asks for (another audience, expired, another nonce, `alg: none`, an
 * HS256 token keyed with the client secret, a key outside its JWKS), so the tests can show the
 * app refuses each. Its discovery, authorization, token and JWKS endpoints are just enough for
 * the app's side of the flow; with `forge: "honest"` it answers a correct token (the control).
 */
export type Forgery = "honest" | "audience" | "expired" | "nonce" | "alg-none" | "hs256-client-secret" | "unknown-key" | "issuer" | "unverified-email";

export async function startForger(clientSecret: string) {
  noteSecret("oidc client secret", clientSecret);
  const { publicKey, privateKey } = await generateKeyPair("RS256");
  const stranger = await generateKeyPair("RS256");
  const jwk = { ...(await exportJWK(publicKey)), kid: "k1", alg: "RS256", use: "sig" };
  const codes = new Map<string, { nonce: string; challenge: string; clientId: string }>();
  const state = { forge: "honest" as Forgery, subject: "forged-subject", email: "forged@example.com" };
  let issuer = "";

  async function idToken(clientId: string, nonce: string): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    const f = state.forge;
    const claims: Record<string, unknown> = {
      iss: f === "issuer" ? "http://127.0.0.1:1/elsewhere" : issuer,
      sub: state.subject,
      aud: f === "audience" ? "someone-elses-client" : clientId,
      iat: f === "expired" ? now - 7200 : now,
      exp: f === "expired" ? now - 3600 : now + 600,
      nonce: f === "nonce" ? "a-nonce-the-app-never-sent" : nonce,
      email: state.email,
      email_verified: f !== "unverified-email",
    };
    if (f === "alg-none") {
      const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString("base64url");
      return `${enc({ alg: "none", typ: "JWT" })}.${enc(claims)}.`;
    }
    if (f === "hs256-client-secret") {
      return new SignJWT(claims).setProtectedHeader({ alg: "HS256", kid: "k1" }).sign(new TextEncoder().encode(clientSecret));
    }
    const key = f === "unknown-key" ? stranger.privateKey : privateKey;
    return new SignJWT(claims).setProtectedHeader({ alg: "RS256", kid: "k1" }).sign(key);
  }

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      switch (url.pathname) {
        case "/.well-known/openid-configuration":
          return Response.json({
            issuer,
            authorization_endpoint: `${issuer}/authorize`,
            token_endpoint: `${issuer}/token`,
            jwks_uri: `${issuer}/jwks`,
            response_types_supported: ["code"],
            subject_types_supported: ["public"],
            // It even claims to accept these: the app must not believe it.
            id_token_signing_alg_values_supported: ["RS256", "HS256", "none"],
            code_challenge_methods_supported: ["S256"],
          });
        case "/jwks":
          return Response.json({ keys: [jwk] });
        case "/authorize": {
          const q = url.searchParams;
          const code = crypto.randomUUID();
          noteSecret("oauth code", code);
          codes.set(code, { nonce: q.get("nonce") ?? "", challenge: q.get("code_challenge") ?? "", clientId: q.get("client_id") ?? "" });
          const back = new URL(q.get("redirect_uri")!);
          back.searchParams.set("code", code);
          back.searchParams.set("state", q.get("state") ?? "");
          return new Response(null, { status: 302, headers: { location: back.href } });
        }
        case "/token": {
          const form = new URLSearchParams(await req.text());
          const grant = codes.get(form.get("code") ?? "");
          codes.delete(form.get("code") ?? "");
          if (!grant || form.get("client_secret") !== clientSecret) return Response.json({ error: "invalid_grant" }, { status: 400 });
          const access = crypto.randomUUID();
          noteSecret("access token", access);
          return Response.json({ access_token: access, token_type: "Bearer", expires_in: 600, id_token: await idToken(grant.clientId, grant.nonce) });
        }
        default:
          return new Response("not found", { status: 404 });
      }
    },
  });
  issuer = `http://127.0.0.1:${server.port}`;
  return { issuer, state, close: () => server.stop(true) };
}
