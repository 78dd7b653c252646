import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { allAudit } from "../support";
import { setCookies } from "../../helpers";
import { OidcBrowser } from "../../support/oidc-browser";
import { type Forgery, startForger } from "../../support/oidc-forger";
import { PROVIDERS, type OidcWorld, addProvider, locationOf, oidcWorld, signInVia, startPath } from "../../support/oidc-world";
import { testSql } from "../../support/sql";
import { hashToken, newSecretToken } from "../../../src/kernel/ids";

let w: OidcWorld;
let forger: Awaited<ReturnType<typeof startForger>>;
let forged: { id: string };
const FORGER_SECRET = `forger-client-secret-${crypto.randomUUID()}`;
/** Every state, code and cookie the attacks handle: none may reach an audit row. */
const handled = new Set<string>();

beforeAll(async () => {
  w = await oidcWorld();
  forger = await startForger(FORGER_SECRET);
  forged = await addProvider(w.t, w.acme.access_token, { issuer: forger.issuer, client_id: "forged-client", client_secret: FORGER_SECRET, allowed_domains: ["example.com"], auto_join: true });
});
afterAll(async () => {
  forger.close();
  await w.close();
});

const usersNamed = async (email: string) => (await testSql(w.t.ctx).get<{ n: number }>("SELECT count(*) AS n FROM users WHERE email = ?1", email))!.n;
const identities = async () => (await testSql(w.t.ctx).get<{ n: number }>("SELECT count(*) AS n FROM user_identities"))!.n;

/** Starts at the app, signs in at the provider; answers the callback URL (not yet opened) and the browser. */
async function upToCallback(subdomain: string, providerId: string, account: string, tamper?: (u: URL) => void) {
  const browser = w.browser();
  const start = await browser.app("GET", startPath(providerId), subdomain);
  const to = new URL(locationOf(start)!);
  tamper?.(to);
  const callback = await browser.authorize(to.href, account);
  for (const [k, v] of callback.searchParams) handled.add(v);
  handled.add(browser.cookies(subdomain).svc_oauth!);
  return { browser, callback, path: OidcBrowser.pathOf(callback) };
}

/** The callback failed into the sign-in page with `code`, and opened no session. */
function refused(res: Response, code: string, page = "/sign-in") {
  expect({ status: res.status, location: locationOf(res) }).toEqual({ status: 302, location: `${page}?error=${code}` });
  expect(setCookies(res).svc_session).toBeUndefined();
  expect(setCookies(res).svc_refresh).toBeUndefined();
}

describe("state and browser binding", () => {
  test("a wrong state is refused", async () => {
    w.op.accounts.set("wrong-state", { email: "wrong-state@example.com", email_verified: true });
    const { browser, callback } = await upToCallback("acme", w.providerA.id, "wrong-state");
    callback.searchParams.set("state", "not-the-state-we-sent-0123456789abcdef");
    refused(await browser.app("GET", OidcBrowser.pathOf(callback), "acme"), "oauth_state_invalid");
  });

  test("a replayed state is refused: a state works once", async () => {
    w.op.accounts.set("replayer", { email: "replayer@example.com", email_verified: true });
    const { browser, path } = await upToCallback("acme", w.providerA.id, "replayer");
    const cookie = browser.cookies("acme").svc_oauth!;
    const first = await browser.app("GET", path, "acme");
    expect(locationOf(first)).toBe("/");
    const replay = await w.t.request("GET", path, { tenant: "acme", cookies: { svc_oauth: cookie } });
    refused(replay, "oauth_state_invalid");
  });

  test("a callback opened in another browser (no flow cookie, or its own) is refused, and cannot spend the flow", async () => {
    w.op.accounts.set("two-browsers", { email: "two@example.com", email_verified: true });
    const { browser, path } = await upToCallback("acme", w.providerA.id, "two-browsers");
    refused(await w.browser().app("GET", path, "acme"), "oauth_state_invalid");
    // Another browser's own flow cookie does not fit either.
    const other = w.browser();
    await other.app("GET", startPath(w.providerA.id), "acme");
    refused(await other.app("GET", path, "acme"), "oauth_state_invalid");
    expect(await usersNamed("two@example.com")).toBe(0);
    // The browser that started it still can, once.
    expect(locationOf(await browser.app("GET", path, "acme"))).toBe("/");
    expect(await usersNamed("two@example.com")).toBe(1);
  });

  test("an expired flow is refused", async () => {
    w.op.accounts.set("slow", { email: "slow@example.com", email_verified: true });
    const { browser, path } = await upToCallback("acme", w.providerA.id, "slow");
    w.clock.advance(601_000);
    refused(await browser.app("GET", path, "acme"), "oauth_state_invalid");
  });

  test("a callback with no state at all, or junk, is a redirect with a code, never an error page", async () => {
    refused(await w.browser().app("GET", "/api/v1/auth/oauth/callback", "acme"), "oauth_state_invalid");
    refused(await w.browser().app("GET", "/api/v1/auth/oauth/callback?state=%ZZ&code=%00&error=x", "acme"), "oauth_state_invalid");
  });
});

