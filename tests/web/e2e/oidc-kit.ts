/**
 * The e2e side of the identity-provider harness (issue 17): the real OpenID Provider of
 * tests/support/oidc-provider.ts (the `oidc-provider` package, its devInteractions login page,
 * consent granted at once), its client's redirect URI on the free port dist/suite was given, and
 * its login page driven in Chromium.
 */
import type { Page } from "playwright-core";
import { type OidcProviderHarness, startOidcProvider } from "../../support/oidc-provider";

export type BrowserOp = OidcProviderHarness;

/** One client for the organization served at `origin` (http://<sub>.localhost:<port>). */
export function startBrowserOp(client: { client_id: string; client_secret: string; subdomain: string; origin: string }): Promise<BrowserOp> {
  return startOidcProvider([{ ...client, redirect_uri: `${client.origin}/api/v1/auth/oauth/callback` }]);
}

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
 * Microsoft's, on 127.0.0.1, which import a web font from Google) are not the web app's.
 */
export const ownProblems = (problems: string[], op: BrowserOp) => problems.filter((p) => !p.includes(op.issuer) && !p.includes("fonts.googleapis.com") && !p.includes("fonts.gstatic.com"));
