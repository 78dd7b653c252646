import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { addMember, allAudit, clockedApp, login } from "../support";
import { type TestApp, testApp } from "../../helpers";
import { noteSecret } from "../../security/ledger";
import { testSql } from "../../support/sql";

const PROVIDERS = "/api/v1/auth/providers";
const SECRET = `a-client-secret-${crypto.randomUUID()}`;
noteSecret("oidc client secret", SECRET);

let t: TestApp;
let org: Awaited<ReturnType<TestApp["signup"]>>;
beforeAll(async () => {
  t = testApp();
  org = await t.signup("acme");
});
afterAll(() => t.close());

const body = (extra: Record<string, unknown> = {}) => ({
  kind: "oidc",
  name: "Okta",
  issuer: "https://login.example.com/",
  client_id: "client-1",
  client_secret: SECRET,
  allowed_domains: ["Example.com", "example.com", "corp.example.com"],
  auto_join: true,
  enabled: true,
  ...extra,
});

describe("the admin API of identity providers", () => {
  let id: string;

  test("POST answers 201 with the provider and its redirect URI, never the secret, which is stored sealed", async () => {
    const r = await t.json("POST", PROVIDERS, { token: org.access_token, body: body() });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body).sort()).toEqual(["allowed_domains", "auto_join", "client_id", "created_at", "default_profile_id", "enabled", "id", "issuer", "kind", "name", "redirect_uri"]);
    expect(r.body).toMatchObject({
      kind: "oidc",
      name: "Okta",
      issuer: "https://login.example.com",
      allowed_domains: ["example.com", "corp.example.com"],
      auto_join: true,
      enabled: true,
      default_profile_id: null,
      redirect_uri: "http://acme.localhost:8000/api/v1/auth/oauth/callback",
    });
    id = r.body.id;
    const row = (await testSql(t.ctx).get("SELECT client_secret_sealed FROM identity_providers WHERE id = ?1", id)) as { client_secret_sealed: string };
    expect(row.client_secret_sealed).not.toContain(SECRET);
    expect(row.client_secret_sealed).toStartWith("v1.");
    expect(JSON.stringify((await allAudit(t)))).not.toContain(SECRET);
  });

  test("GET lists them in a page; PATCH changes some fields and keeps the secret when none is given; the public list shows enabled ones by name", async () => {
    const list = await t.json("GET", PROVIDERS, { token: org.access_token });
    expect(list.body).toMatchObject({ total: 1, page: 1, size: 20, pages: 1 });
    expect(list.body.items[0].id).toBe(id);
    const sealed = async () => (await testSql(t.ctx).get<{ s: string }>("SELECT client_secret_sealed AS s FROM identity_providers WHERE id = ?1", id))!.s;
    const before = await sealed();
    const p = await t.json("PATCH", `${PROVIDERS}/${id}`, { token: org.access_token, body: { name: "Okta SSO", enabled: false } });
    expect(p.status).toBe(200);
    expect(p.body).toMatchObject({ name: "Okta SSO", enabled: false, client_id: "client-1" });
    expect(await sealed()).toBe(before);
    expect((await t.json("GET", `${PROVIDERS}/public`, { tenant: "acme" })).body).toEqual([]);
    await t.json("PATCH", `${PROVIDERS}/${id}`, { token: org.access_token, body: { enabled: true, client_secret: `${SECRET}-2` } });
    noteSecret("oidc client secret", `${SECRET}-2`);
    expect(await sealed()).not.toBe(before);
    expect((await t.json("GET", `${PROVIDERS}/public`, { tenant: "acme" })).body).toEqual([{ id, name: "Okta SSO", kind: "oidc" }]);
  });

  test("the public list needs an organization", async () => {
    const r = await t.json("GET", `${PROVIDERS}/public`);
    expect(r.status).toBe(400);
    expect(r.body.code).toBe("tenant_required");
  });

  test("bad input: an http issuer (outside the test-only loopback switch), an issuer for google, none for oidc, a taken name, an unknown profile", async () => {
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [body({ name: "a", issuer: "http://127.0.0.1:9/" }), 422, "issuer"],
      [body({ name: "b", issuer: "not a url" }), 422, "issuer"],
      [body({ name: "c", issuer: "https://x.example.com/?q=1" }), 422, "issuer"],
      [body({ name: "d", kind: "google", issuer: "https://accounts.google.com" }), 422, "issuer"],
      [body({ name: "e", issuer: null }), 422, "issuer"],
      [body({ name: "f", allowed_domains: ["not a domain"] }), 422, "allowed_domains"],
      [body({ name: "g", kind: "facebook" }), 422, "kind"],
    ];
    for (const [b, status, field] of cases) {
      const r = await t.json("POST", PROVIDERS, { token: org.access_token, body: b });
      expect({ name: b.name, status: r.status }).toEqual({ name: b.name, status });
      expect(JSON.stringify(r.body.detail)).toContain(field);
    }
    const taken = await t.json("POST", PROVIDERS, { token: org.access_token, body: body({ name: "Okta SSO" }) });
    expect({ status: taken.status, code: taken.body.code }).toEqual({ status: 409, code: "provider_name_taken" });
    const profile = await t.json("POST", PROVIDERS, { token: org.access_token, body: body({ name: "h", default_profile_id: "nope" }) });
    expect(profile.status).toBe(404);
  });

  test("google, microsoft and github have fixed issuers", async () => {
    for (const kind of ["google", "microsoft", "github"]) {
      const r = await t.json("POST", PROVIDERS, { token: org.access_token, body: body({ kind, name: kind, issuer: undefined }) });
      expect({ kind, status: r.status, issuer: r.body.issuer }).toEqual({ kind, status: 201, issuer: null });
    }
  });

  test("members may not read or change providers", async () => {
    const m = await addMember(t, org.tenant.id, "member@acme.test", "member password 1");
    const token = (await login(t, m.email, m.password)).body.access_token;
    expect((await t.json("GET", PROVIDERS, { token })).status).toBe(403);
    expect((await t.json("POST", PROVIDERS, { token, body: body({ name: "x" }) })).status).toBe(403);
    expect((await t.json("PATCH", `${PROVIDERS}/${id}`, { token, body: { enabled: false } })).status).toBe(403);
    expect((await t.json("DELETE", `${PROVIDERS}/${id}`, { token })).status).toBe(403);
  });

  test("DELETE answers 204, then 404; it is audited", async () => {
    expect((await t.request("DELETE", `${PROVIDERS}/${id}`, { token: org.access_token })).status).toBe(204);
    expect((await t.json("DELETE", `${PROVIDERS}/${id}`, { token: org.access_token })).status).toBe(404);
    const actions = (await allAudit(t)).map((a) => a.action);
    for (const a of ["identity_provider.created", "identity_provider.updated", "identity_provider.deleted"]) expect(actions).toContain(a);
  });
});

