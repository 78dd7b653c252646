import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ME, SESSIONS, allAudit } from "../support";
import { appCode } from "../two-factor/rfc6238";
import { enable, verify } from "../two-factor/support";
import { setCookies } from "../../helpers";
import { RESET, askReset, newestTokenOf } from "../password/support";
import { IDENTITIES, type OidcWorld, addProvider, locationOf, oidcWorld, signInVia } from "../../support/oidc-world";
import { testSql } from "../../support/sql";

let w: OidcWorld;
beforeAll(async () => {
  w = await oidcWorld();
});
afterAll(async () => {
  await w.close();
});

const userByEmail = async (tenantId: string, email: string) =>
  (await testSql(w.t.ctx).get("SELECT * FROM users WHERE tenant_id = ?1 AND email = ?2", tenantId, email)) as Record<string, unknown> | null;

describe("round trips against a real OpenID Provider (oidc-provider on loopback)", () => {
  test("start: a redirect to the provider with code, PKCE S256, state, nonce and a short-lived HttpOnly cookie", async () => {
    const res = await w.browser().app("GET", `/api/v1/auth/oauth/${w.providerA.id}/start`, "acme");
    expect(res.status).toBe(302);
    const to = new URL(locationOf(res)!);
    expect(to.origin).toBe(w.op.issuer);
    const q = Object.fromEntries(to.searchParams);
    expect(q).toMatchObject({ client_id: "acme-app", response_type: "code", code_challenge_method: "S256", redirect_uri: "http://acme.localhost:8000/api/v1/auth/oauth/callback" });
    expect(q.scope).toContain("openid");
    // The state names the organization, then 256 random bits: the callback finds the flow by (tenant, hash).
    expect(q.state).toMatch(new RegExp(`^${w.acme.tenant.id}\\.[A-Za-z0-9_-]{43}$`));
    expect(q.nonce!.length).toBeGreaterThanOrEqual(32);
    expect(q.code_challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const cookie = setCookies(res).svc_oauth!;
    expect(cookie.attrs).toMatchObject({ httponly: true, samesite: "Lax", path: "/api/v1/auth/oauth", "max-age": "600" });
    // Host-only: never shared with the other organizations of the base domain.
    expect(cookie.attrs.domain).toBeUndefined();
    // Nothing of the flow is kept in clear: the state and the browser cookie only as hashes.
    const flow = (await testSql(w.t.ctx).get("SELECT * FROM oauth_flows ORDER BY created_at DESC LIMIT 1")) as Record<string, string>;
    expect(JSON.stringify(flow)).not.toContain(q.state!);
    expect(JSON.stringify(flow)).not.toContain(cookie.value);
  });

  test("join by allowed domain: a verified example.com address becomes a member, signed in with the session cookies", async () => {
    w.op.accounts.set("joiner", { email: "Joiner@Example.com", email_verified: true });
    const browser = w.browser();
    const res = await signInVia(browser, "acme", w.providerA.id, "joiner");
    expect(res.status).toBe(302);
    expect(locationOf(res)).toBe("/");
    const cookies = setCookies(res);
    expect(cookies.svc_session?.value).toBeString();
    expect(cookies.svc_refresh?.attrs.path).toBe("/api/v1/auth");
    // The flow cookie is gone once used.
    expect(cookies.svc_oauth?.value).toBe("");
    const me = await w.t.json("GET", ME, { token: cookies.svc_session!.value });
    expect(me.body.user).toMatchObject({ email: "joiner@example.com", role: "member", email_verified: true });
    expect(me.body.tenant.subdomain).toBe("acme");
    const row = (await userByEmail(w.acme.tenant.id, "joiner@example.com"))!;
    // The standard profile, as for an invitation that names none.
    expect(row.profile_id).not.toBeNull();
    // The session list shows how it was opened.
    const sessions = await w.t.json("GET", SESSIONS, { token: cookies.svc_session!.value });
    expect(sessions.body[0].method).toBe(`oidc:${w.providerA.name}`);
    const audit = (await allAudit(w.t)).filter((a) => a.user_id === row.id).map((a) => a.action);
    expect(audit).toEqual(["oauth.joined", "login.success"]);
    // The new account has no password: no guess signs in with one (and the check does not fail).
    for (const password of ["", "AAAAAAAAAAAAAAAAAAAAAA", "correct horse battery"]) {
      const r = await w.t.json("POST", "/api/v1/auth/login", { tenant: "acme", body: { email: "joiner@example.com", password: password || "x".repeat(8) } });
      expect(r.status).toBe(401);
    }

    // Next time the identity is known: the same user, no second account.
    const again = await signInVia(w.browser(), "acme", w.providerA.id, "joiner");
    expect(locationOf(again)).toBe("/");
    const me2 = await w.t.json("GET", ME, { token: setCookies(again).svc_session!.value });
    expect(me2.body.user.id).toBe(row.id);
  });

  test("the identity is found by (issuer, subject): the provider changing its address does not change the account", async () => {
    w.op.accounts.set("mover", { email: "mover@example.com", email_verified: true });
    const first = await signInVia(w.browser(), "acme", w.providerA.id, "mover");
    const id = (await w.t.json("GET", ME, { token: setCookies(first).svc_session!.value })).body.user.id;
    w.op.accounts.set("mover", { email: "someone-else@example.com", email_verified: true });
    const second = await signInVia(w.browser(), "acme", w.providerA.id, "mover");
    expect((await w.t.json("GET", ME, { token: setCookies(second).svc_session!.value })).body.user.id).toBe(id);
  });

  test("link from the signed-in user, list, sign in with it, and unlink", async () => {
    // The admin of bolt has a password; bolt's provider is the same OP with bolt's own client.
    w.op.accounts.set("bolt-admin-at-op", { email: "boss@example.com", email_verified: true });
    const browser = w.browser();
    const token = w.bolt.access_token;
    const started = await w.t.request("POST", `${IDENTITIES}/link/${w.providerB.id}`, { token, tenant: "bolt", body: {} });
    expect(started.status).toBe(200);
    const { authorization_url } = (await started.json()) as { authorization_url: string };
    expect(new URL(authorization_url).searchParams.get("client_id")).toBe("bolt-app");
    const flowCookie = setCookies(started).svc_oauth!.value;
    const cb = await browser.authorize(authorization_url, "bolt-admin-at-op");
    const back = await w.t.request("GET", `${cb.pathname}${cb.search}`, { tenant: "bolt", cookies: { svc_oauth: flowCookie } });
    expect(back.status).toBe(302);
    expect(locationOf(back)).toBe(`/settings?linked=${w.providerB.id}`);

    const list = await w.t.json("GET", IDENTITIES, { token });
    expect(list.body).toMatchObject({ total: 1, page: 1, pages: 1 });
    expect(list.body.items[0]).toMatchObject({ provider_id: w.providerB.id, provider_name: w.providerB.name, kind: "oidc", email: "boss@example.com" });

    // Signing in through it now opens the admin's own account (not a new one).
    const signIn = await signInVia(w.browser(), "bolt", w.providerB.id, "bolt-admin-at-op");
    expect(locationOf(signIn)).toBe("/");
    expect((await w.t.json("GET", ME, { token: setCookies(signIn).svc_session!.value })).body.user.id).toBe(w.bolt.user.id);

    // The admin has a password: the identity is not their last way in.
    const gone = await w.t.request("DELETE", `${IDENTITIES}/${list.body.items[0].id}`, { token });
    expect(gone.status).toBe(204);
    expect((await w.t.json("GET", IDENTITIES, { token })).body.total).toBe(0);
    const actions = (await allAudit(w.t)).filter((a) => a.user_id === w.bolt.user.id).map((a) => a.action);
    expect(actions).toContain("identity.linked");
    expect(actions).toContain("identity.unlinked");
  });

  test("the last way to sign in cannot be unlinked: 409 last_sign_in_method", async () => {
    w.op.accounts.set("only-op", { email: "only@example.com", email_verified: true });
    const res = await signInVia(w.browser(), "acme", w.providerA.id, "only-op");
    const token = setCookies(res).svc_session!.value;
    const list = await w.t.json("GET", IDENTITIES, { token });
    const r = await w.t.json("DELETE", `${IDENTITIES}/${list.body.items[0].id}`, { token });
    expect(r.status).toBe(409);
    expect(r.body.code).toBe("last_sign_in_method");
    // Someone else's identity id is simply not found.
    const other = await w.t.json("DELETE", `${IDENTITIES}/${list.body.items[0].id}`, { token: w.acme.access_token });
    expect(other.status).toBe(404);
  });

  test("has_password on GET /auth/me agrees with the unlink rule: false after joining, true once a mailed reset link sets one", async () => {
    w.op.accounts.set("no-pass-op", { email: "nopass@example.com", email_verified: true });
    const first = await signInVia(w.browser(), "acme", w.providerA.id, "no-pass-op");
    const token = setCookies(first).svc_session!.value;
    expect((await w.t.json("GET", ME, { token })).body.has_password).toBe(false);
    const id = (await w.t.json("GET", IDENTITIES, { token })).body.items[0].id;
    expect((await w.t.json("DELETE", `${IDENTITIES}/${id}`, { token })).body.code).toBe("last_sign_in_method");
    // An account with a password says so.
    expect((await w.t.json("GET", ME, { token: w.acme.access_token })).body.has_password).toBe(true);

    // "Set a password": the forgotten-password mail to the account's own address.
    expect((await askReset(w.t, "nopass@example.com", { tenant: "acme" })).status).toBe(202);
    const reset = await w.t.json("POST", RESET, { body: { token: await newestTokenOf(w.t, "password_reset"), password: "a password of my own" } });
    expect(reset.status).toBe(200);
    // The reset ended every session: back in through the provider, now with a password.
    const again = await signInVia(w.browser(), "acme", w.providerA.id, "no-pass-op");
    const token2 = setCookies(again).svc_session!.value;
    expect((await w.t.json("GET", ME, { token: token2 })).body.has_password).toBe(true);
    expect((await w.t.json("POST", "/api/v1/auth/login", { tenant: "acme", body: { email: "nopass@example.com", password: "a password of my own" } })).status).toBe(200);
    // And the identity is no longer the last way in.
    expect((await w.t.request("DELETE", `${IDENTITIES}/${id}`, { token: token2 })).status).toBe(204);
  });

  test("2FA after the provider: the callback sends the browser to the 2FA step, the temp_token in the fragment; no session before the code", async () => {
    w.op.accounts.set("careful", { email: "careful@example.com", email_verified: true });
    const first = await signInVia(w.browser(), "acme", w.providerA.id, "careful");
    const token = setCookies(first).svc_session!.value;
    const { secret } = await enable(w.t, token);
    w.clock.advance(61_000);

    const res = await signInVia(w.browser(), "acme", w.providerA.id, "careful");
    expect(res.status).toBe(302);
    const location = locationOf(res)!;
    expect(location).toStartWith("/sign-in?step=2fa#temp_token=");
    expect(setCookies(res).svc_session).toBeUndefined();
    const temp = decodeURIComponent(location.slice(location.indexOf("#temp_token=") + "#temp_token=".length));
    const done = await verify(w.t, temp, appCode(secret, w.clock.now()));
    expect(done.status).toBe(200);
    expect(setCookies(done.res).svc_session?.value).toBe(done.body.access_token);
    const challenge = (await allAudit(w.t)).findLast((a) => a.action === "2fa.challenge")!;
    expect(JSON.parse(challenge.detail as string).method).toBe(`oidc:${w.providerA.name}`);
    // The session says both factors: the provider, then the code.
    const sessions = await w.t.json("GET", SESSIONS, { token: done.body.access_token });
    expect(sessions.body.find((s: { current: boolean }) => s.current).method).toBe(`oidc:${w.providerA.name}+2fa`);
    const success = (await allAudit(w.t)).findLast((a) => a.action === "login.success")!;
    expect(JSON.parse(success.detail as string)).toMatchObject({ method: "2fa", first_factor: `oidc:${w.providerA.name}` });
  });

  test("linking refuses an unverified address, and an identity already linked to another member", async () => {
    const link = async (token: string, account: string) => {
      const started = await w.t.request("POST", `${IDENTITIES}/link/${w.providerA.id}`, { token, tenant: "acme", body: {} });
      expect(started.status).toBe(200);
      const { authorization_url } = (await started.json()) as { authorization_url: string };
      const cb = await w.browser().authorize(authorization_url, account);
      return w.t.request("GET", `${cb.pathname}${cb.search}`, { tenant: "acme", cookies: { svc_oauth: setCookies(started).svc_oauth!.value } });
    };
    w.op.accounts.set("unverified-link", { email: "unverified-link@example.com", email_verified: false });
    expect(locationOf(await link(w.acme.access_token, "unverified-link"))).toBe("/settings?error=oauth_email_unverified");
    // "joiner" joined acme earlier: its identity is another member's.
    expect(locationOf(await link(w.acme.access_token, "joiner"))).toBe("/settings?error=oauth_identity_in_use");
    expect((await w.t.json("GET", IDENTITIES, { token: w.acme.access_token })).body.total).toBe(0);
    // An unknown or another organization's provider: 404 before anything starts.
    expect((await w.t.json("POST", `${IDENTITIES}/link/${w.providerB.id}`, { token: w.acme.access_token, tenant: "acme", body: {} })).status).toBe(404);
  });

  test("an account whose own address is unverified cannot start linking (issue 16): 409 oauth_account_unverified", async () => {
    // A second organization whose admin never opened the verification mail.
    const fresh = await w.t.signup("cove");
    const provider = await addProvider(w.t, fresh.access_token, { issuer: w.op.issuer, client_id: "acme-app", client_secret: "unused-secret-for-cove", allowed_domains: [], auto_join: false });
    const r = await w.t.json("POST", `${IDENTITIES}/link/${provider.id}`, { token: fresh.access_token, tenant: "cove", body: {} });
    expect(r.status).toBe(409);
    expect(r.body.code).toBe("oauth_account_unverified");
    expect((await w.t.json("GET", IDENTITIES, { token: fresh.access_token })).body.total).toBe(0);
  });
});

