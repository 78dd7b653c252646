import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import Provider from "oidc-provider";
import { noteSecret } from "../security/ledger";

/**
 * A real, certified OpenID Provider (the `oidc-provider` package) on a loopback port, in this
 * process: its own accounts, one confidential client per organization, PKCE required. Sign-in
 * at it is driven in code by OidcBrowser (its login form is the package's devInteractions).
 */
export interface OpClient {
  client_id: string;
  client_secret: string;
  /** The organization's subdomain: the redirect URI is http://<sub>.localhost:8000/api/v1/auth/oauth/callback. */
  subdomain: string;
  /** Another redirect URI (a server on another port: the provider's `redirect_uri` in ProviderRead). */
  redirect_uri?: string;
}

export interface OpAccount {
  email?: string;
  email_verified?: boolean;
}

export async function startOidcProvider(clients: OpClient[]) {
  let handler: ((req: never, res: never) => void) | null = null;
  const server = createServer((req, res) => handler!(req as never, res as never));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const accounts = new Map<string, OpAccount>();
  for (const c of clients) noteSecret("oidc client secret", c.client_secret);

  const provider = new Provider(issuer, {
    clients: clients.map((c) => ({
      client_id: c.client_id,
      client_secret: c.client_secret,
      redirect_uris: [c.redirect_uri ?? `http://${c.subdomain}.localhost:8000/api/v1/auth/oauth/callback`],
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_post",
    })),
    pkce: { required: () => true },
    features: { devInteractions: { enabled: true } },
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"] },
    findAccount: async (_ctx: unknown, id: string) => {
      const a = accounts.get(id);
      if (!a) return undefined;
      return { accountId: id, claims: async () => ({ sub: id, ...a }) };
    },
    // Consent is granted at once: the tests are about the relying party, not the consent screen.
    loadExistingGrant: async (ctx: { oidc: { provider: Provider; client: { clientId: string }; session: { accountId: string } } }) => {
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
      grant.addOIDCScope("openid email profile");
      await grant.save();
      return grant;
    },
    ttl: { AccessToken: 600, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Session: 600, Grant: 600 },
  } as never);
  // Its warnings about development defaults (in-memory adapter, quick-start keys) are expected here.
  provider.on("server_error", () => {});
  handler = provider.callback() as never;

  return {
    issuer,
    accounts,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export type OidcProviderHarness = Awaited<ReturnType<typeof startOidcProvider>>;