test("starts are limited per address: 30 a minute, then the sign-in page says so", async () => {
  const answers: string[] = [];
  for (let i = 0; i < 31; i++) answers.push((await t.request("GET", "/api/v1/auth/oauth/no-such-provider/start", { tenant: "acme" })).headers.get("location") ?? "");
  expect(new Set(answers.slice(0, 30))).toEqual(new Set(["/sign-in?error=oauth_provider_unavailable"]));
  expect(answers[30]).toBe("/sign-in?error=oauth_rate_limited");
  const last = (await allAudit(t)).at(-1)!;
  expect(last.action).toBe("oauth.failure");
  expect(JSON.parse(last.detail as string)).toMatchObject({ code: "oauth_rate_limited", provider_id: null });
});

test("adding, changing and removing a provider needs a recent sign-in (403 reauthentication_required); POST /auth/reauthenticate renews it; reading does not", async () => {
  const { t: ct, clock } = clockedApp({ env: { SUITE_REAUTH_WINDOW: "60" } });
  try {
    const admin = await ct.signup("acme");
    const needsReauth = (r: { status: number; body: { code?: string } }) => expect({ status: r.status, code: r.body.code }).toEqual({ status: 403, code: "reauthentication_required" });
    const token = admin.access_token;
    // Signup is a password proof: a fresh session may add one.
    const made = await ct.json("POST", PROVIDERS, { token, body: body() });
    expect(made.status).toBe(201);
    clock.advance(60_001);
    needsReauth(await ct.json("POST", PROVIDERS, { token, body: body({ name: "Second" }) }));
    needsReauth(await ct.json("PATCH", `${PROVIDERS}/${made.body.id}`, { token, body: { enabled: false } }));
    needsReauth(await ct.json("DELETE", `${PROVIDERS}/${made.body.id}`, { token }));
    // Reading is not a change; and nothing changed.
    const list = await ct.json("GET", PROVIDERS, { token });
    expect(list.status).toBe(200);
    expect(list.body.items.map((p: { name: string; enabled: boolean }) => [p.name, p.enabled])).toEqual([["Okta", true]]);
    // Bad input is still a 422 before the step-up question (the body is read first).
    expect((await ct.json("POST", PROVIDERS, { token, body: { kind: "nope" } })).status).toBe(422);
    // A member with a stale session is refused for being a member (the step-up is no way around it).
    const m = await addMember(ct, admin.tenant.id, "mia@acme.test", "member password 1");
    const memberToken = (await login(ct, m.email, m.password)).body.access_token;
    clock.advance(60_001);
    const refused = await ct.json("POST", PROVIDERS, { token: memberToken, body: body({ name: "Mine" }) });
    expect(refused.status).toBe(403);
    expect(refused.body.code).not.toBe("reauthentication_required");

    expect((await ct.json("POST", "/api/v1/auth/reauthenticate", { token, body: { password: admin.password } })).status).toBe(200);
    expect((await ct.json("PATCH", `${PROVIDERS}/${made.body.id}`, { token, body: { enabled: false } })).body.enabled).toBe(false);
    expect((await ct.json("POST", PROVIDERS, { token, body: body({ name: "Second" }) })).status).toBe(201);
    expect((await ct.request("DELETE", `${PROVIDERS}/${made.body.id}`, { token })).status).toBe(204);
    const actions = (await allAudit(ct)).map((a) => a.action);
    expect(actions.filter((a) => String(a).startsWith("identity_provider."))).toEqual(["identity_provider.created", "identity_provider.updated", "identity_provider.created", "identity_provider.deleted"]);
  } finally {
    ct.close();
  }
});