describe("the state names its organization (issue 19)", () => {
  /** A flow of acme's provider opened straight in the store, whose state hashes as `stateHash`; answers its cookie. */
  async function flowWithHash(stateHash: string): Promise<string> {
    const cookie = `cookie-${crypto.randomUUID()}`;
    handled.add(cookie);
    await w.t.ctx.repos.oidc.openFlow({
      state_hash: stateHash, tenant_id: w.acme.tenant.id, provider_id: w.providerA.id, user_id: null, browser_hash: hashToken(cookie),
      verifier_sealed: "v1.not.used", nonce: "a-nonce", created_at: w.clock.now(), expires_at: w.clock.now() + 600_000,
    });
    return cookie;
  }
  const random = () => newSecretToken();
  /** Why the newest callback failed (its audit row's reason). */
  const lastReason = async () => JSON.parse((await allAudit(w.t)).filter((a) => a.action === "oauth.failure").at(-1)!.detail as string).reason;
  const flowsWith = async (hash: string) => (await testSql(w.t.ctx).get<{ n: number }>("SELECT count(*) AS n FROM oauth_flows WHERE state_hash = ?1", hash))!.n;
  const callback = (state: string, subdomain: string, cookie: string) =>
    w.t.request("GET", `/api/v1/auth/oauth/callback?state=${encodeURIComponent(state)}&code=x`, { tenant: subdomain, cookies: { svc_oauth: cookie } });

  test("the state sent to the provider is `<tenant id>.<random>`", async () => {
    const start = await w.browser().app("GET", startPath(w.providerA.id), "acme");
    const state = new URL(locationOf(start)!).searchParams.get("state")!;
    handled.add(state);
    expect(state).toMatch(new RegExp(`^${w.acme.tenant.id}\\.[A-Za-z0-9_-]{43}$`));
  });

  test("looked up by (tenant, hash): a row of acme holding the hash of a state that names bolt is not found, nor spent", async () => {
    const state = `${w.bolt.tenant.id}.${random()}`;
    handled.add(state);
    const cookie = await flowWithHash(hashToken(state));
    refused(await callback(state, "acme", cookie), "oauth_state_invalid");
    expect(await lastReason()).toBe("unknown or spent state");
    expect(await flowsWith(hashToken(state))).toBe(1);
  });

  test("a state from before states named their tenant is looked up in the callback host's organization; the browser check still holds", async () => {
    const state = random();
    handled.add(state);
    const cookie = await flowWithHash(hashToken(state));
    refused(await callback(state, "bolt", cookie), "oauth_state_invalid");
    expect(await lastReason()).toBe("unknown or spent state");
    // On acme's host it is found: another browser's cookie is refused without spending it.
    refused(await callback(state, "acme", "another-browser-cookie"), "oauth_state_invalid");
    expect(await lastReason()).toBe("browser mismatch");
    expect(await flowsWith(hashToken(state))).toBe(1);
    // Its own browser gets as far as the provider (this code is junk), and the state is spent.
    const last = await callback(state, "acme", cookie);
    expect(last.status).toBe(302);
    expect(await lastReason()).not.toBe("unknown or spent state");
    expect(await flowsWith(hashToken(state))).toBe(0);
  });

  test("a malformed state is refused before any lookup", async () => {
    for (const state of [`bad$tenant.${random()}`, `${w.acme.tenant.id}.short`, `.${random()}`]) {
      refused(await callback(state, "acme", "c"), "oauth_state_invalid");
      expect(await lastReason()).toBe("malformed state");
    }
  });
});

