import { expect } from "bun:test";
import { LIMITS } from "../../src/security/rate-limit";
import type { TestApp } from "../helpers";
import { clockedApp } from "../auth/support";
import { tokenOf } from "../auth/password/support";
import { noteSecret } from "../security/ledger";
import { OidcBrowser } from "./oidc-browser";
import { type OidcProviderHarness, startOidcProvider } from "./oidc-provider";

export const PROVIDERS = "/api/v1/auth/providers";
export const IDENTITIES = "/api/v1/auth/identities";
export const startPath = (providerId: string) => `/api/v1/auth/oauth/${providerId}/start`;

/**
 * Two organizations (acme, bolt) on one app with loopback issuers allowed, and one real OpenID
 * Provider holding a client for each: acme's provider lets example.com addresses join.
 */
export async function oidcWorld(env: Record<string, string> = {}) {
  // The clock stands still and every in-process request has the same (no) address: the per-IP
  // limits of starts and callbacks are raised out of reach here (providers.test.ts meets them).
  const limits = { oauthStartPerIp: { ...LIMITS.oauthStartPerIp, max: 1_000_000 }, oauthCallbackPerIp: { ...LIMITS.oauthCallbackPerIp, max: 1_000_000 } };
  const { t, clock } = clockedApp({ env: { SUITE_OIDC_TEST_LOOPBACK: "true", ...env }, limits });
  // Both admins prove their address (the mailed link): an unverified account may not link (issue 16).
  const proven = async (subdomain: string) => {
    const org = await t.signup(subdomain);
    const mail = (await t.ctx.repos.mail.list()).find((m) => m.kind === "email_verification" && m.recipient === org.email);
    const r = await t.json("POST", "/api/v1/auth/email/verify", { body: { token: tokenOf(mail!.link!) } });
    expect(r.status).toBe(200);
    return org;
  };
  const acme = await proven("acme");
  const bolt = await proven("bolt");
  const secrets = { acme: `acme-secret-${crypto.randomUUID()}`, bolt: `bolt-secret-${crypto.randomUUID()}` };
  const op = await startOidcProvider([
    { client_id: "acme-app", client_secret: secrets.acme, subdomain: "acme" },
    { client_id: "bolt-app", client_secret: secrets.bolt, subdomain: "bolt" },
  ]);
  const providerA = await addProvider(t, acme.access_token, { issuer: op.issuer, client_id: "acme-app", client_secret: secrets.acme, allowed_domains: ["example.com"], auto_join: true });
  const providerB = await addProvider(t, bolt.access_token, { issuer: op.issuer, client_id: "bolt-app", client_secret: secrets.bolt, allowed_domains: ["example.com"], auto_join: true });
  return {
    t,
    clock,
    acme,
    bolt,
    op,
    providerA,
    providerB,
    browser: () => new OidcBrowser(t),
    /** PATCHes acme's provider as its admin, proving the password first: provider changes need a recent sign-in and tests move the clock. */
    changeAcmeProvider: async (id: string, body: Record<string, unknown>) => {
      const proof = await t.json("POST", "/api/v1/auth/reauthenticate", { token: acme.access_token, body: { password: acme.password } });
      expect(proof.status).toBe(200);
      const r = await t.json("PATCH", `${PROVIDERS}/${id}`, { token: acme.access_token, body });
      expect(r.status).toBe(200);
      return r;
    },
    close: async () => {
      await op.close();
      t.close();
    },
  };
}

export type OidcWorld = Awaited<ReturnType<typeof oidcWorld>>;

/** Adds an `oidc` provider through the admin API; answers its ProviderRead. */
export async function addProvider(t: TestApp, token: string, body: Record<string, unknown>) {
  noteSecret("oidc client secret", body.client_secret);
  const r = await t.json("POST", PROVIDERS, { token, body: { kind: "oidc", name: `OP ${Math.random().toString(36).slice(2, 7)}`, enabled: true, ...body } });
  expect(r.status).toBe(201);
  return r.body as { id: string; redirect_uri: string; name: string };
}

/** A whole sign-in at `subdomain` as the provider's `account`: the callback's answer. */
export async function signInVia(browser: OidcBrowser, subdomain: string, providerId: string, account: string, headers: Record<string, string> = {}): Promise<Response> {
  const start = await browser.app("GET", startPath(providerId), subdomain, { headers });
  expect(start.status).toBe(302);
  const callback = await browser.authorize(start.headers.get("location")!, account);
  return browser.app("GET", OidcBrowser.pathOf(callback), subdomain, { headers });
}

/** Where a 302 sends the browser. */
export const locationOf = (r: Response) => r.headers.get("location");

export type { OidcProviderHarness };
