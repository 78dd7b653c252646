/**
 * The e2e side of the identity-provider harness (issue 17): the same real OpenID Provider as
 * tests/support/oidc-provider.ts (the `oidc-provider` package, its devInteractions login page,
 * consent granted at once), with the clients' redirect URIs on the port dist/suite was given
 * (that harness registers :8000, where the in-process app tests pretend to be), and its login
 * page driven in Chromium.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import Provider from "oidc-provider";
import type { Page } from "playwright-core";
import type { OpAccount } from "../../support/oidc-provider";
import { noteSecret } from "../../security/ledger";

export interface E2eClient {
  client_id: string;
  client_secret: string;
  /** The organization's origin as the browser sees it: http://<sub>.localhost:<port>. */
  origin: string;
}

export async function startBrowserOp(clients: E2eClient[]) {
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
      redirect_uris: [`${c.origin}/api/v1/auth/oauth/callback`],
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
    loadExistingGrant: async (ctx: { oidc: { provider: Provider; client: { clientId: string }; session: { accountId: string } } }) => {
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
      grant.addOIDCScope("openid email profile");
      await grant.save();
      return grant;
    },
    ttl: { AccessToken: 600, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Session: 600, Grant: 600 },
  } as never);
  provider.on("server_error", () => {});
  handler = provider.callback() as never;
  return { issuer, accounts, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

export type BrowserOp = Awaited<ReturnType<typeof startBrowserOp>>;

/**
 * At the provider's login page (its devInteractions form), signs in as `account`, as a person
 * would: the login and any password, then its button. A browser already signed in at the
 * provider is sent straight back, with no page to fill.
 */
export async function signInAtProvider(page: Page, op: BrowserOp, account: string): Promise<void> {
  await page.waitForURL((u) => u.origin !== op.issuer || u.pathname.startsWith("/interaction/"));
  if (new URL(page.url()).origin !== op.issuer) return;
  await page.locator('input[name="login"]').fill(account);
  await page.locator('input[name="password"]').fill("any password: this provider's devInteractions take any");
  await page.getByRole("button", { name: "Sign-in" }).click();
  await page.waitForURL((u) => u.origin !== op.issuer);
}

/**
 * The watch's problems that are ours: the provider's own pages (a stand-in for Google's or
 * Microsoft's, on 127.0.0.1, which imports a web font from Google) are not the web app's.
 */
export const ownProblems = (problems: string[], op: BrowserOp) => problems.filter((p) => !p.includes(op.issuer) && !p.includes("fonts.googleapis.com") && !p.includes("fonts.gstatic.com"));
