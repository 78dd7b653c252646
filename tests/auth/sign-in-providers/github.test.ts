import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { setCookies } from "../../helpers";
import { startGithubStandIn } from "../../support/oidc-github";
import { PROVIDERS, type OidcWorld, locationOf, oidcWorld, signInVia } from "../../support/oidc-world";
import { testSql } from "../../support/sql";

const SECRET = `github-client-secret-${crypto.randomUUID()}`;
let github: ReturnType<typeof startGithubStandIn>;
let w: OidcWorld;
let providerId: string;

beforeAll(async () => {
  // The GitHub stand-in answers before the app starts: its address is a (test-only) setting.
  github = startGithubStandIn("gh-client", SECRET);
  w = await oidcWorld({ SUITE_OIDC_TEST_GITHUB_URL: github.url });
  const r = await w.t.json("POST", PROVIDERS, {
    token: w.acme.access_token,
    body: { kind: "github", name: "GitHub", client_id: "gh-client", client_secret: SECRET, allowed_domains: ["example.com"], auto_join: true, enabled: true },
  });
  expect(r.status).toBe(201);
  expect(r.body.issuer).toBeNull();
  providerId = r.body.id;
});
afterAll(async () => {
  github.close();
  await w.close();
});

describe("GitHub (against a stand-in for its token, user and emails endpoints)", () => {
  test("only a primary, verified address counts", async () => {
    github.state.userId = 1001;
    github.state.emails = [
      { email: "secondary@example.com", primary: false, verified: true },
      { email: "primary@example.com", primary: true, verified: false },
    ];
    const res = await signInVia(w.browser(), "acme", providerId, "-");
    expect(locationOf(res)).toBe("/sign-in?error=oauth_email_unverified");
    expect(setCookies(res).svc_session).toBeUndefined();
  });

  test("a verified primary address of an allowed domain joins; the account is then known by its GitHub id", async () => {
    github.state.userId = 2002;
    github.state.emails = [
      { email: "other@elsewhere.org", primary: false, verified: true },
      { email: "Octo@Example.com", primary: true, verified: true },
    ];
    const res = await signInVia(w.browser(), "acme", providerId, "-");
    expect(locationOf(res)).toBe("/");
    const me = await w.t.json("GET", "/api/v1/auth/me", { token: setCookies(res).svc_session!.value });
    expect(me.body.user.email).toBe("octo@example.com");
    const identity = await testSql(w.t.ctx).get("SELECT issuer, subject FROM user_identities WHERE user_id = ?1", me.body.user.id);
    expect(identity).toEqual({ issuer: "https://github.com", subject: "2002" });

    // The primary address changes at GitHub: the same account, found by id.
    github.state.emails = [{ email: "renamed@example.com", primary: true, verified: true }];
    const again = await signInVia(w.browser(), "acme", providerId, "-");
    expect((await w.t.json("GET", "/api/v1/auth/me", { token: setCookies(again).svc_session!.value })).body.user.id).toBe(me.body.user.id);
  });

  test("a refused code (bad_verification_code) is a provider error", async () => {
    const browser = w.browser();
    const start = await browser.app("GET", `/api/v1/auth/oauth/${providerId}/start`, "acme");
    const state = new URL(locationOf(start)!).searchParams.get("state")!;
    const res = await browser.app("GET", `/api/v1/auth/oauth/callback?code=made-up-code&state=${state}`, "acme");
    expect(locationOf(res)).toBe("/sign-in?error=oauth_provider_error");
  });

  test("GitHub's endpoints move only with the test-only setting, which needs a loopback address and the loopback switch", async () => {
    const { loadConfig } = await import("../../../src/config");
    expect(() => loadConfig({}, { SUITE_OIDC_TEST_GITHUB_URL: github.url })).toThrow(/test-only/);
    expect(() => loadConfig({}, { SUITE_OIDC_TEST_LOOPBACK: "true", SUITE_OIDC_TEST_GITHUB_URL: "http://github.example.net" })).toThrow(/test-only/);
    expect(() => loadConfig({}, { SUITE_OIDC_TEST_LOOPBACK: "true", SUITE_BASE_DOMAIN: "suite.example.com" })).toThrow(/test-only/);
  });
});