describe("the code and the ID token", () => {
  test("missing PKCE verifier: a code issued for another challenge (an attacker's own request) is refused at the exchange", async () => {
    w.op.accounts.set("attacker", { email: "attacker@example.com", email_verified: true });
    // The attacker runs an authorization of their own at the provider, with their own PKCE challenge...
    const attacker = w.browser();
    const theirs = await attacker.app("GET", startPath(w.providerA.id), "acme");
    const attackerCallback = await attacker.authorize(locationOf(theirs)!, "attacker");
    // ...and plants the code in a victim's callback, with the victim's state and cookie.
    const victim = w.browser();
    const mine = new URL(locationOf(await victim.app("GET", startPath(w.providerA.id), "acme"))!);
    const planted = new URL(attackerCallback);
    planted.searchParams.set("state", mine.searchParams.get("state")!);
    handled.add(mine.searchParams.get("state")!);
    refused(await victim.app("GET", OidcBrowser.pathOf(planted), "acme"), "oauth_provider_error");
    expect(await usersNamed("attacker@example.com")).toBe(0);
  });

  test("nonce mismatch: an ID token minted for another nonce is refused (real provider)", async () => {
    w.op.accounts.set("nonce-victim", { email: "nonce@example.com", email_verified: true });
    const { browser, path } = await upToCallback("acme", w.providerA.id, "nonce-victim", (u) => u.searchParams.set("nonce", "attacker-chosen-nonce-value-123456"));
    refused(await browser.app("GET", path, "acme"), "oauth_token_invalid");
    expect(await usersNamed("nonce@example.com")).toBe(0);
  });

  test("the forging stand-in's honest token is accepted (the control for the forgeries below)", async () => {
    forger.state.forge = "honest";
    forger.state.subject = "honest-subject";
    forger.state.email = "honest@example.com";
    const { browser, path } = await upToCallback("acme", forged.id, "-");
    expect(locationOf(await browser.app("GET", path, "acme"))).toBe("/");
    expect(await usersNamed("honest@example.com")).toBe(1);
  });

  const forgeries: Array<[Forgery, string]> = [
    ["audience", "an ID token for another audience"],
    ["expired", "an expired ID token"],
    ["nonce", "an ID token with another nonce (forging stand-in)"],
    ["alg-none", "alg: none"],
    ["hs256-client-secret", "HS256 keyed with the client secret (algorithm confusion)"],
    ["unknown-key", "a signature by a key outside the provider's JWKS"],
    ["issuer", "an ID token from another issuer"],
  ];
  test.each(forgeries)("%s: %s is refused", async (forge) => {
    forger.state.forge = forge;
    forger.state.subject = `subject-${forge}`;
    forger.state.email = `${forge}@example.com`;
    const before = await identities();
    const { browser, path } = await upToCallback("acme", forged.id, "-");
    refused(await browser.app("GET", path, "acme"), "oauth_token_invalid");
    expect(await usersNamed(`${forge}@example.com`)).toBe(0);
    expect(await identities()).toBe(before);
  });

  test("the provider's own refusal (access_denied) comes back as a code, never its page or text", async () => {
    const browser = w.browser();
    const to = new URL(locationOf(await browser.app("GET", startPath(w.providerA.id), "acme"))!);
    handled.add(to.searchParams.get("state")!);
    const path = `/api/v1/auth/oauth/callback?error=access_denied&error_description=${encodeURIComponent("<script>alert(1)</script>")}&state=${to.searchParams.get("state")}`;
    refused(await browser.app("GET", path, "acme"), "oauth_provider_error");
  });
});

describe("who may sign in or join", () => {
  test("an unverified email never joins", async () => {
    w.op.accounts.set("unverified", { email: "unverified@example.com", email_verified: false });
    const { browser, path } = await upToCallback("acme", w.providerA.id, "unverified");
    refused(await browser.app("GET", path, "acme"), "oauth_email_unverified");
    expect(await usersNamed("unverified@example.com")).toBe(0);
  });

  test("an email matching an existing account is not signed in and not linked: the person links from their security page", async () => {
    const before = await identities();
    w.op.accounts.set("lookalike", { email: w.acme.email, email_verified: true });
    const { browser, path } = await upToCallback("acme", w.providerA.id, "lookalike");
    refused(await browser.app("GET", path, "acme"), "oauth_account_exists");
    expect(await identities()).toBe(before);
  });

  test("a domain outside allowed_domains does not join", async () => {
    w.op.accounts.set("outsider", { email: "outsider@elsewhere.org", email_verified: true });
    const { browser, path } = await upToCallback("acme", w.providerA.id, "outsider");
    refused(await browser.app("GET", path, "acme"), "oauth_domain_not_allowed");
  });

  test("with joining off, an unknown identity is not registered", async () => {
    w.op.accounts.set("no-join", { email: "nojoin@example.com", email_verified: true });
    await w.changeAcmeProvider(w.providerA.id, { auto_join: false });
    try {
      const { browser, path } = await upToCallback("acme", w.providerA.id, "no-join");
      refused(await browser.app("GET", path, "acme"), "oauth_not_registered");
    } finally {
      await w.changeAcmeProvider(w.providerA.id, { auto_join: true });
    }
  });

  test("a disabled provider neither starts nor finishes a flow", async () => {
    w.op.accounts.set("late", { email: "late@example.com", email_verified: true });
    const { browser, path } = await upToCallback("acme", w.providerA.id, "late");
    await w.changeAcmeProvider(w.providerA.id, { enabled: false });
    try {
      refused(await browser.app("GET", path, "acme"), "oauth_provider_unavailable");
      refused(await w.browser().app("GET", startPath(w.providerA.id), "acme"), "oauth_provider_unavailable");
      expect((await w.t.json("GET", "/api/v1/auth/providers/public", { tenant: "acme" })).body.map((p: { id: string }) => p.id)).not.toContain(w.providerA.id);
    } finally {
      await w.changeAcmeProvider(w.providerA.id, { enabled: true });
    }
  });
});

describe("a disabled organization", () => {
  const setDisabled = async (at: number | null) => await testSql(w.t.ctx).run("UPDATE tenants SET disabled_at = ?2 WHERE id = ?1", w.acme.tenant.id, at);
  const flows = async () => (await testSql(w.t.ctx).get<{ n: number }>("SELECT count(*) AS n FROM oauth_flows"))!.n;

  test("start does not send the browser to the provider: /sign-in?error=tenant_disabled, no flow, no cookie; a flow begun before finishes nothing", async () => {
    w.op.accounts.set("frozen", { email: "frozen@example.com", email_verified: true });
    // A flow begun while the organization was in service, finished after the operator disabled it.
    const { browser, path } = await upToCallback("acme", w.providerA.id, "frozen");
    await setDisabled(Date.now());
    try {
      const before = await flows();
      const start = await w.browser().app("GET", startPath(w.providerA.id), "acme");
      refused(start, "tenant_disabled");
      expect(setCookies(start).svc_oauth).toBeUndefined();
      expect(await flows()).toBe(before);
      // The callback neither joins nor signs in.
      refused(await browser.app("GET", path, "acme"), "tenant_disabled");
      expect(await usersNamed("frozen@example.com")).toBe(0);
      const failures = (await allAudit(w.t)).filter((a) => a.action === "oauth.failure" && JSON.stringify(a).includes("tenant_disabled"));
      expect(failures.length).toBe(2);
    } finally {
      await setDisabled(null);
    }
    // Back in service: the same provider starts again.
    const again = await w.browser().app("GET", startPath(w.providerA.id), "acme");
    expect(new URL(locationOf(again)!).origin).toBe(w.op.issuer);
  });
});

describe("organizations stay apart", () => {
  test("a flow of organization A opened on organization B's host is refused", async () => {
    w.op.accounts.set("crosser", { email: "crosser@example.com", email_verified: true });
    const { browser, path } = await upToCallback("acme", w.providerA.id, "crosser");
    const res = await w.t.request("GET", path, { tenant: "bolt", cookies: browser.cookies("acme") });
    refused(res, "oauth_identity_other_org");
    expect(await usersNamed("crosser@example.com")).toBe(0);
  });

  test("an identity linked in A finds nothing in B: B's own rules apply, and A's account is never opened", async () => {
    w.op.accounts.set("both", { email: "both@example.com", email_verified: true });
    const inA = await signInVia(w.browser(), "acme", w.providerA.id, "both");
    const aUser = (await w.t.json("GET", "/api/v1/auth/me", { token: setCookies(inA).svc_session!.value })).body.user;
    const inB = await signInVia(w.browser(), "bolt", w.providerB.id, "both");
    expect(locationOf(inB)).toBe("/");
    const bUser = (await w.t.json("GET", "/api/v1/auth/me", { token: setCookies(inB).svc_session!.value })).body;
    expect(bUser.tenant.subdomain).toBe("bolt");
    expect(bUser.user.id).not.toBe(aUser.id);
  });
});

test("no state, code, cookie or client secret is in any audit row; every failure is audited with its code", async () => {
  const rows = await allAudit(w.t);
  const text = JSON.stringify(rows);
  for (const s of [...handled, FORGER_SECRET]) if (s.length >= 8) expect(text.includes(s) ? s : null).toBeNull();
  const failures = rows.filter((r) => r.action === "oauth.failure").map((r) => JSON.parse(r.detail as string).code);
  for (const code of ["oauth_state_invalid", "oauth_token_invalid", "oauth_provider_error", "oauth_email_unverified", "oauth_account_exists", "oauth_domain_not_allowed", "oauth_identity_other_org"]) {
    expect(failures).toContain(code);
  }
});
